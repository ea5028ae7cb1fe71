#!/usr/bin/env python3
"""The WASI test suite's preview-1 tests as batches: each test runs as one
batch of N instances, every instance in a directory of its own (a copy of
the test's root, preopened writable as "/"), its stdout in a file of its
own; each instance must end with the test's exit code and stdout. The
expectations are the suite's (X.json beside X.wasm, read as its runner
reads them: args, env, root, exit_code, stdout).

usage: batch.py WORK SUITE_DIR... -- WASMWARP_RUN...
  WORK:      a scratch folder (emptied first)
  SUITE_DIR: folders of X.wasm tests (tests/*/testsuite/wasm32-wasip1)
  WASMWARP_RUN: the command that runs a module, e.g. build/wasmwarp run --backend cpu
env: WASI_BATCH_INSTANCES (default 3), WASMWARP_TIMEOUT (seconds per batch, default 300)
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def run_test(wasm: Path, work: Path, runner: list, n: int, timeout: float) -> str:
    """'' when every instance passed, else why not."""
    cfg_path = wasm.with_suffix(".json")
    cfg = json.loads(cfg_path.read_text()) if cfg_path.exists() else {}
    w = work / wasm.stem
    (w / "out").mkdir(parents=True)
    argv = list(runner) + ["-q", "-n", str(n), "--output", str(w / "rows.json"), "--stdout", str(w / "out/{i}.txt"),
                           "--stderr", str(w / "out/{i}.err")]
    for k, v in cfg.get("env", {}).items():
        argv += ["--env", f"{k}={v}"]
    if cfg.get("root"):
        for i in range(n):
            shutil.copytree(wasm.parent / cfg["root"], w / str(i), symlinks=True)
        argv += ["--dir-rw", f"{w}/{{i}}::/"]
    argv += [str(wasm)] + cfg.get("args", [])
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s"
    try:
        rows = json.loads((w / "rows.json").read_text())
    except (OSError, ValueError):
        return f"no rows (exit {p.returncode}): {p.stderr.strip()[-400:]}"
    if len(rows) != n:
        return f"{len(rows)} rows for {n} instances"
    want = cfg.get("exit_code", 0)
    for r in rows:
        i = r["instance"]
        err = (w / f"out/{i}.err").read_text(errors="replace").strip()[-400:]
        if r["trap"] is not None:
            return f"instance {i} trapped: {r['trap']}; stderr: {err}"
        if r["results"] != [want]:
            return f"instance {i} exited with {r['results']}, expected {want}; stderr: {err}"
        if "stdout" in cfg:
            got = (w / f"out/{i}.txt").read_text(errors="replace")
            if got != cfg["stdout"]:
                return f"instance {i} wrote {got!r} on stdout, expected {cfg['stdout']!r}"
    return ""


def main() -> int:
    if "--" not in sys.argv or len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    cut = sys.argv.index("--")
    work, suites, runner = Path(sys.argv[1]), [Path(s) for s in sys.argv[2:cut]], sys.argv[cut + 1:]
    n = int(os.getenv("WASI_BATCH_INSTANCES", "3"))
    timeout = float(os.getenv("WASMWARP_TIMEOUT", "300"))
    shutil.rmtree(work, ignore_errors=True)
    failed, total = [], 0
    for suite in suites:
        for wasm in sorted(suite.glob("*.wasm")):
            total += 1
            why = run_test(wasm, work / suite.parent.parent.name, runner, n, timeout)
            if why:
                failed.append(f"{suite.parent.parent.name}/{wasm.stem}")
                print(f"FAIL {failed[-1]}: {' | '.join(why.split(chr(10)))}")
    print(f"batches of {n}: {total - len(failed)} of {total} tests passed in every instance")
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
