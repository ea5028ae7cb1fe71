#!/usr/bin/env bash
# Where each bench/gpu row's batch time goes, step by step: every row on
# one GPU tier with WW_TRACE=sync (a first run fills the compiled-code
# cache and warms the files; the second is traced), beside the OpenMP
# build's time for the same work. For finding what to cut; the figures of
# record come from run.sh.
#
# usage: bench/gpu/trace.sh WASMWARP BENCH_BUILD [TIER]
#   BENCH_BUILD: what bench/gpu/build.sh (and bench/hashwasm/fetch.sh) made.
#   TIER: compiled (default) or interp.
# Env: ROWS (default "mandel sha256 montecarlo collatz hashwasm"), WORK
# (a folder for inputs and outputs, default a fresh temporary one), TRACE
# (WW_TRACE's value: sync, each step synchronises the device; 1 leaves it
# alone).
set -uo pipefail
ww=${1:?usage: trace.sh WASMWARP BENCH_BUILD [TIER]}
bin=${2:?usage: trace.sh WASMWARP BENCH_BUILD [TIER]}
tier=${3:-compiled}
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ww-trace.XXXXXX")}
mkdir -p "$work"
rows=${ROWS:-mandel sha256 montecarlo collatz hashwasm}
n_sha=1000000
"$bin/gpu_ref" gen-messages "$work/messages.bin" "$n_sha" || exit 2

args_of() {
  case $1 in
    mandel) echo "-n 8294400 --image 3840x2160=$work/m.png --output $work/o.npy --invoke render $bin/mandel.wasm 3840 2160 1" ;;
    sha256) echo "-n $n_sha --mem-in input_ptr=$work/messages.bin --mem-in-size 64 --mem-out output_ptr:32=$work/d.bin --invoke hash $bin/sha256.wasm" ;;
    montecarlo) echo "-n 1048576 --output $work/o.npy --invoke price $bin/montecarlo.wasm @index 256" ;;
    collatz) echo "-n 4194304 --output $work/o.npy --invoke collatz $bin/collatz.wasm 1000000000000 @index" ;;
    hashwasm) echo "-n $n_sha --mem-in Hash_GetBuffer=$work/messages.bin --mem-in-size 64 --mem-out Hash_GetBuffer:32=$work/d.bin --invoke Hash_Calculate $bin/hashwasm_sha256.wasm 64 256" ;;
  esac
}
omp_of() {
  case $1 in
    mandel) echo "mandel 3840 2160" ;;
    sha256 | hashwasm) echo "sha256 $work/messages.bin $n_sha" ;;
    montecarlo) echo "montecarlo 1048576 256" ;;
    collatz) echo "collatz 4194304 1000000000000" ;;
  esac
}

for r in $rows; do
  # shellcheck disable=SC2046
  "$ww" run --backend gpu --tier "$tier" -q $(args_of "$r") >/dev/null 2>"$work/$r.warm.log" ||
    { echo "== $r: wasmwarp failed:"; tail -n 3 "$work/$r.warm.log"; continue; }
  # shellcheck disable=SC2046
  WW_TRACE=${TRACE:-sync} "$ww" run --backend gpu --tier "$tier" --stats "$work/$r.json" $(args_of "$r") \
    >/dev/null 2>"$work/$r.log"
  # shellcheck disable=SC2046
  omp=$("$bin/gpu_omp" $(omp_of "$r") | grep -oE 'seconds=[0-9.eE+-]+' | tail -n 1 | cut -d= -f2)
  wall=$(grep -oE '"wall_s": *[0-9.eE+-]+' "$work/$r.json" | grep -oE '[0-9.eE+-]+$')
  echo "== $r ($tier): batch wall $(awk -v w="$wall" 'BEGIN { printf "%.2f", w * 1000 }') ms; OpenMP $(awk -v s="$omp" 'BEGIN { printf "%.2f", s * 1000 }') ms; ratio $(awk -v w="$wall" -v s="$omp" 'BEGIN { if (w > 0) printf "%.2fx", s / w }')"
  grep -vE "^\s*$" "$work/$r.log"
done
