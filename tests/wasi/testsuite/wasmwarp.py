# wasmwarp's runtime adapter for the WASI test suite's own runner
# (WebAssembly/wasi-testsuite, test-runner/; doc/adapters.md says what an
# adapter defines). The runner loads this file as a module and runs each
# test as the command compute_argv returns.
#
# env: WASMWARP  the binary and the options of `run` to test with, e.g.
#                "build/wasmwarp run --backend cpu --tier compiled"
#                (default: "wasmwarp run")
#      WASMWARP_TIMEOUT  seconds per test (default 120: the compiled tier
#                compiles each test program once, on its first run)
import os
import shlex
import subprocess
from typing import Dict, List, Optional, Tuple

WASMWARP = shlex.split(os.getenv("WASMWARP", "wasmwarp run"))


def get_name() -> str:
    return "wasmwarp"


def get_version() -> str:
    out = subprocess.run(WASMWARP[:1] + ["--version"], encoding="UTF-8", capture_output=True, check=True)
    return out.stdout.split()[-1]


def get_wasi_versions() -> List[str]:
    return ["wasm32-wasip1"]


def get_wasi_worlds() -> List[str]:
    return ["wasi:cli/command"]


def get_timeout_seconds() -> float:
    return float(os.getenv("WASMWARP_TIMEOUT", "120"))


def compute_argv(test_path: str, args_env_root: Tuple[List[str], Dict[str, str], Optional[str]],
                 proposals: List[str], wasi_world: str, wasi_version: str) -> List[str]:
    args, env, root = args_env_root
    argv = list(WASMWARP)
    for k, v in env.items():
        argv += ["--env", f"{k}={v}"]
    # The tests create, write and remove files beneath their root.
    if root:
        argv += ["--dir-rw", f"{root}::/"]
    # Everything after the module is the program's, whatever it looks like.
    return argv + [test_path] + list(args)
