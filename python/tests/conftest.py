import os
import pathlib
import subprocess

import pytest

HERE = pathlib.Path(__file__).parent


@pytest.fixture(scope="session")
def wasm(tmp_path_factory):
    """Builds tests/*.wat with wabt's wat2wasm; returns a name -> path map."""
    out = tmp_path_factory.mktemp("wasm")
    paths = {}
    for wat in HERE.glob("*.wat"):
        dst = out / (wat.stem + ".wasm")
        subprocess.run([os.environ.get("WAT2WASM", "wat2wasm"), str(wat), "-o", str(dst)], check=True)
        paths[wat.stem] = dst
    return paths
