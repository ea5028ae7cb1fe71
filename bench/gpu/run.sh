#!/usr/bin/env bash
# The GPU benchmarks, end to end: each guest on `wasmwarp run --backend gpu`
# through the interpreter kernel and through compiled code (--tier), and on
# `--backend cpu` (all cores, compiled), beside its hand-written CUDA kernel
# and the same C compiled natively with OpenMP over all host cores; prints
# a table of instances per second and checks every answer. Then the
# compile times of each guest on both tiers, uncached and cached.
#
# usage: bench/gpu/run.sh WASMWARP TABLE_FILE [WORKDIR]
#   WORKDIR (default: a fresh temporary folder) receives the builds, inputs,
#   outputs (images, digests, .npy) and each run's log.
#
# Env (defaults in brackets):
#   BENCHES      which to run ["mandel sha256 montecarlo collatz hashwasm"]
#                (hashwasm: npm hash-wasm 4.13.0's sha256 module, fetched by
#                bench/hashwasm/fetch.sh into BUILD_DIR/hashwasm_sha256.wasm;
#                skipped when it is not there)
#   TIERS        GPU tiers to run ["interp compiled"]
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

benches=${BENCHES:-mandel sha256 montecarlo collatz hashwasm}
tiers=${TIERS:-interp compiled}
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
have_stats=0
grep -q -- '--stats' <<<"$help" && have_stats=1
if ((have_backend == 0)); then
  note "note: '$ww run' has no --backend option: GPU runs skipped, CPU runs use the default backend"
fi

