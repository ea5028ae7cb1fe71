#!/usr/bin/env bash
# Scaling over GPUs: the four bench/gpu programs and hash-wasm's sha256, on
# both GPU tiers, on one GPU and on k GPUs, in one process (--gpus k) and
# with `mpirun -np k` (one GPU per rank), for k in GPU_COUNTS.
#
# Throughput is instances / the batch's wall time as the summary gives it
# ("wall", upload and download included, reading the module and inputs
# not; under mpirun the slowest rank's). Efficiency = throughput on k GPUs
# / (k x throughput on one). The timing runs write no output files; a
# smaller run of each (SIZE / CHECK_DIV) writes them on one GPU, on k GPUs
# and under mpirun, and the files must be byte-identical (cmp).
#
# usage: bench/gpus/run.sh WASMWARP TABLE_FILE [WORKDIR]
# Env (defaults in brackets):
#   BUILD_DIR    the guests, gpu_ref and hashwasm_sha256.wasm (bench/gpu/build.sh,
#                bench/hashwasm/fetch.sh) [required]
#   GPU_COUNTS   GPU counts to compare with one ["every power of two up to the
#                machine's count, and the count"]; a count above the
#                machine's shares its GPUs (a check of the paths, not a
#                measure of scaling)
#   TIERS        [interp compiled]
#   BENCHES      [mandel sha256 montecarlo collatz hashwasm]
#   SCALE        multiplies every size [1]
#   REPEAT       timing runs per figure, the median is reported [3]
#   CHECK_DIV    the checked run is SIZE / CHECK_DIV [16]
#   WEAK         1: k GPUs run k x SIZE instances (each GPU as much work as
#                one alone; for 4 and 8 GPUs, so that each runs a second or
#                more), efficiency still rate(k) / (k x rate(1)) [0]; a GPU
#                batch holds at most 2^32-1 instances, so 8 GPUs of
#                compiled collatz need SCALE 0.5 or less
#   MPIRUN       mpirun command ["mpirun" when on PATH; empty: no MPI rows]
# Sizes (instances, interp / compiled) at SCALE 1, so that one H200 runs
# each for half a second or more (measured 2026-11-24): mandel 16384^2 /
# 32768^2 pixels; sha256 and hashwasm 32M / 64M 64-byte messages (2 / 4
# GB in); montecarlo 2M / 128M pricers of 256 samples; collatz 32M / 1G
# start values.
set -uo pipefail

ww=${1:?usage: run.sh WASMWARP TABLE_FILE [WORKDIR]}
table=${2:?usage: run.sh WASMWARP TABLE_FILE [WORKDIR]}
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/ww-gpus.XXXXXX")}
bin=${BUILD_DIR:?BUILD_DIR: the folder bench/gpu/build.sh filled}
mkdir -p "$work" "$(dirname "$table")"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
((ngpu >= 1)) || { echo "run.sh: no GPU" >&2; exit 2; }
if [[ -z ${GPU_COUNTS:-} ]]; then
  GPU_COUNTS=1
  for ((k = 2; k < ngpu; k *= 2)); do GPU_COUNTS+=" $k"; done
  ((ngpu > 1)) && GPU_COUNTS+=" $ngpu"
fi
tiers=${TIERS:-interp compiled}
benches=${BENCHES:-mandel sha256 montecarlo collatz hashwasm}
scale=${SCALE:-1}
repeat=${REPEAT:-3}
check_div=${CHECK_DIV:-16}
weak=${WEAK:-0}
mpirun=${MPIRUN-$(command -v mpirun || true)}
# Unbound: Open MPI binds each of two ranks to one core by default, which
# leaves a rank one core for its host-side copies.
mpi_flags=(--oversubscribe --bind-to none)
((EUID == 0)) && mpi_flags+=(--allow-run-as-root)
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# size BENCH TIER: the instances of a timing run.
size() {
  local n c=0
  [[ $2 == compiled ]] && c=1
  case $1 in
    mandel) ((c)) && n=$((32768 * 32768)) || n=$((16384 * 16384)) ;;
    sha256 | hashwasm) ((c)) && n=$((64 << 20)) || n=$((32 << 20)) ;;
    montecarlo) ((c)) && n=$((128 << 20)) || n=$((2 << 20)) ;;
    collatz) ((c)) && n=$((1 << 30)) || n=$((32 << 20)) ;;
  esac
  awk -v n="$n" -v s="$scale" 'BEGIN { printf "%d", n * s }'
}

# args BENCH N OUTPUTS: wasmwarp's arguments for N instances; OUTPUTS a
# file stem for the checked run (empty: no output files).
args() {
  local b=$1 n=$2 o=$3 a=()
  case $b in
    mandel)  # a square image of about n pixels, one instance per pixel
      local w
      w=$(awk -v n="$n" 'BEGIN { printf "%d", sqrt(n) }')
      a=(${o:+--output "$o.npy"} -n $((w * w)) --invoke render "$bin/mandel.wasm" "$w" "$w" 1) ;;
    sha256) a=(--mem-in input_ptr="$work/messages.bin" --mem-in-size 64 ${o:+--mem-out output_ptr:32="$o.bin"}
      -n "$n" --invoke hash "$bin/sha256.wasm") ;;
    hashwasm) a=(--mem-in Hash_GetBuffer="$work/messages.bin" --mem-in-size 64 ${o:+--mem-out Hash_GetBuffer:32="$o.bin"}
      -n "$n" --invoke Hash_Calculate "$bin/hashwasm_sha256.wasm" 64 256) ;;
    montecarlo) a=(${o:+--output "$o.npy"} -n "$n" --invoke price "$bin/montecarlo.wasm" @index 256) ;;
    collatz) a=(${o:+--output "$o.npy"} -n "$n" --invoke collatz "$bin/collatz.wasm" 1000000000000 @index) ;;
  esac
  printf '%s\n' "${a[@]}"
}

