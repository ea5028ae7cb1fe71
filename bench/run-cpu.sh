#!/usr/bin/env bash
# CPU benchmark: each guest benchmark (bench/int_bench.c, bench/float_bench.c)
# run once by wasmwarp's interpreter, wasmwarp's compiled tier (from a warm
# cache: the compile is done first, untimed), wabt's wasm-interp and node
# (V8), in one go, each result checked against the natively compiled
# program. Prints wall times (whole process: start, compile, run) and the
# ratio to wasmwarp's interpreter. One thread each: a single instance.
#   usage: bench/run-cpu.sh
#   env:   WASMWARP=path (default build/wasmwarp)  SCALE=n (default 2)
#          REPEAT=n: best of n runs (default 1)  GUESTS=dir (default build/guests)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ww=${WASMWARP:-$root/build/wasmwarp}
guests=${GUESTS:-$root/build/guests}
repeat=${REPEAT:-1}
[[ -x $ww ]] || { echo "run-cpu: $ww not found (build first: bash scripts/setup.sh)" >&2; exit 2; }
SCALE=${SCALE:-2} bash "$root/examples/build.sh" "$guests" >/dev/null

have_interp=0; command -v wasm-interp >/dev/null && have_interp=1
have_node=0; command -v node >/dev/null && have_node=1

now() { date +%s.%N; }
# Runs "$@" REPEAT times; sets OUT (stdout of the last run) and SECS (best).
timed() {
  local best="" t0 t1 s
  for ((r = 0; r < repeat; r++)); do
    t0=$(now)
    OUT=$("$@" 2>/dev/null) || { OUT="(failed: exit $?)"; SECS=nan; return 0; }
    t1=$(now)
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    if [[ -z $best ]] || awk -v s="$s" -v b="$best" 'BEGIN { exit !(s < b) }'; then best=$s; fi
  done
  SECS=$best
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "scale:   ${SCALE:-2}, best of $repeat"
printf '%-12s %-12s %10s %10s  %s\n' benchmark runtime seconds "x wasmwarp" result
fail=0
for b in int_bench float_bench; do
  wasm=$guests/$b.wasm
  timed "$guests/$b.native"
  expected=$OUT
  native_s=$SECS
  timed "$ww" run --tier interp --invoke run "$wasm"
  ww_s=$SECS
  rows=("native|$native_s|$expected")
  rows+=("wasmwarp|$ww_s|$OUT")
  # The compiled CPU tier from a warm cache (compiled once first, not timed).
  "$ww" compile --backend cpu --invoke run "$wasm" >/dev/null 2>&1
  timed "$ww" run --tier compiled --invoke run "$wasm"
  rows+=("compiled|$SECS|$OUT")
  if ((have_interp)); then
    timed wasm-interp "$wasm" --run-all-exports
    rows+=("wasm-interp|$SECS|${OUT##*i64:}")
  fi
  if ((have_node)); then
    timed node "$root/bench/run-node.mjs" "$wasm" run
    rows+=("node|$SECS|$OUT")
  fi
  for row in "${rows[@]}"; do
    IFS='|' read -r name secs value <<<"$row"
    ratio=$(awk -v s="$secs" -v w="$ww_s" 'BEGIN { if (s == "nan" || w == "nan" || w == 0) print "-"; else printf "%.2f", s / w }')
    verdict=ok
    if [[ $value != "$expected" ]]; then verdict="WRONG (got $value, expected $expected)"; fail=1; fi
    printf '%-12s %-12s %10s %10s  %s\n' "$b" "$name" "$secs" "$ratio" "$verdict"
  done
done

# Batch throughput: many small instances of one export on all cores.
n=${BATCH_N:-2000}
t0=$(now)
summary=$("$ww" run --invoke hash_seed -n "$n" --output /tmp/wasmwarp-bench-hash.csv "$guests/hash.wasm" @index 2>&1 >/dev/null) || true
t1=$(now)
echo "batch: hash_seed(@index) -n $n, 64 KiB hashed per instance: $(echo "$summary" | grep -E '^wall' || echo "$summary")"
# Spot-check the batch against the native build.
if ! diff <("$guests/hash.native" 0 16) <(sed -n '2,17p' /tmp/wasmwarp-bench-hash.csv | cut -d, -f2) >/dev/null; then
  echo "batch: WRONG results (first 16 rows differ from native)"; fail=1
fi
exit $fail