# rate_of LOG N SECONDS: instances per second from a run's stderr.
rate_of() {
  local log=$1 n=$2 secs=$3 r
  r=$(grep -oE 'rate: *[0-9.eE+]+ *(completed )?instances/s' "$log" | tail -n 1 | grep -oE '[0-9][0-9.eE+]*' | head -n 1)
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
  ((have_stats)) && bargs+=(--stats "$work/$tag.stats.json")
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
# add_row NAME N CPU CUDA OMP: the GPU rates come from $work/NAME.gpu-TIER.{rate,krate}.
add_row() {
  [[ ${4:-} == \?* ]] && fail "$1: the native CUDA program failed (see $work/$1.cuda.log)"
  local gi ki gc kc
  gi=$(cat "$work/$1.gpu-interp.rate" 2>/dev/null); ki=$(cat "$work/$1.gpu-interp.krate" 2>/dev/null)
  gc=$(cat "$work/$1.gpu-compiled.rate" 2>/dev/null); kc=$(cat "$work/$1.gpu-compiled.krate" 2>/dev/null)
  rows+=("$1|$2|$gi|$ki|$gc|$kc|${3:-}|${4:-}|${5:-}")
}

# gpu_tiers NAME N CHECK_FN -- ARGS...: runs the GPU on every tier in
# $tiers (%T in an argument becomes the tier, for output paths), checks
# each tier's outputs with CHECK_FN TIER, and leaves the median rates in
# $work/NAME.gpu-TIER.rate and .krate.
gpu_tiers() {
  local name=$1 n=$2 checkfn=$3
  shift 4
  local t r args a
  for t in $tiers; do
    args=()
    for a in "$@"; do args+=("${a//%T/$t}"); done
    r=$(wwrun gpu "$name.gpu-$t" "$n" "$repeat" -- --tier "$t" "${args[@]}")
    if [[ -z $r ]]; then
      ((have_backend)) && fail "$name: GPU run ($t)"
      continue
    fi
    echo "$r" >"$work/$name.gpu-$t.rate"
    grep -q "tier: $t" "$work/$name.gpu-$t.log" || fail "$name: the $t tier did not run (see $work/$name.gpu-$t.log)"
    "$checkfn" "$t"
  done
}

# omprun NAME ARGS...: the OpenMP build's instances_per_second, or nothing.
omprun() {
  local name=$1
  shift
  [[ -x $bin/gpu_omp ]] || return 0
  if ! timeout "$run_timeout" "$bin/gpu_omp" "$@" >"$work/$name.omp.log" 2>&1; then
    fail "$name: native OpenMP program (see $work/$name.omp.log)"
    return 0
  fi
  grep -oE 'instances_per_second=[0-9.eE+]+' "$work/$name.omp.log" | tail -n 1 | cut -d= -f2
}

# ---------------------------------------------------------------- mandel
bench_mandel() {
  local n=$n_mandel sub=$((n_mandel / cpu_div)) step=$cpu_div c
  ((sub >= 1)) || sub=1
  echo "== mandel: $n pixels of ${img_w}x${img_h}, CPU on every ${step}th pixel ($sub)"
  local app=(--invoke render "$bin/mandel.wasm")
  check_mandel() { check "mandel GPU ($1) vs native" "$ref" mandel "$work/mandel.gpu-$1.npy" "$img_w" "$img_h" 1 "$n"; }
  gpu_tiers mandel "$n" check_mandel -- --image "${img_w}x${img_h}=$work/mandel.gpu-%T.png" \
    --output "$work/mandel.gpu-%T.npy" "${app[@]}" "$img_w" "$img_h" 1
  [[ -f $work/mandel.gpu-interp.png && -f $work/mandel.gpu-compiled.png ]] &&
    same "$work/mandel.gpu-interp.png" "$work/mandel.gpu-compiled.png" "mandel image, interpreter vs compiled"
  c=$(wwrun cpu mandel.cpu "$sub" "$cpu_repeat" -- --tier compiled --image "${img_w}x${img_h}=$work/mandel.cpu.png" \
    --output "$work/mandel.cpu.npy" "${app[@]}" "$img_w" "$img_h" "$step")
  if [[ -n $c ]]; then
    check "mandel CPU vs native" "$ref" mandel "$work/mandel.cpu.npy" "$img_w" "$img_h" "$step" "$sub"
    if ((have_backend)); then
      wwrun gpu mandel.gpusub "$sub" 1 -- --tier compiled --image "${img_w}x${img_h}=$work/mandel.gpusub.png" \
        --output "$work/mandel.gpusub.npy" "${app[@]}" "$img_w" "$img_h" "$step" >/dev/null
      same "$work/mandel.gpusub.npy" "$work/mandel.cpu.npy" "mandel iterations"
      same "$work/mandel.gpusub.png" "$work/mandel.cpu.png" "mandel image"
    fi
  else
    fail "mandel: CPU run"
  fi
  add_row mandel "$n" "$c" "$(cudarun mandel "$img_w" "$img_h")" "$(omprun mandel mandel "$img_w" "$img_h")"
}

# ---------------------------------------------------------------- sha256
# sha_check WHAT DIGESTS N: the digests against the native build and an
# implementation independent of algos.h (python's hashlib, else sha256sum).
sha_check() {
  local what=$1 d=$2 dn=$3
  check "$what vs native" "$ref" sha256 "$work/messages.bin" "$d" "$dn"
  if command -v python3 >/dev/null; then
    check "$what vs hashlib" python3 - "$work/messages.bin" "$d" "$dn" <<'EOF'
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
    ((bad)) && fail "$what vs sha256sum" || echo "  ok sha256sum agrees on 5 sampled digests"
  fi
}

messages() {
  [[ -f $work/messages.bin && $(stat -c %s "$work/messages.bin") -ge $((64 * n_sha)) ]] && return 0
  "$ref" gen-messages "$work/messages.bin" "$n_sha"
}

bench_sha256() {
  local n=$n_sha sub=$((n_sha / cpu_div)) c
  ((sub >= 1)) || sub=1
  echo "== sha256: $n messages of 64 bytes, CPU on the first $sub"
  messages || { fail "sha256: generating messages"; return; }
  local io=(--mem-in input_ptr="$work/messages.bin" --mem-in-size 64 --invoke hash)
  check_sha() { sha_check "sha256 GPU ($1)" "$work/digests.gpu-$1.bin" "$n"; }
  gpu_tiers sha256 "$n" check_sha -- "${io[@]}" --mem-out output_ptr:32="$work/digests.gpu-%T.bin" "$bin/sha256.wasm"
  c=$(wwrun cpu sha256.cpu "$sub" "$cpu_repeat" -- --tier compiled "${io[@]}" \
    --mem-out output_ptr:32="$work/digests.cpu.bin" "$bin/sha256.wasm")
  if [[ -n $c ]]; then
    sha_check "sha256 CPU" "$work/digests.cpu.bin" "$sub"
    if [[ -f $work/digests.gpu-compiled.bin ]]; then
      head -c $((sub * 32)) "$work/digests.gpu-compiled.bin" >"$work/digests.gpu.head.bin"
      same "$work/digests.gpu.head.bin" "$work/digests.cpu.bin" "sha256 digests"
    fi
  else
    fail "sha256: CPU run"
  fi
  add_row sha256 "$n" "$c" "$(cudarun sha256 "$n")" "$(omprun sha256 sha256 "$work/messages.bin" "$n")"
}

# ------------------------------------------------- hash-wasm's sha256 module
# A real third-party module (npm hash-wasm 4.13.0): the host writes each
# message into the module's own buffer (Hash_GetBuffer), Hash_Calculate(64,
# 256) digests it in place. The CUDA and OpenMP columns are the sha256
# row's algorithm on the same messages.
bench_hashwasm() {
  local wasm=$bin/hashwasm_sha256.wasm n=$n_sha sub=$((n_sha / cpu_div)) c
  ((sub >= 1)) || sub=1
  if [[ ! -f $wasm ]]; then
    echo "== hashwasm: skipped ($wasm not found: bench/hashwasm/fetch.sh $bin)"
    return
  fi
  echo "== hashwasm: $n messages through hash-wasm 4.13.0's sha256.wasm, CPU on the first $sub"
  messages || { fail "hashwasm: generating messages"; return; }
  local io=(--mem-in Hash_GetBuffer="$work/messages.bin" --mem-in-size 64 --invoke Hash_Calculate)
  check_hw() { sha_check "hashwasm GPU ($1)" "$work/hw.gpu-$1.bin" "$n"; }
  gpu_tiers hashwasm "$n" check_hw -- "${io[@]}" --mem-out Hash_GetBuffer:32="$work/hw.gpu-%T.bin" "$wasm" 64 256
  c=$(wwrun cpu hashwasm.cpu "$sub" "$cpu_repeat" -- --tier compiled "${io[@]}" \
    --mem-out Hash_GetBuffer:32="$work/hw.cpu.bin" "$wasm" 64 256)
  if [[ -n $c ]]; then
    sha_check "hashwasm CPU" "$work/hw.cpu.bin" "$sub"
  else
    fail "hashwasm: CPU run"
  fi
  add_row hashwasm "$n" "$c" "$(cudarun sha256 "$n")" "$(omprun hashwasm sha256 "$work/messages.bin" "$n")"
}

# ------------------------------------------------------------ montecarlo
bench_montecarlo() {
  local n=$n_mc sub=$((n_mc / cpu_div)) c
  ((sub >= 1)) || sub=1
  echo "== montecarlo: $n option pricers x $mc_samples f64 samples, CPU on the first $sub"
  local app=(--invoke price "$bin/montecarlo.wasm" @index "$mc_samples")
  check_mc() { check "montecarlo GPU ($1) vs native" "$ref" montecarlo "$work/mc.gpu-$1.npy" "$mc_samples" "$n"; }
  gpu_tiers montecarlo "$n" check_mc -- --output "$work/mc.gpu-%T.npy" "${app[@]}"
  c=$(wwrun cpu montecarlo.cpu "$sub" "$cpu_repeat" -- --tier compiled --output "$work/mc.cpu.npy" "${app[@]}")
  if [[ -n $c ]]; then
    check "montecarlo CPU vs native" "$ref" montecarlo "$work/mc.cpu.npy" "$mc_samples" "$sub"
    if ((have_backend)); then
      wwrun gpu montecarlo.gpusub "$sub" 1 -- --tier compiled --output "$work/mc.gpusub.npy" "${app[@]}" >/dev/null
      same "$work/mc.gpusub.npy" "$work/mc.cpu.npy" "montecarlo prices"
    fi
  else
    fail "montecarlo: CPU run"
  fi
  add_row montecarlo "$n" "$c" "$(cudarun montecarlo "$n" "$mc_samples")" "$(omprun montecarlo montecarlo "$n" "$mc_samples")"
}

# --------------------------------------------------------------- collatz
bench_collatz() {
  local n=$n_collatz sub=$((n_collatz / cpu_div)) c
  ((sub >= 1)) || sub=1
  echo "== collatz: $n start values from $collatz_base, CPU on the first $sub"
  local app=(--invoke collatz "$bin/collatz.wasm" "$collatz_base" @index)
  check_collatz() { check "collatz GPU ($1) vs native" "$ref" collatz "$work/collatz.gpu-$1.npy" "$collatz_base" "$n"; }
  gpu_tiers collatz "$n" check_collatz -- --output "$work/collatz.gpu-%T.npy" "${app[@]}"
  c=$(wwrun cpu collatz.cpu "$sub" "$cpu_repeat" -- --tier compiled --output "$work/collatz.cpu.npy" "${app[@]}")
  if [[ -n $c ]]; then
    check "collatz CPU vs native" "$ref" collatz "$work/collatz.cpu.npy" "$collatz_base" "$sub"
    if ((have_backend)); then
      wwrun gpu collatz.gpusub "$sub" 1 -- --tier compiled --output "$work/collatz.gpusub.npy" "${app[@]}" >/dev/null
      same "$work/collatz.gpusub.npy" "$work/collatz.cpu.npy" "collatz steps"
    fi
  else
    fail "collatz: CPU run"
  fi
  add_row collatz "$n" "$c" "$(cudarun collatz "$n" "$collatz_base")" "$(omprun collatz collatz "$n" "$collatz_base")"
}

for b in $benches; do
  case $b in
    mandel | sha256 | montecarlo | collatz | hashwasm) "bench_$b" ;;
    *) fail "unknown benchmark '$b' (mandel sha256 montecarlo collatz hashwasm)" ;;
  esac
