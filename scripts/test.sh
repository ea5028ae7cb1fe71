#!/usr/bin/env bash
# Setup + build, then every test: unit tests, the spec suite, the CLI tests
# and the guest programs (ctest), and a bounded fuzzing run (fuzz/run.sh).
#   env: WW_FUZZ_SECONDS=n (default 120; 0 skips fuzzing)  WW_JOBS=n
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${WW_BUILD_DIR:-$root/build}
jobs=${WW_JOBS:-$(nproc)}
bash "$root/scripts/setup.sh"

status=0
echo "== ctest"
ctest --test-dir "$build" --output-on-failure -j "$jobs" || status=1

secs=${WW_FUZZ_SECONDS:-120}
if ((secs > 0)); then
  echo "== fuzz (${secs}s)"
  WW_JOBS=$jobs bash "$root/fuzz/run.sh" "$secs" || status=1
fi

if ((status)); then echo "test.sh: FAILED" >&2; else echo "test.sh: all passed"; fi
exit $status
