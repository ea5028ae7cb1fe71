#!/usr/bin/env bash
# hash-wasm's sha256 and crc32 modules (npm hash-wasm 4.13.0, fetched by
# fetch.sh) on this machine's CPU: a wasmwarp batch on the compiled CPU
# tier (crc32 with --init, so its table is built once), against node
# running the same module in one instance in a loop over the same 64-byte
# messages. Digests are compared byte for byte; the figure is instances per
# second per thread. Target (issue 9): wasmwarp per thread >= node.
# usage: bench/hashwasm/run-cpu.sh [WASMWARP] [WORKDIR]   env: N (messages, default 1000000),
#   REPS (alternating runs of each side, default 5; the medians are compared)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ww=${1:-$root/build/wasmwarp}
work=${2:-/tmp/wasmwarp-hashwasm-cpu}
n=${N:-1000000}
reps=${REPS:-5}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
threads=$(nproc)
mkdir -p "$work"
bash "$root/bench/hashwasm/fetch.sh" "$work" >/dev/null
head -c $((64 * n)) /dev/urandom >"$work/messages.bin"
poly=3988292384
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $threads threads; $n messages of 64 bytes"
printf '%-8s %16s %16s %16s %8s  %s\n' module "wasmwarp/s" "per thread/s" "node/s" ratio digests
fail=0
for name in sha256 crc32; do
  wasm=$work/hashwasm_$name.wasm
  if [[ $name == sha256 ]]; then dig=32; param=256; init=(); ninit=(); else dig=4; param=$poly; init=(--init "Hash_Init:$poly"); ninit=("$poly"); fi
  batch=(run --backend cpu --tier compiled -q "${init[@]}" --mem-in Hash_GetBuffer="$work/messages.bin"
    --mem-in-size 64 --mem-out Hash_GetBuffer:$dig="$work/$name.ww.bin" --invoke Hash_Calculate)
  # A one-instance run first puts the batch's compiled code in the cache,
  # as node's figure leaves out its compilation.
  "$ww" "${batch[@]}" -n 1 "$wasm" 64 "$param"
  # Alternating runs, the median of each side: on a shared VM single runs
  # of either side varied by 1.5x.
  rates=() nrates=()
  for ((r = 0; r < reps; ++r)); do
    "$ww" "${batch[@]}" -n "$n" --stats "$work/$name.json" "$wasm" 64 "$param"
    rates+=("$(grep -oE '"completed_per_s": *[0-9.eE+]+' "$work/$name.json" | grep -oE '[0-9.eE+]+$')")
    nrates+=("$(node "$root/bench/hashwasm/node-loop.mjs" "$wasm" "$work/messages.bin" 64 $dig "$param" "${ninit[@]}" \
      "$work/$name.node.bin" | grep -oE '[0-9]+$')")
  done
  rate=$(median "${rates[@]}")
  nrate=$(median "${nrates[@]}")
  same=identical
  cmp -s "$work/$name.ww.bin" "$work/$name.node.bin" || { same=DIFFER; fail=1; }
  per=$(awk -v r="$rate" -v t="$threads" 'BEGIN { printf "%.0f", r / t }')
  printf '%-8s %16.0f %16s %16s %8s  %s\n' "$name" "$rate" "$per" "$nrate" \
    "$(awk -v a="$per" -v b="$nrate" 'BEGIN { printf "%.2f", a / b }')" "$same"
done
echo "(medians of $reps alternating runs; wasmwarp: the batch's completed instances per second (--stats), compiled CPU tier, $threads threads;"
echo " per thread = that / $threads; node: one instance, a loop over the messages; ratio = per thread / node)"
exit $fail
