#!/usr/bin/env bash
# A/B of measuring switches (WW_RELEASE_BEHIND, WW_MAPPED_RESULTS,
# WW_PRIME_SETUP, ...) on one batch: runs it once to warm the code cache,
# then alternates the variants RUNS times and prints each one's median wall
# time (from --stats) and range. Ratios within one call only: machines are
# noisy (bench/RESULTS.md).
#
# usage: bench/gpu/ab_env.sh WASMWARP 'VARIANT' ['VARIANT'...] -- RUN ARGS...
#   VARIANT: space-separated NAME=VALUE settings ('' for none)
#   RUN ARGS: wasmwarp run's arguments (no --stats or -q).
# e.g. bench/gpu/ab_env.sh build/wasmwarp 'WW_RELEASE_BEHIND=0' '' -- \
#        --backend gpu --tier compiled -n 1000000 --invoke main 04_thread_id.wasm
# env: RUNS (default 12)
set -uo pipefail
ww=${1:?usage: ab_env.sh WASMWARP VARIANT... -- RUN ARGS...}
shift
variants=()
while (($#)) && [[ $1 != -- ]]; do
  variants+=("$1")
  shift
done
[[ ${1:-} == -- ]] || { echo "ab_env.sh: no -- before the run's arguments" >&2; exit 2; }
shift
((${#variants[@]})) || { echo "ab_env.sh: no variant" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ww-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$ww" run -q "$@" >/dev/null 2>&1 || { echo "ab_env.sh: the warm-up run failed" >&2; exit 1; }
declare -A walls
for ((i = 0; i < ${RUNS:-12}; ++i)); do
  for k in "${!variants[@]}"; do
    # shellcheck disable=SC2086
    env ${variants[$k]} "$ww" run -q --stats "$work/s.json" "$@" >/dev/null 2>&1 ||
      { echo "ab_env.sh: variant '${variants[$k]}' failed" >&2; exit 1; }
    walls[$k]+=" $(grep -oE '"wall_s": *[0-9.eE+-]+' "$work/s.json" | grep -oE '[0-9.eE+-]+$')"
  done
done
for k in "${!variants[@]}"; do
  printf '%-40s ' "'${variants[$k]}'"
  tr ' ' '\n' <<<"${walls[$k]}" | grep . | sort -g |
    awk '{ v[NR] = $1 } END { printf "median %.4f ms (%.4f-%.4f, %d runs)\n", v[int((NR + 1) / 2)] * 1000, v[1] * 1000, v[NR] * 1000, NR }'
done