# run WAY K TIER ARGS...: one run; prints its rate (instances/s), or
# nothing when it failed. WAY: one (a process on K GPUs) or mpi (K ranks).
run() {
  local way=$1 k=$2 tier=$3 log
  shift 3
  log=$work/last.log
  if [[ $way == one ]]; then
    # More GPUs than the machine has: its GPUs listed again (shared).
    local sel=$k i
    if ((k > ngpu)); then
      sel=$(for ((i = 0; i < k; ++i)); do printf '%d,' $((i % ngpu)); done)
      sel=${sel%,}
    fi
    "$ww" run --backend gpu --tier "$tier" --gpus "$sel" "$@" >/dev/null 2>"$log"
  else
    $mpirun "${mpi_flags[@]}" -np "$k" "$ww" run --backend gpu --tier "$tier" "$@" >/dev/null 2>"$log"
  fi
  local rc=$?
  if ((rc != 0)); then
    echo "  $way k=$k $tier: exit $rc: $(tail -n 2 "$log" | tr '\n' ' ')" >&2
    return
  fi
  cat "$log" >>"$work/runs.log"
  if [[ $way == mpi ]]; then
    grep -oE 'the slowest rank\), rate [0-9]+' "$log" | grep -oE '[0-9]+$'
  else
    grep -oE 'wall: [0-9.]+ s  rate: [0-9]+' "$log" | grep -oE '[0-9]+$'
  fi
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }

rate() {  # WAY K TIER BENCH: the median rate of REPEAT timing runs
  local r n
  n=$(size "$4" "$3")
  ((weak)) && n=$((n * $2))
  for ((i = 0; i < repeat; ++i)); do
    mapfile -t a < <(args "$4" "$n" "")
    r=$(run "$1" "$2" "$3" "${a[@]}")
    [[ -n $r ]] && echo "$r"
  done | median
}

max_n=0
max_k=1
((weak)) && for k in $GPU_COUNTS; do ((k > max_k)) && max_k=$k; done
for b in $benches; do
  [[ $b == sha256 || $b == hashwasm ]] && for t in $tiers; do
    n=$(($(size "$b" "$t") * max_k))
    ((n > max_n)) && max_n=$n
  done
done
((max_n > 0)) && "$bin/gpu_ref" gen-messages "$work/messages.bin" "$max_n"

{
  echo "GPUs on this machine: $ngpu ($(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs))"
  echo "rates in instances/s (median of $repeat), efficiency = rate(k) / (k x rate(1)); sizes at SCALE $scale$( ((weak)) && echo ", times k on k GPUs (WEAK)")"
  printf '| %-10s | %-8s | %-4s | %13s |' bench tier way "1 GPU"
  for k in $GPU_COUNTS; do ((k > 1)) && printf ' %13s | %6s |' "$k GPUs" "eff"; done
  echo
} >"$table"

for b in $benches; do
  [[ $b == hashwasm && ! -f $bin/hashwasm_sha256.wasm ]] && { echo "no $bin/hashwasm_sha256.wasm: hashwasm skipped" >&2; continue; }
  for t in $tiers; do
    n=$(size "$b" "$t")
    # The checked run: the same files on one GPU, on k GPUs and under mpirun.
    cn=$((n / check_div))
    mapfile -t a < <(args "$b" "$cn" "$work/$b-$t-1")
    [[ -n $(run one 1 "$t" "${a[@]}") ]] || fail "$b $t: the one-GPU checked run"
    for k in $GPU_COUNTS; do
      ((k > 1)) || continue
      for way in one mpi; do
        [[ $way == mpi && -z $mpirun ]] && continue
        stem=$work/$b-$t-$way$k
        mapfile -t a < <(args "$b" "$cn" "$stem")
        run "$way" "$k" "$t" "${a[@]}" >/dev/null
        for ext in npy bin; do
          [[ -f $work/$b-$t-1.$ext ]] || continue
          if cmp -s "$work/$b-$t-1.$ext" "$stem.$ext"; then
            echo "ok $b $t: $way on $k GPUs = one GPU ($cn instances)"
          else
            fail "$b $t: $way on $k GPUs differs from one GPU"
          fi
        done
        rm -f "$stem".npy "$stem".bin
      done
    done
    rm -f "$work/$b-$t-1".npy "$work/$b-$t-1".bin
    one=$(rate one 1 "$t" "$b")
    for way in one mpi; do
      [[ $way == mpi && -z $mpirun ]] && continue
      [[ $way == mpi && $GPU_COUNTS == 1 ]] && continue
      line=$(printf '| %-10s | %-8s | %-4s | %13s |' "$b" "$t" "$way" "${one:-fail}")
      for k in $GPU_COUNTS; do
        ((k > 1)) || continue
        r=$(rate "$way" "$k" "$t" "$b")
        eff=$(awk -v r="${r:-0}" -v o="${one:-0}" -v k="$k" 'BEGIN { if (o > 0 && r > 0) printf "%.3f", r / (k * o); else print "-" }')
        line+=$(printf ' %13s | %6s |' "${r:-fail}" "$eff")
      done
      echo "$line" >>"$table"
    done
  done
done
cat "$table"
exit $status
