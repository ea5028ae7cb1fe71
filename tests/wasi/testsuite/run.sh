#!/usr/bin/env bash
# The WASI test suite (WebAssembly/wasi-testsuite, preview 1: 72 tests in
# C, Rust and AssemblyScript) on one wasmwarp backend and tier: through the
# suite's own runner with wasmwarp's adapter (wasmwarp.py beside this
# file), each test a process of its own, then as batches (batch.py: each
# test one batch, every instance in a directory of its own). The suite is
# read-only where it is shared: its tests and runner are copied into WORK,
# where the tests write.
# usage: tests/wasi/testsuite/run.sh WORK WASMWARP [OPTIONS OF run...]
#   e.g. run.sh /tmp/wts build/wasmwarp --backend cpu --tier compiled
# env: WASI_TESTSUITE (default: ../shared/wasi-testsuite beside the
#      repository), WASMWARP_TIMEOUT (seconds per test, default 120),
#      WASI_BATCH_INSTANCES (default 3)
# Exit: 0 all passed, 1 a failure, 77 skipped (no suite, or no
# python3-colorama, which the runner needs for the preview-1 tests).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:?usage: run.sh WORK WASMWARP [OPTIONS OF run...]}
ww=$(realpath "${2:?usage: run.sh WORK WASMWARP [OPTIONS OF run...]}")
shift 2
suite=${WASI_TESTSUITE:-$here/../../../../shared/wasi-testsuite}
[[ -d $suite/test-runner ]] || { echo "wasi-testsuite: not found at $suite; skipped"; exit 77; }
python3 -c 'import colorama' 2>/dev/null ||
  { echo "wasi-testsuite: its runner needs python3-colorama; skipped"; exit 77; }

rm -rf "$work" && mkdir -p "$work"
cp -r "$suite/tests" "$suite/test-runner" "$work/" && chmod -R u+w "$work"
# The runner's `name in WasiVersion` needs Python 3.12 (Debian 12 has 3.11).
sed -i 's/if test_suite_path.name in WasiVersion:/if test_suite_path.name in {v.value for v in WasiVersion}:/' \
  "$work/test-runner/wasi_test_runner/test_suite_runner.py"
dirs=()
for lang in c rust assemblyscript; do dirs+=("$work/tests/$lang/testsuite/wasm32-wasip1"); done

status=0
(cd "$work/test-runner" && WASMWARP="$ww run $*" python3 -m wasi_test_runner -t "${dirs[@]}" -r "$here/wasmwarp.py" \
  --disable-colors --json-output-location "$work/single.json" >"$work/single.log" 2>&1)
if ! python3 - "$work/single.json" <<'EOF'; then
import json, sys
try:
    suites = json.load(open(sys.argv[1]))["results"]
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"the runner wrote no results ({e})")
passed = sum(s["passed"] for s in suites)
total = sum(len(s["tests"]) for s in suites)
for s in suites:
    for t in s["tests"]:
        if t["outcome"] != "pass":
            why = " | ".join(" ".join(t["failures"]).split("\n"))
            print(f"FAIL {s['name']}: {t['name']}: {why[:600]}")
print(f"single runs (the suite's runner): {passed} of {total} passed")
sys.exit(0 if passed == total and total > 0 else 1)
EOF
  status=1
  echo "(the runner's log: $work/single.log)"
fi
python3 "$here/batch.py" "$work/batch" "${dirs[@]}" -- "$ww" run "$@" || status=1
exit $status