done

# ---------------------------------------------------------- compile times
# Each guest's export compiled for the GPU and the CPU: uncached (--no-cache,
# the compiler's whole time), then from the cache (a second compile of the
# same request: codegen, key, load).
compile_rows=()
compile_times() {
  local name=$1 wasm=$2 invoke=$3 be u h
  [[ -f $wasm ]] || return 0
  for be in gpu cpu; do
    ((have_backend)) || [[ $be == cpu ]] || continue
    "$ww" compile --backend "$be" --invoke "$invoke" --no-cache "$wasm" >"$work/compile.$name.$be.log" 2>&1 ||
      { fail "compile $name for $be: $(tail -n 1 "$work/compile.$name.$be.log")"; continue; }
    # (GPU code comes in two layouts, a line each: the first's time.)
    u=$(grep -oE 'total [0-9.]+ ms' "$work/compile.$name.$be.log" | head -n 1 | grep -oE '[0-9.]+')
    "$ww" compile --backend "$be" --invoke "$invoke" "$wasm" >/dev/null 2>&1
    "$ww" compile --backend "$be" --invoke "$invoke" "$wasm" >"$work/compile.$name.$be.hit.log" 2>&1
    h=$(grep -oE 'total [0-9.]+ ms' "$work/compile.$name.$be.hit.log" | head -n 1 | grep -oE '[0-9.]+')
    grep -q "cache hit" "$work/compile.$name.$be.hit.log" || fail "compile $name for $be: the second compile missed the cache"
    compile_rows+=("$name|$be|$u|$h")
  done
}
compile_times mandel "$bin/mandel.wasm" render
compile_times sha256 "$bin/sha256.wasm" hash
compile_times montecarlo "$bin/montecarlo.wasm" price
compile_times collatz "$bin/collatz.wasm" collatz
compile_times hashwasm "$bin/hashwasm_sha256.wasm" Hash_Calculate

