#!/usr/bin/env bash
# Setup + build, then every test: unit tests, the spec suite, the CLI tests
# and the guest programs (ctest), the build without CUDA, the unit tests
# under AddressSanitizer and UBSan and the tests of the host's threads
# under ThreadSanitizer, the tree's formatting, and a bounded fuzzing run
# (fuzz/run.sh).
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

# The unit tests built once with sanitizers, without CUDA (the GPU's tests
# skip on a machine without a GPU; compute-sanitizer covers them on the GPU
# machine, scripts/gpu-check.sh). ASan and UBSan: every unit test but the
# compiled tier's, whose time goes to the host compiler it runs (the code
# generator's tests, ww_test_golden, run here). TSan: the tests that start
# threads of the host (the copy workers, the batch engine's, the API's).
sanitized() {  # NAME SANITIZERS TARGETS...
  local dir=$build-$1 sanitizers=$2 t rc=0
  shift 2
  echo "== unit tests with -fsanitize=$sanitizers"
  mkdir -p "$dir"
  if ! { cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize "-DCMAKE_C_FLAGS_SANITIZE=-O1 -g1" \
    "-DCMAKE_CXX_FLAGS_SANITIZE=-O1 -g1" -DWW_SANITIZE="$sanitizers" -DWW_CUDA=OFF >"$dir/build.log" 2>&1 &&
    ninja -C "$dir" -j "$jobs" "$@" >>"$dir/build.log" 2>&1; }; then
    tail -n 20 "$dir/build.log"
    return 1
  fi
  for t in "$@"; do
    if (cd "$root" && "$dir/tests/$t" --gtest_brief=1 >"$dir/$t.log" 2>&1); then
      echo "$t: $(grep -E '^\[  PASSED  \]' "$dir/$t.log")"
    else
      rc=1
      echo "$t: FAILED"
      grep -E 'runtime error|ERROR: |WARNING: ThreadSanitizer|^\[  FAILED  \]' "$dir/$t.log" | head -n 20
    fi
  done
  return $rc
}
unit=()
for d in "$root"/tests/unit/*/; do
  case $(basename "$d") in gpu | compiled) ;; *) unit+=("ww_test_$(basename "$d")") ;; esac
done
UBSAN_OPTIONS=print_stacktrace=1 sanitized asan address,undefined "${unit[@]}" || status=1
sanitized tsan thread ww_test_common ww_test_batch ww_test_api || status=1

# The tree follows .clang-format (Debian 12's clang-format 14).
echo "== formatting"
if (cd "$root" && git ls-files -z '*.c' '*.cc' '*.cpp' '*.h' '*.cu' '*.cuh' |
  xargs -0 clang-format --dry-run --Werror >"$build/format.log" 2>&1); then
  echo "formatting: the tree follows .clang-format"
else
  echo "formatting: these files differ from .clang-format (clang-format -i FILE):"
  grep -oE '^[^:]+\.(c|cc|cpp|h|cu|cuh):' "$build/format.log" | sort -u | head -n 20
  status=1
fi

secs=${WW_FUZZ_SECONDS:-120}
if ((secs > 0)); then
  echo "== fuzz (${secs}s)"
  WW_JOBS=$jobs bash "$root/fuzz/run.sh" "$secs" || status=1
fi

if ((status)); then echo "test.sh: FAILED" >&2; else echo "test.sh: all passed"; fi
exit $status
