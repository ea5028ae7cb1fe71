#!/usr/bin/env bash
# A/B of one GPU tier's kernels between two wasmwarp builds (a change to the
# interpreter kernel against the commit before it): the same batches run
# alternately on A and B, REPEAT times each, and the table gives each
# build's median kernel time (--stats phases_ms.kernel), the ratio B/A and
# whether both wrote the same results. Ratios come from one run on one
# machine, as docs/performance.md asks.
#
# usage: bench/gpu/kernel-ab.sh WASMWARP_A WASMWARP_B BENCH_BUILD_DIR [TIER]
#   BENCH_BUILD_DIR: bench/gpu/build.sh's output (gpu_ref, the guests,
#   stack_mix.wasm), as scripts/gpu-prepare.sh makes it. TIER: interp.
# Env: REPEAT [5], ROWS (names to run, default all).
set -uo pipefail
A=${1:?usage: kernel-ab.sh A B BENCH_BUILD_DIR [TIER]}
B=${2:?}
N=${3:?}
tier=${4:-interp}
repeat=${REPEAT:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ww-kernel-ab.XXXXXX")
"$N/gpu_ref" gen-messages "$work/msgs.bin" 1000000 >/dev/null || { echo "kernel-ab: no messages" >&2; exit 2; }
declare -A cmd=(
  [mandel]="-n 8294400 --output $work/out-%S.npy --invoke render $N/mandel.wasm 3840 2160 1"
  [sha256]="-n 1000000 --mem-in input_ptr=$work/msgs.bin --mem-in-size 64 --mem-out output_ptr:32=$work/out-%S.bin --invoke hash $N/sha256.wasm"
  [montecarlo]="-n 1048576 --output $work/out-%S.npy --invoke price $N/montecarlo.wasm @index 256"
  [collatz]="-n 4194304 --output $work/out-%S.npy --invoke collatz $N/collatz.wasm 1000000000000 @index"
  [stack_mix]="-n 10000000 --output $work/out-%S.npy --invoke mix $N/stack_mix.wasm @index"
  [ackermann]="-n 20000 --output $work/out-%S.npy --invoke ack $root/bench/scale/ackermann.wat 3 5"
)
rows=${ROWS:-mandel sha256 montecarlo collatz stack_mix ackermann}
median() { sort -g | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "-")}'; }
kernel_ms() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["phases_ms"]["kernel"])' "$1"; }
printf '%-11s %12s %12s %8s %s\n' row "A kernel ms" "B kernel ms" "B/A" "same results"
for r in $rows; do
  : >"$work/$r.A" && : >"$work/$r.B"
  for ((k = 0; k < repeat; ++k)); do
    for side in A B; do
      bin=$A && [[ $side == B ]] && bin=$B
      args=${cmd[$r]//%S/$side}
      # shellcheck disable=SC2086
      "$bin" run --backend gpu --tier "$tier" -q --stats "$work/s.json" $args \
        >"$work/log.$side" 2>&1 && kernel_ms "$work/s.json" >>"$work/$r.$side" ||
        echo "kernel-ab: $r on $side failed: $(tail -n 1 "$work/log.$side")" >&2
    done
  done
  a=$(median <"$work/$r.A") b=$(median <"$work/$r.B")
  same=no
  for f in "$work"/out-A.*; do
    cmp -s "$f" "${f/out-A./out-B.}" && same=yes
  done
  rm -f "$work"/out-*
  printf '%-11s %12s %12s %8s %s\n' "$r" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {printf (a > 0 && b > 0) ? "%.3f" : "-", b / a}')" "$same"
done
rm -rf "$work"