# ----------------------------------------------------------------- table
# stat FILE KEY: a number from a --stats file (one key per line).
stat() { grep -m1 -oE "\"$2\": *[0-9.eE+-]+" "$1" 2>/dev/null | grep -oE '[0-9.eE+-]+$'; }

# Where each GPU run's time went (the last run of each row, from --stats).
fmt_split() {
  local f='%-22s %9s %9s %9s %9s %9s %9s %9s %12s %10s %6s\n' j tag
  # shellcheck disable=SC2059
  printf "$f" run "wall ms" plan upload "mem setup" kernel download "other" "B/instance" "wave" waves
  for j in "$work"/*.gpu-*.stats.json; do
    [[ -f $j ]] || continue
    tag=$(basename "$j" .stats.json)
    local w p u m k d
    w=$(awk -v s="$(stat "$j" wall_s)" 'BEGIN { printf "%.1f", s * 1000 }')
    p=$(stat "$j" plan); u=$(stat "$j" upload); m=$(stat "$j" "memory set-up"); k=$(stat "$j" kernel); d=$(stat "$j" download)
    # shellcheck disable=SC2059
    printf "$f" "$tag" "$w" "$(printf %.1f "$p")" "$(printf %.1f "$u")" "$(printf %.1f "$m")" "$(printf %.1f "$k")" \
      "$(printf %.1f "$d")" "$(awk -v w="$w" -v a="$p" -v b="$u" -v c="$m" -v e="$k" -v g="$d" 'BEGIN { printf "%.1f", w - a - b - c - e - g }')" \
      "$(stat "$j" bytes_per_instance)" "$(stat "$j" wave_size)" "$(stat "$j" waves)"
  done
  echo "(ms of the batch's wall time by phase, from wasmwarp --stats; other = the rest: host-side"
  echo " arguments, results and bookkeeping. B/instance: device memory per instance, wave: instances per wave)"
}

fmt_table() {
  local f='%-11s %9s %13s %13s %13s %13s %14s %15s %13s %9s %9s\n'
  # shellcheck disable=SC2059
  printf "$f" benchmark instances "interp/s" "interp kern/s" "compiled/s" "compiled kern" "CPU compiled/s" \
    "CUDA kernel/s" "OpenMP C/s" "kern/CUDA" "batch/OMP"
  local r name n gi ki gc kc c k o be u h
  ratio() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf p, a / b; else printf "-" }'; }
  for r in "${rows[@]}"; do
    IFS='|' read -r name n gi ki gc kc c k o <<<"$r"
    # shellcheck disable=SC2059
    printf "$f" "$name" "$n" "${gi:--}" "${ki:--}" "${gc:--}" "${kc:--}" "${c:--}" "${k:--}" "${o:--}" \
      "$(ratio "$kc" "${k#\?}" %.3f)" "$(ratio "$gc" "$o" %.2f)"
  done
  echo "(instances per second. interp / compiled: wasmwarp --backend gpu --tier interp|compiled, median of"
  echo " $repeat runs of its rate (batch wall time: upload, memory set-up, kernel, download); kern: the same"
  echo " runs' kernel time alone. CPU compiled: --backend cpu --tier compiled, $threads threads, on 1/$cpu_div of"
  echo " the instances. CUDA: the hand-written kernel alone, median of 7 after warm-up ('?' = it failed)."
  echo " OpenMP C: gcc -O2 -fopenmp of the same algos.h over the host's threads, median of 5."
  echo " kern/CUDA = compiled kernel / CUDA kernel; batch/OMP = compiled whole batch / OpenMP C."
  echo " $((fails)) check(s) failed)"
  if ((${#compile_rows[@]})); then
    echo
    printf '%-11s %-4s %14s %14s\n' guest tier "uncached ms" "cached ms"
    for r in "${compile_rows[@]}"; do
      IFS='|' read -r name be u h <<<"$r"
      printf '%-11s %-4s %14s %14s\n' "$name" "$be" "${u:--}" "${h:--}"
    done
    echo "(wasmwarp compile --backend B --invoke EXPORT: codegen + compiler + load, as printed by the"
    echo " command; uncached with --no-cache, cached = a second compile of the same request)"
  fi
}
echo
{
  fmt_table
  ((have_stats)) && { echo; fmt_split; }
} | tee "$table"
echo "outputs and logs in $work"
((fails == 0)) || exit 1
exit 0
