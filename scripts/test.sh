#!/usr/bin/env bash
# Setup + build, then every test: unit tests, the spec suite, the CLI tests
# and the guest programs (ctest), the build without CUDA, and a bounded
# fuzzing run (fuzz/run.sh).
#   env: WW_FUZZ_SECONDS=n (default 120; 0 skips fuzzing)  WW_JOBS=n
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${WW_BUILD_DIR:-$root/build}
jobs=${WW_JOBS:-$(nproc)}
bash "$root/scripts/setup.sh"

status=0
echo "== ctest"
ctest --test-dir "$build" --output-on-failure -j "$jobs" || status=1

# The build without CUDA (WW_CUDA=OFF, a machine without nvcc): its stub
# GPU backend links and the binary runs on the CPU; nothing else builds it.
echo "== build without CUDA"
nocuda=$build-nocuda
mkdir -p "$nocuda"
if cmake -S "$root" -B "$nocuda" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWW_CUDA=OFF -DWW_BUILD_TESTS=OFF \
  >"$nocuda/build.log" 2>&1 && ninja -C "$nocuda" -j "$jobs" wasmwarp >>"$nocuda/build.log" 2>&1; then
  out_rc=0 gpu_rc=0
  out=$("$nocuda/wasmwarp" run -n 4 --output - --invoke probe "$root/bench/scale/dirty.wat" @index 2>&1) || out_rc=$?
  gpu=$("$nocuda/wasmwarp" run --backend gpu -n 4 --invoke probe "$root/bench/scale/dirty.wat" @index 2>&1) ||
    gpu_rc=$?
  if [[ $out_rc == 0 && $(grep -c $'\t45$' <<<"$out") == 4 && $out == *"built without CUDA support"* && $gpu_rc == 2 &&
    $gpu == *"error: the GPU backend was asked for: this wasmwarp was built without CUDA support"* ]]; then
    echo "without CUDA: built, runs on the CPU, refuses --backend gpu with its reason"
  else
    printf 'without CUDA: unexpected output\n%s (exit %s)\n%s (exit %s)\n' "$out" "$out_rc" "$gpu" "$gpu_rc"
    status=1
  fi
else
  tail -n 20 "$nocuda/build.log"
  status=1
fi

secs=${WW_FUZZ_SECONDS:-120}
if ((secs > 0)); then
  echo "== fuzz (${secs}s)"
  WW_JOBS=$jobs bash "$root/fuzz/run.sh" "$secs" || status=1
fi

if ((status)); then echo "test.sh: FAILED" >&2; else echo "test.sh: all passed"; fi
exit $status
