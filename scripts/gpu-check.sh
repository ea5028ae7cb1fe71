#!/usr/bin/env bash
# On the GPU machine, in one call: the GPU unit tests, the ten guest programs
# on both backends, the spec suite on the GPU backend, the randomized
# CPU/GPU differential test, the memory-layout comparison, start-up latency
# and the benchmarks. Everything goes to ./gpu-check-out (or GPU_CHECK_DIR);
# the main logs are also copied to $OUT when it is set (the device tool
# returns at most 8 files). A short table is printed last.
# usage: scripts/gpu-check.sh [BUNDLE]   (made here by scripts/gpu-prepare.sh)
#   env PARTS: which parts run [unit programs spec diff startup bench]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
B=$(realpath "${1:-$root/.device-build}")
O=${GPU_CHECK_DIR:-$PWD/gpu-check-out}
mkdir -p "$O"
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
W=$B/wasmwarp
G=$B/guests/rust
rows=()
row() { rows+=("$(printf '%-34s %s' "$1" "$2")"); }
parts=" ${PARTS:-unit programs spec diff startup bench} "
want() { [[ $parts == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$O/device.txt"

# 1. GPU unit tests.
if want unit; then
  "$B/ww_test_gpu" >"$O/gpu-unit.log" 2>&1
  row "gpu unit tests" "$(grep -E '^\[  (PASSED|FAILED) ' "$O/gpu-unit.log" | tr '\n' ' ')"
fi

if want programs; then
# 2. The ten programs of the design on both backends.
ok=0; bad=0
while read -r prog want args; do
  g=$("$W" run --backend gpu --invoke main "$G/$prog.wasm" $args 2>&1)
  c=$("$W" run --backend cpu --invoke main "$G/$prog.wasm" $args 2>&1)
  if [[ $g == "$want" && $c == "$want" ]]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "MISMATCH $prog: gpu=$g cpu=$c want=$want"; fi
done >"$O/programs.log" <<'LIST'
01_helper_function 25 3
02_two_helpers 20 3
03_recursive_factorial 120 5
06_nested_calls 13 10
07_three_parameters 50 0 100 50
08_callee_locals 159 5
09_mutual_recursion 7 5
10_call_chain 8 0
LIST
"$W" run --backend gpu -q -n 100000 --output "$O/tid.csv" --invoke main "$G/04_thread_id.wasm" >>"$O/programs.log" 2>&1
if awk -F, 'NR > 1 && $1 != $2 { bad = 1 } END { exit bad }' "$O/tid.csv"; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "MISMATCH thread ids" >>"$O/programs.log"; fi
"$W" run --backend gpu -q -n 800 --image 800x1="$O/grad-gpu.png" --invoke main "$G/05_pixel_output.wasm" 1 >/dev/null 2>>"$O/programs.log"
"$W" run --backend cpu -q -n 800 --image 800x1="$O/grad-cpu.png" --invoke main "$G/05_pixel_output.wasm" 1 >/dev/null 2>>"$O/programs.log"
if cmp -s "$O/grad-gpu.png" "$O/grad-cpu.png"; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "MISMATCH gradient png" >>"$O/programs.log"; fi
row "ten programs (gpu = cpu = answer)" "$ok passed, $bad failed"

fi

if want spec; then
# 3. The spec suite on the GPU backend.
"$B/ww-spectest" --backend gpu --expected-failures "$B/expected-failures-gpu.txt" "$B"/spec/*.json >"$O/spec-gpu.log" 2>&1
row "spec suite, gpu backend" "$(tail -n 1 "$O/spec-gpu.log")"
fi

if want diff; then
# 4. Randomized differential test, CPU vs GPU.
"$B/ww-difftest" "$B"/spec/*.json >"$O/difftest.log" 2>&1
row "differential cpu/gpu" "$(tail -n 1 "$O/difftest.log")"
fi

if want startup; then
# 5. Start-up: command start to first result, small module, GPU backend.
t0=$(date +%s.%N)
"$W" run --backend gpu --invoke main "$G/01_helper_function.wasm" 3 >/dev/null 2>&1
t1=$(date +%s.%N)
row "start to first result (gpu)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }') ms"
fi

if want bench; then
# 6. Benchmarks with the default (interleaved) memory layout, then the GPU
# runs again with the contiguous layout for the comparison.
BUILD_DIR=$B/bench bash "$root/bench/gpu/run.sh" "$W" "$O/bench-table.txt" "$O/bench-work" >"$O/bench.log" 2>&1
row "benchmarks (interleaved)" "exit $? (table below)"
GPU_LAYOUT=contiguous CPU_DIV=100 BUILD_DIR=$B/bench bash "$root/bench/gpu/run.sh" "$W" \
  "$O/bench-table-contiguous.txt" "$O/bench-work-contiguous" >>"$O/bench.log" 2>&1
row "benchmarks (contiguous)" "exit $? (table below)"
fi

{
  echo
  echo "== gpu-check summary ($(cat "$O/device.txt"), $(date -u +%F))"
  printf '%s\n' "${rows[@]}"
  [[ -f $O/bench-table.txt ]] && { echo "-- interleaved layout"; cat "$O/bench-table.txt"; }
  [[ -f $O/bench-table-contiguous.txt ]] && { echo "-- contiguous layout"; cat "$O/bench-table-contiguous.txt"; }
} | tee "$O/summary.txt"
if [[ -n ${OUT:-} ]]; then
  cp "$O"/{summary.txt,gpu-unit.log,programs.log,spec-gpu.log,difftest.log,bench.log} "$OUT/" 2>/dev/null
fi
