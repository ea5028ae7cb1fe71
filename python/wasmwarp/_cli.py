"""The `wasmwarp` command that pip installs: the package's own binary."""
import os
import pathlib
import sys


def main():
    exe = pathlib.Path(__file__).resolve().parent / "bin" / "wasmwarp"
    if not exe.exists():
        sys.exit(f"wasmwarp: error: the package has no command at {exe} (reinstall it with pip)")
    os.execv(str(exe), ["wasmwarp"] + sys.argv[1:])
