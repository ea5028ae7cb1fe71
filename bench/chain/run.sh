#!/usr/bin/env bash
# Chained calls on resident instances against pipelines without them
# (issue 11 part 6): init, STEPS steps and a read-out of bench/chain's
# particle on N instances,
#   cli chain          wasmwarp run --invoke init --then step:STEPS:0.01 --then result
#   cli per-call       the same with --gpu-launch-per-call (GPU only)
#   cli separate       one `wasmwarp run` per step, the state carried in files
#                      (--mem-out / --mem-in, 24 bytes per instance); SEPARATE
#                      steps are timed and the per-step time is given
#   api ...            the same three through the C++ API (chain_api.cc), and
#                      resident instances with a call per step
# Every way's answers are checked: the CLI chain against the native build
# of the same C (bit for bit), the separate runs against a chain of as many
# steps. Prints a table; "projected" rows are SEPARATE steps' mean x STEPS.
#   usage: bench/chain/run.sh WASMWARP API_CHAIN_BENCH PARTICLE.wasm PARTICLE_REF cpu|gpu [N] [STEPS] [SEPARATE]
set -euo pipefail
ww=${1:?usage: run.sh WASMWARP API_CHAIN_BENCH PARTICLE.wasm PARTICLE_REF cpu|gpu [N] [STEPS] [SEPARATE]}
api=${2:?}
wasm=${3:?}
ref=${4:?}
backend=${5:?}
n=${6:-1000000}
steps=${7:-1000}
separate=${8:-10}
py=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ww-chain.XXXXXX")
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
calc() { awk "BEGIN { print $1 }"; }
run() { "$ww" run -q --backend "$backend" --tier compiled -n "$n" "$@"; }

# Compiles (or loads) the code for the runs below: with their instance
# count, since the memory layout (part of the code's cache key) follows
# from it; one chain and one plain call, the two kernels they use.
run --invoke init --then step:1:0.01 --then result "$wasm" @index >/dev/null
run --invoke result "$wasm" >/dev/null

kernel_ms() { "$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["phases_ms"]["kernel"])' "$1"; }
t0=$(now)
run --stats "$work/chain.json" --output "$work/chain.npy" --invoke init --then "step:$steps:0.01" --then result "$wasm" @index
t1=$(now)
chain_s=$(calc "$t1 - $t0")
chain_kernel=$(kernel_ms "$work/chain.json")
per_call_s=-
if [[ $backend == gpu ]]; then
  t0=$(now)
  run --stats "$work/per_call.json" --gpu-launch-per-call --output "$work/per_call.npy" --invoke init \
    --then "step:$steps:0.01" --then result "$wasm" @index
  t1=$(now)
  per_call_s=$(calc "$t1 - $t0")
  per_call_kernel=$(kernel_ms "$work/per_call.json")
  cmp -s "$work/chain.npy" "$work/per_call.npy" || { echo "run.sh: per-call launches differ from the chain" >&2; exit 1; }
fi
"$ref" "$n" "$steps" 0.01 "$work/ref.bin"
"$py" - "$work/chain.npy" "$work/ref.bin" <<'PY'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.fromfile(sys.argv[2], dtype=np.float64)
if a.shape != b.shape or not (a.view(np.uint64) == b.view(np.uint64)).all():
    sys.exit("run.sh: the chain's answers differ from the native build's")
PY

# Without residency: a batch per step, the state through files.
t0=$(now)
run --invoke init --mem-out "state_ptr:24=$work/s0.bin" "$wasm" @index
t1=$(now)
init_s=$(calc "$t1 - $t0")
t0=$(now)
for ((k = 1; k <= separate; ++k)); do
  run --invoke step --mem-in "state_ptr=$work/s$((k - 1)).bin" --mem-in-size 24 --mem-out "state_ptr:24=$work/s$k.bin" "$wasm" 0.01
  rm -f "$work/s$((k - 1)).bin"
done
t1=$(now)
per_step_s=$(calc "($t1 - $t0) / $separate")
run --output "$work/separate.npy" --invoke result --mem-in "state_ptr=$work/s$separate.bin" --mem-in-size 24 "$wasm"
run --output "$work/check.npy" --invoke init --then "step:$separate:0.01" --then result "$wasm" @index
cmp -s "$work/separate.npy" "$work/check.npy" || { echo "run.sh: separate batches differ from a chain" >&2; exit 1; }

api_out=$("$api" "$wasm" "$backend" "$n" "$steps" "$separate")
grep -q '^check ok' <<<"$api_out" || { echo "run.sh: $api_out" >&2; exit 1; }
api_val() { awk -v k="$1" '$1 == k {print $2}' <<<"$api_out"; }

printf '%-36s %12s\n' "way ($backend, $n instances, $steps steps)" seconds
printf '%-36s %12.3f\n' "cli chain (one launch)" "$chain_s"
printf '%-36s %12.3f\n' "  its kernel time" "$(calc "$chain_kernel / 1000")"
if [[ $per_call_s != - ]]; then
  printf '%-36s %12.3f\n' "cli chain (a launch per call)" "$per_call_s"
  printf '%-36s %12.3f\n' "  its kernel time" "$(calc "$per_call_kernel / 1000")"
fi
printf '%-36s %12.3f\n' "cli separate: init batch" "$init_s"
printf '%-36s %12.3f\n' "cli separate: per step ($separate timed)" "$per_step_s"
printf '%-36s %12.3f\n' "cli separate: projected" "$(calc "$init_s + $per_step_s * $steps")"
printf '%-36s %12.3f\n' "api chain (one launch)" "$(api_val chain)"
[[ $backend != gpu ]] || printf '%-36s %12.3f\n' "api chain (a launch per call)" "$(api_val per-call)"
printf '%-36s %12.3f\n' "api resident: per step ($separate timed)" "$(api_val resident-per-step)"
printf '%-36s %12.3f\n' "api resident: projected" "$(calc "$(api_val resident-per-step) * $steps")"
printf '%-36s %12.3f\n' "api separate: per step ($separate timed)" "$(api_val separate-per-step)"
printf '%-36s %12.3f\n' "api separate: projected" \
  "$(calc "$(api_val separate-init) + $(api_val separate-per-step) * $steps")"
echo "answers: the chain = native build (bit for bit); separate = chain of $separate steps; per-call = chain"
