#!/usr/bin/env bash
# The GPU benchmarks, end to end: each guest on `wasmwarp run --backend gpu`
# and `--backend cpu` (all cores), plus its native CUDA ceiling; prints a
# table of instances per second and checks every answer.
#
# usage: bench/gpu/run.sh WASMWARP TABLE_FILE [WORKDIR]
#   WORKDIR (default: a fresh temporary folder) receives the builds, inputs,
#   outputs (images, digests, .npy) and each run's log.
#
# Env (defaults in brackets):
#   BENCHES      which to run ["mandel sha256 montecarlo collatz"]
#   IMAGE        mandel image WxH [3840x2160]; N_MANDEL [W*H]
#   N_SHA        messages [1000000]
#   N_MC         option pricers [1048576]; MC_SAMPLES per instance [256]
#   N_COLLATZ    start values [4194304]; COLLATZ_BASE first one [1000000000000]
#   CPU_DIV      the CPU backend runs 1/CPU_DIV of the instances [10]
#                (mandel: every CPU_DIV-th pixel, so the sample costs what the
#                whole image does per pixel); rates are per second, so they
#                compare directly
#   THREADS      CPU backend threads [nproc]
#   REPEAT       GPU-backend timing runs, the median rate is reported [3]
#   CPU_REPEAT   CPU-backend timing runs [1]
#   RUN_TIMEOUT  seconds before one wasmwarp or CUDA run is killed [600]
#   GPU_LAYOUT   --gpu-layout for the GPU runs [the CLI's default]
#   BUILD_DIR    use guests/gpu_ref/CUDA programs built there instead of
#                running build.sh into WORKDIR/build
#
# Checks (any failure makes the exit status 1; the table is still written):
#   * the GPU run's results (image iteration counts, digests, prices, step
#     counts) equal the native gcc build of the same algos.h, all instances;
#   * a GPU run and a CPU run of the same subset write byte-identical files
#     (cmp): .npy results, PNG image, digests;
#   * the CPU run equals the native build too;
#   * SHA-256 digests equal python3's hashlib (or sha256sum for a sample),
#     which is independent of our SHA-256 code;
#   * each CUDA program checks a sample against its CPU reference.
# Timing: wasmwarp's summary line "... rate: R instances/s ..." on stderr
# (from the first instance's start to the last one's end, without module
# loading); failing that, N / "wall: S s", failing that, N / the process's
# wall time. The CUDA figure is the kernel alone (cudaEvents, median).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ww=${1:?usage: run.sh WASMWARP TABLE_FILE [WORKDIR]}
table=${2:?usage: run.sh WASMWARP TABLE_FILE [WORKDIR]}
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/ww-gpubench.XXXXXX")}
[[ -x $ww ]] || { echo "run.sh: $ww is not an executable" >&2; exit 2; }
ww=$(cd "$(dirname "$ww")" && pwd)/$(basename "$ww")
mkdir -p "$work"
table_dir=$(dirname "$table")
mkdir -p "$table_dir"

