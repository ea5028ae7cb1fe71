import os
import pathlib
import subprocess

import pytest

HERE = pathlib.Path(__file__).parent


@pytest.fixture(scope="session")
def wasm(tmp_path_factory):
    """Builds tests/*.wat with wabt's wat2wasm (or takes them from
    $WW_TEST_WASM_DIR, built beforehand for a machine without wabt);
    returns a name -> path map."""
    prebuilt = os.environ.get("WW_TEST_WASM_DIR")
    out = pathlib.Path(prebuilt) if prebuilt else tmp_path_factory.mktemp("wasm")
    paths = {}
    for wat in HERE.glob("*.wat"):
        dst = out / (wat.stem + ".wasm")
        if not prebuilt:
            subprocess.run([os.environ.get("WAT2WASM", "wat2wasm"), str(wat), "-o", str(dst)], check=True)
        paths[wat.stem] = dst
    return paths
