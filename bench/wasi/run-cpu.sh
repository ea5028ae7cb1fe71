#!/usr/bin/env bash
# A batch of a small WASI program (greet.c: an argument in, two lines out)
# on this machine's CPU: wasmwarp -n N on the compiled CPU tier over every
# core, against node running the instances one at a time in one process
# (the module compiled once). Outputs must be identical; the figure is
# instances per second (wasmwarp: the batch's completed_per_s from --stats).
# usage: bench/wasi/run-cpu.sh [WASMWARP] [WORKDIR]   env: SIZES (default "10000 100000")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ww=${1:-$here/../../build/wasmwarp}
work=${2:-/tmp/wasmwarp-wasi-bench}
mkdir -p "$work"
clang --target=wasm32-wasi -O2 -c "$here/greet.c" -o "$work/greet.o"
clang --target=wasm32-wasi -O2 "$work/greet.o" -o "$work/greet.wasm"
"$ww" run --backend cpu --tier compiled -q -n 1 "$work/greet.wasm" @index >/dev/null  # fills the code cache
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) threads"
printf '%-10s %16s %16s %10s  %s\n' instances "wasmwarp/s" "node/s" ratio outputs
fail=0
for n in ${SIZES:-10000 100000}; do
  "$ww" run --backend cpu --tier compiled -q -n "$n" --stats "$work/stats.json" "$work/greet.wasm" @index >"$work/ww.out"
  rate=$(grep -oE '"completed_per_s": *[0-9.eE+]+' "$work/stats.json" | grep -oE '[0-9.eE+]+$')
  nrate=$(node --no-warnings "$here/node-loop.mjs" "$work/greet.wasm" "$n" 2>&1 >"$work/node.out" | grep -oE '[0-9]+$')
  same=identical
  cmp -s "$work/ww.out" "$work/node.out" || { same=DIFFER; fail=1; }
  printf '%-10s %16.0f %16s %10s  %s\n' "$n" "$rate" "$nrate" "$(awk -v a="$rate" -v b="$nrate" 'BEGIN { printf "%.1f", a / b }')" "$same"
done
exit $fail