benches=${BENCHES:-mandel sha256 montecarlo collatz}
image=${IMAGE:-3840x2160}
img_w=${image%x*}
img_h=${image#*x}
n_mandel=${N_MANDEL:-$((img_w * img_h))}
n_sha=${N_SHA:-1000000}
n_mc=${N_MC:-1048576}
mc_samples=${MC_SAMPLES:-256}
n_collatz=${N_COLLATZ:-4194304}
collatz_base=${COLLATZ_BASE:-1000000000000}
cpu_div=${CPU_DIV:-10}
threads=${THREADS:-$(nproc)}
repeat=${REPEAT:-3}
cpu_repeat=${CPU_REPEAT:-1}
run_timeout=${RUN_TIMEOUT:-600}
((cpu_div >= 1 && repeat >= 1 && cpu_repeat >= 1)) || { echo "run.sh: CPU_DIV, REPEAT, CPU_REPEAT must be >= 1" >&2; exit 2; }

if [[ -n ${BUILD_DIR:-} ]]; then
  bin=$BUILD_DIR
else
  bin=$work/build
  bash "$here/build.sh" "$bin" || { echo "run.sh: build failed" >&2; exit 2; }
fi
ref=$bin/gpu_ref

fails=0
note() { echo "$*"; }
fail() {
  echo "FAIL $*"
  fails=$((fails + 1))
}

# Which backends this wasmwarp has: without --backend, only the CPU runs.
have_backend=0
# (The help is captured first: grep -q closing the pipe early would fail the
# pipeline under pipefail.)
help=$("$ww" run --help 2>/dev/null)
grep -q -- '--backend' <<<"$help" && have_backend=1
if ((have_backend == 0)); then
  note "note: '$ww run' has no --backend option: GPU runs skipped, CPU runs use the default backend"
fi

# rate_of LOG N SECONDS: instances per second from a run's stderr.
rate_of() {
  local log=$1 n=$2 secs=$3 r
  r=$(grep -oE 'rate: *[0-9.eE+]+ *instances/s' "$log" | tail -n 1 | grep -oE '[0-9][0-9.eE+]*' | head -n 1)
  [[ -z $r ]] && r=$(grep -oE '[0-9][0-9.eE+]* *instances/s' "$log" | tail -n 1 | grep -oE '^[0-9][0-9.eE+]*')
  if [[ -z $r ]]; then
    local wall
    wall=$(grep -oE 'wall: *[0-9.eE+]+ *s' "$log" | tail -n 1 | grep -oE '[0-9][0-9.eE+]*' | head -n 1)
    [[ -z $wall ]] && wall=$secs
    r=$(awk -v n="$n" -v w="$wall" 'BEGIN { if (w > 0) printf "%.0f", n / w; }')
  fi
  echo "$r"
}

# krate_of LOG N: instances per second of the GPU kernel alone, from the
# summary's "kernel: K s" (wasmwarp's GPU backend), or nothing.
krate_of() {
  local k
  k=$(grep -oE 'kernel: *[0-9.eE+]+ *s' "$1" | tail -n 1 | grep -oE '[0-9][0-9.eE+]*' | head -n 1)
  [[ -n $k ]] && awk -v n="$2" -v k="$k" 'BEGIN { if (k > 0) printf "%.0f", n / k; }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# wwrun BACKEND TAG N REPEATS -- ARGS...: runs wasmwarp REPEATS times with
# ARGS (the last run's outputs are kept); prints the median rate, or nothing
# if a run failed. Logs in $work/TAG.log; the median kernel-only rate, when
# the summary has one, in $work/TAG.krate.
wwrun() {
  local backend=$1 tag=$2 n=$3 reps=$4
  shift 5
  local bargs=()
  if ((have_backend)); then
    bargs=(--backend "$backend")
  elif [[ $backend == gpu ]]; then
    return 0
  fi
  [[ $backend == cpu ]] && bargs+=(--threads "$threads")
  [[ $backend == gpu && -n ${GPU_LAYOUT:-} ]] && bargs+=(--gpu-layout "$GPU_LAYOUT")
  local rates=() krates=() k t0 t1 rc kr
  rm -f "$work/$tag.krate"
  for ((k = 0; k < reps; ++k)); do
    t0=$(date +%s.%N)
    timeout "$run_timeout" "$ww" run "${bargs[@]}" -n "$n" "$@" >"$work/$tag.stdout" 2>"$work/$tag.log"
    rc=$?
    t1=$(date +%s.%N)
    if ((rc != 0)); then
      echo "FAIL $tag: wasmwarp exited $rc$( ((rc == 124)) && echo " (killed after ${run_timeout}s)"):" >&2
      tail -n 5 "$work/$tag.log" >&2
      return 0
    fi
    rates+=("$(rate_of "$work/$tag.log" "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")")
    kr=$(krate_of "$work/$tag.log" "$n")
    [[ -n $kr ]] && krates+=("$kr")
  done
  ((${#krates[@]})) && printf '%s\n' "${krates[@]}" | median >"$work/$tag.krate"
  printf '%s\n' "${rates[@]}" | median
}

# cudarun NAME ARGS...: the CUDA ceiling's instances_per_second, or nothing.
cudarun() {
  local name=$1
  shift
  local exe=$bin/${name}_cuda
  [[ -x $exe ]] || return 0
  if ! timeout "$run_timeout" "$exe" "$@" >"$work/$name.cuda.log" 2>&1; then
    echo "FAIL $name: native CUDA program:" >&2
    tail -n 5 "$work/$name.cuda.log" >&2
    echo "?$(grep -oE 'instances_per_second=[0-9.eE+]+' "$work/$name.cuda.log" | tail -n 1 | cut -d= -f2)"
    return 0
  fi
  grep -oE 'instances_per_second=[0-9.eE+]+' "$work/$name.cuda.log" | tail -n 1 | cut -d= -f2
}

# check WHAT CMD...: runs a checker; counts a failure unless it exits 0.
check() {
  local what=$1
  shift
  local outp
  outp=$("$@" 2>&1)
  local rc=$?
  echo "$outp" | sed 's/^/  /'
  ((rc == 0)) || fail "$what"
}

# same A B WHAT: the two backends' files must be byte-identical.
same() {
  if [[ ! -f $1 || ! -f $2 ]]; then
    fail "$3: missing $([[ -f $1 ]] && echo "$2" || echo "$1")"
  elif cmp -s "$1" "$2"; then
    echo "  ok $3: GPU and CPU files identical ($(basename "$1"))"
  else
    fail "$3: GPU and CPU files differ: $(cmp "$1" "$2" 2>&1 | head -n 1)"
  fi
}

rows=()
add_row() {  # name n gpu cpu cuda
  [[ ${5:-} == \?* ]] && fail "$1: the native CUDA program failed (see $work/$1.cuda.log)"
  local kr=
  [[ -n ${3:-} && -f $work/$1.gpu.krate ]] && kr=$(<"$work/$1.gpu.krate")
  rows+=("$1|$2|${3:-}|${4:-}|${5:-}|$kr")
}

# ---------------------------------------------------------------- mandel
bench_mandel() {
  local n=$n_mandel sub=$((n_mandel / cpu_div)) step=$cpu_div g c
  ((sub >= 1)) || sub=1
  echo "== mandel: $n pixels of ${img_w}x${img_h}, CPU on every ${step}th pixel ($sub)"
  local app=(--invoke render "$bin/mandel.wasm")
  g=$(wwrun gpu mandel.gpu "$n" "$repeat" -- --image "${img_w}x${img_h}=$work/mandel.gpu.png" \
    --output "$work/mandel.gpu.npy" "${app[@]}" "$img_w" "$img_h" 1)
  [[ -n $g ]] && check "mandel GPU vs native" "$ref" mandel "$work/mandel.gpu.npy" "$img_w" "$img_h" 1 "$n"
  ((have_backend)) && [[ -z $g ]] && fail "mandel: GPU run"
  c=$(wwrun cpu mandel.cpu "$sub" "$cpu_repeat" -- --image "${img_w}x${img_h}=$work/mandel.cpu.png" \
    --output "$work/mandel.cpu.npy" "${app[@]}" "$img_w" "$img_h" "$step")
  if [[ -n $c ]]; then
    check "mandel CPU vs native" "$ref" mandel "$work/mandel.cpu.npy" "$img_w" "$img_h" "$step" "$sub"
  else
    fail "mandel: CPU run"
  fi
  if [[ -n $g && -n $c ]]; then
    wwrun gpu mandel.gpusub "$sub" 1 -- --image "${img_w}x${img_h}=$work/mandel.gpusub.png" \
      --output "$work/mandel.gpusub.npy" "${app[@]}" "$img_w" "$img_h" "$step" >/dev/null
    same "$work/mandel.gpusub.npy" "$work/mandel.cpu.npy" "mandel iterations"
    same "$work/mandel.gpusub.png" "$work/mandel.cpu.png" "mandel image"
  fi
  add_row mandel "$n" "$g" "$c" "$(cudarun mandel "$img_w" "$img_h")"
}

# ---------------------------------------------------------------- sha256
bench_sha256() {
  local n=$n_sha sub=$((n_sha / cpu_div)) g c
  ((sub >= 1)) || sub=1
  echo "== sha256: $n messages of 64 bytes, CPU on the first $sub"
  "$ref" gen-messages "$work/messages.bin" "$n" || { fail "sha256: generating messages"; return; }
  local io=(--mem-in input_ptr="$work/messages.bin" --mem-in-size 64 --invoke hash)
  g=$(wwrun gpu sha256.gpu "$n" "$repeat" -- "${io[@]}" \
    --mem-out output_ptr:32="$work/digests.gpu.bin" "$bin/sha256.wasm")
  [[ -n $g ]] && check "sha256 GPU vs native" "$ref" sha256 "$work/messages.bin" "$work/digests.gpu.bin" "$n"
  ((have_backend)) && [[ -z $g ]] && fail "sha256: GPU run"
  c=$(wwrun cpu sha256.cpu "$sub" "$cpu_repeat" -- "${io[@]}" \
    --mem-out output_ptr:32="$work/digests.cpu.bin" "$bin/sha256.wasm")
  if [[ -n $c ]]; then
    check "sha256 CPU vs native" "$ref" sha256 "$work/messages.bin" "$work/digests.cpu.bin" "$sub"
    if [[ -n $g ]]; then
      # The GPU digests' first records are the same instances as the CPU's.
      head -c $((sub * 32)) "$work/digests.gpu.bin" >"$work/digests.gpu.head.bin"
      same "$work/digests.gpu.head.bin" "$work/digests.cpu.bin" "sha256 digests"
    fi
    # Independent of algos.h: python's hashlib, else coreutils on a sample.
    local d=$work/digests.cpu.bin
    [[ -n $g ]] && d=$work/digests.gpu.bin
    local dn=$(($(stat -c %s "$d") / 32))
    if command -v python3 >/dev/null; then
      check "sha256 vs hashlib" python3 - "$work/messages.bin" "$d" "$dn" <<'EOF'
import hashlib, sys
msgs, digs, n = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), int(sys.argv[3])
bad = [i for i in range(n) if hashlib.sha256(msgs[64 * i:64 * i + 64]).digest() != digs[32 * i:32 * i + 32]]
print(("ok" if not bad else "FAIL") + f" hashlib: {n - len(bad)} of {n} digests equal hashlib.sha256")
sys.exit(1 if bad else 0)
EOF
    else
      local i bad=0
      for i in 0 1 $((dn / 3)) $((dn / 2)) $((dn - 1)); do
        [[ $(dd if="$work/messages.bin" bs=64 skip="$i" count=1 status=none | sha256sum | cut -c1-64) == \
          $(dd if="$d" bs=32 skip="$i" count=1 status=none | od -An -v -tx1 | tr -d ' \n') ]] || bad=1
      done
      ((bad)) && fail "sha256 vs sha256sum" || echo "  ok sha256sum agrees on 5 sampled digests"
    fi
  else
    fail "sha256: CPU run"
  fi
  add_row sha256 "$n" "$g" "$c" "$(cudarun sha256 "$n")"
}

# ------------------------------------------------------------ montecarlo
bench_montecarlo() {
  local n=$n_mc sub=$((n_mc / cpu_div)) g c
  ((sub >= 1)) || sub=1
  echo "== montecarlo: $n option pricers x $mc_samples f64 samples, CPU on the first $sub"
  local app=(--invoke price "$bin/montecarlo.wasm" @index "$mc_samples")
  g=$(wwrun gpu montecarlo.gpu "$n" "$repeat" -- --output "$work/mc.gpu.npy" "${app[@]}")
  [[ -n $g ]] && check "montecarlo GPU vs native" "$ref" montecarlo "$work/mc.gpu.npy" "$mc_samples" "$n"
  ((have_backend)) && [[ -z $g ]] && fail "montecarlo: GPU run"
  c=$(wwrun cpu montecarlo.cpu "$sub" "$cpu_repeat" -- --output "$work/mc.cpu.npy" "${app[@]}")
  if [[ -n $c ]]; then
    check "montecarlo CPU vs native" "$ref" montecarlo "$work/mc.cpu.npy" "$mc_samples" "$sub"
  else
    fail "montecarlo: CPU run"
  fi
  if [[ -n $g && -n $c ]]; then
    wwrun gpu montecarlo.gpusub "$sub" 1 -- --output "$work/mc.gpusub.npy" "${app[@]}" >/dev/null
    same "$work/mc.gpusub.npy" "$work/mc.cpu.npy" "montecarlo prices"
  fi
  add_row montecarlo "$n" "$g" "$c" "$(cudarun montecarlo "$n" "$mc_samples")"
}

# --------------------------------------------------------------- collatz
bench_collatz() {
  local n=$n_collatz sub=$((n_collatz / cpu_div)) g c
  ((sub >= 1)) || sub=1
  echo "== collatz: $n start values from $collatz_base, CPU on the first $sub"
  local app=(--invoke collatz "$bin/collatz.wasm" "$collatz_base" @index)
  g=$(wwrun gpu collatz.gpu "$n" "$repeat" -- --output "$work/collatz.gpu.npy" "${app[@]}")
  [[ -n $g ]] && check "collatz GPU vs native" "$ref" collatz "$work/collatz.gpu.npy" "$collatz_base" "$n"
  ((have_backend)) && [[ -z $g ]] && fail "collatz: GPU run"
  c=$(wwrun cpu collatz.cpu "$sub" "$cpu_repeat" -- --output "$work/collatz.cpu.npy" "${app[@]}")
  if [[ -n $c ]]; then
    check "collatz CPU vs native" "$ref" collatz "$work/collatz.cpu.npy" "$collatz_base" "$sub"
  else
    fail "collatz: CPU run"
  fi
  if [[ -n $g && -n $c ]]; then
    wwrun gpu collatz.gpusub "$sub" 1 -- --output "$work/collatz.gpusub.npy" "${app[@]}" >/dev/null
    same "$work/collatz.gpusub.npy" "$work/collatz.cpu.npy" "collatz steps"
  fi
  add_row collatz "$n" "$g" "$c" "$(cudarun collatz "$n" "$collatz_base")"
}

for b in $benches; do
  case $b in
    mandel | sha256 | montecarlo | collatz) "bench_$b" ;;
    *) fail "unknown benchmark '$b' (mandel sha256 montecarlo collatz)" ;;
  esac
done

# ----------------------------------------------------------------- table
fmt_table() {
  local f='%-11s %10s %15s %15s %15s %8s %11s %15s %12s\n'
  # shellcheck disable=SC2059
  printf "$f" benchmark instances "GPU interp/s" "CPU backend/s" "native CUDA/s" "GPU/CPU" "native/GPU" \
    "GPU kernel/s" "native/kern"
  local r name n g c k kr
  ratio() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf p, a / b; else printf "-" }'; }
  for r in "${rows[@]}"; do
    IFS='|' read -r name n g c k kr <<<"$r"
    # shellcheck disable=SC2059
    printf "$f" "$name" "$n" "${g:--}" "${c:--}" "${k:--}" "$(ratio "$g" "$c" %.2f)" \
      "$(ratio "${k#\?}" "$g" %.1f)" "${kr:--}" "$(ratio "${k#\?}" "$kr" %.1f)"
  done
  echo "(instances per second; CPU backend: $threads threads on 1/$cpu_div of the instances;"
  echo " GPU interp: median of $repeat runs of wasmwarp's rate (its batch wall time: upload, kernel,"
  echo " download); GPU kernel: the same runs' kernel time alone; native CUDA: kernel only, median of 7"
  echo " after warm-up; '?' = the CUDA program failed; $((fails)) check(s) failed)"
}
echo
fmt_table | tee "$table"
echo "outputs and logs in $work"
((fails == 0)) || exit 1
exit 0
