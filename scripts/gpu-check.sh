#!/usr/bin/env bash
# On the GPU machine, in one call: the GPU unit tests (both tiers) and
# compute-sanitizer (memcheck, racecheck) over them, the ten guest programs and the examples on every backend and tier,
# the WASI test suite on both GPU tiers, real WASI programs from npm (CPython, flite, esbuild)
# against node's outputs, the spec suite
# and the randomized differential test through the GPU interpreter and
# through compiled GPU code, start-up latency, the benchmarks (both tiers,
# CUDA, OpenMP C, compile times), Nsight Compute on the compiled kernels,
# and several GPUs (or one shared) in one process and under mpirun (part
# gpus: outputs byte-identical to one GPU's, the scaling table of
# bench/gpus/run.sh), and with an older build in the bundle (gpu-prepare's
# WW_AB_OLD) the before/after table of bench/gpu/ab.sh. Everything goes to
# ./gpu-check-out (or GPU_CHECK_DIR); the main
# logs are also copied to $OUT when it is set (the device tool returns at
# most 8 files). A short table is printed last.
# usage: scripts/gpu-check.sh [BUNDLE]   (made here by scripts/gpu-prepare.sh)
#   env PARTS: which parts run
#              [unit sanitize python programs examples auto wasi wasisuite npmwasi spec spec3 diff sparse startup bench wasibench
#               programsbench chain ncu scale interrupt simd gpus ab; also layout, deadline, transfers]
#   env for part npmwasi: NPMWASI_LIMIT (seconds per tier, default 900), NPM_COMPILED (programs on compiled
#              code, default flite), NPM_ONLY (tests/wasi/npm-programs.sh's)
#   env for part wasisuite: WASISUITE_TIERS (default "interp compiled"), WASISUITE_LIMIT (seconds per tier,
#              default 900; NVRTC takes minutes over each of the suite's Rust programs)
#   env for part wasibench: PY_SIZES, PY_TIMEOUT (bench/wasi/run-gpu.sh's CPython rows)
#   env for part sanitize: SANITIZE_FILTER (a gtest filter of ww_test_gpu's tests, default all),
#              SANITIZE_LIMIT (seconds per tool, default 600)
#   env for part ab: AB_RUNS (runs per binary and row, default 5), AB_ROWS (bench/gpu/ab.sh's ROWS)
#   env for part gpus: GPU_COUNTS, GPUS_SCALE, GPUS_REPEAT, GPUS_CHECK_DIV,
#              BENCHES, TIERS (bench/gpus/run.sh's)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
B=$(realpath -m "${1:-$root/.device-build}")
# The bundle as gpu-prepare.sh packed it for the device tool.
if [[ ! -d $B && -f $root/.device-pack/bundle.tar.xz ]]; then
  tar -xJf "$root/.device-pack/bundle.tar.xz" -C "$(dirname "$B")" || exit 1
fi
O=${GPU_CHECK_DIR:-$PWD/gpu-check-out}
mkdir -p "$O"
export LD_LIBRARY_PATH=$B/lib:${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Compiled code: the bundle's cache (the spec modules, prefilled), then
# whatever this run compiles.
export WW_CACHE_DIR=${WW_CACHE_DIR:-$B/code-cache}
# Large entries travel compressed (gpu-prepare's WW_SQLITE_COMPILED).
[[ -d $B/code-cache ]] && find "$B/code-cache" -name '*.wwc.xz' -exec unxz -f {} +
W=$B/wasmwarp
G=$B/guests/rust
rows=()
row() { rows+=("$(printf '%-34s %s' "$1" "$2")"); }
parts=" ${PARTS:-unit sanitize python programs examples auto wasi wasisuite npmwasi spec spec3 diff sparse startup bench wasibench programsbench chain ncu scale interrupt simd gpus ab} "
want() { [[ $parts == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$O/device.txt"
# The machine's uptime when a timed part starts: in a lent machine's first
# minutes, runs can come out much slower.
uptime_row() {
  local up
  up=$(cut -d. -f1 /proc/uptime)
  row "$1 started" "machine up $up s$( ((up < 300)) && echo ": under 5 minutes, its figures may be slow")"
}

# 1. GPU unit tests.
if want unit; then
  "$B/ww_test_gpu" >"$O/gpu-unit.log" 2>&1
  row "gpu unit tests" "$(grep -E '^\[  (PASSED|FAILED) ' "$O/gpu-unit.log" | tr '\n' ' ')"
  # The batch engine's tests, its GPU cases included (rows streamed wave by wave).
  "$B/ww_test_batch" >"$O/batch-unit.log" 2>&1
  row "batch unit tests" "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$O/batch-unit.log" | tr '\n' ' ')"
  # The public C++ API, its GPU call included.
  "$B/ww_test_api" >"$O/api-unit.log" 2>&1
  row "api unit tests" "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$O/api-unit.log" | tr '\n' ' ')"
fi

# 1a. compute-sanitizer over the GPU unit tests: memcheck (out-of-bounds
# and misaligned device accesses, leaks of device memory) and racecheck
# (shared-memory hazards). Each tool's row says its error summary, or that
# its time limit cut it short.
if want sanitize; then
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -n 1)
  if [[ -z $CS ]]; then
    row "compute-sanitizer" "not on this machine"
  else
    for tool in memcheck racecheck; do
      extra=()
      [[ $tool == memcheck ]] && extra=(--leak-check full)
      timeout "${SANITIZE_LIMIT:-600}" "$CS" --tool $tool "${extra[@]}" --error-exitcode 9 \
        "$B/ww_test_gpu" --gtest_filter="${SANITIZE_FILTER:-*}" >"$O/sanitize-$tool.log" 2>&1
      rc=$?
      summary=$(grep -E '^========= (ERROR|RACECHECK) SUMMARY' "$O/sanitize-$tool.log" | tail -n 1 | sed 's/^========= //')
      tests=$(grep -E '^\[  (PASSED|FAILED) ' "$O/sanitize-$tool.log" | tr '\n' ' ')
      ((rc == 124)) && summary="cut at ${SANITIZE_LIMIT:-600} s after $(grep -c '^\[       OK ' "$O/sanitize-$tool.log") tests"
      row "compute-sanitizer $tool (gpu unit)" "rc=$rc ${summary:-no summary} $tests"
    done
  fi
fi

# 1b. The Python extension, built here for this machine's python3 (its
# NumPy and pybind11 from pip) from the bundle's static libraries, and its
# tests, the GPU's included.
if want python; then
  P=$O/python
  mkdir -p "$P/wasmwarp"
  ext=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  libs=()
  for l in api batch compiled cache gpu intrinsics wasi runtime exec_cpu store translate validate decode common; do
    libs+=("$B/pylibs/libww_$l.a")
  done
  # shellcheck disable=SC2046
  if c++ -O2 -shared -fPIC -std=c++20 $(python3 -m pybind11 --includes) -I"$root/include" -I"$B/pyinclude" \
      "$root/python/src/module.cc" \
      -o "$P/wasmwarp/_wasmwarp$ext" -Wl,--start-group "${libs[@]}" -Wl,--end-group "$B"/lib/libpng*.so* \
      -L"${CUDA_HOME:-/usr/local/cuda}/lib64" -lcudart_static -lrt -ldl -lpthread >"$P/build.log" 2>&1; then
    cp "$root"/python/wasmwarp/*.py "$P/wasmwarp/"
    PYTHONPATH=$P WW_TEST_WASM_DIR=$B/pywasm python3 -m pytest -q -p no:cacheprovider -rs "$root/python/tests" \
      >"$P/pytest.log" 2>&1
    row "python (pytest)" "$(tail -n 1 "$P/pytest.log")"
    # The example's million instances on the GPU and on the CPU backend.
    for be in gpu cpu; do
      t0=$(date +%s.%N)
      PYTHONPATH=$P python3 "$root/examples/python/option_sweep.py" "$B/pywasm/option.wasm" --backend $be \
        --png "$P/option_sweep-$be.png" >"$P/option_sweep-$be.txt" 2>&1
      echo "  option_sweep $be: rc=$? $(echo "$(date +%s.%N) - $t0" | awk '{printf "%.2f", $1 - $3}') s (process)" >>"$P/summary.txt"
    done
    row "python example" "$(tr '\n' ';' <"$P/summary.txt")"
  else
    row "python (pytest)" "extension did not build: $(tail -n 1 "$P/build.log")"
  fi
fi

if want programs; then
# 2. The ten programs of the design on both backends.
ok=0; bad=0
while read -r prog want args; do
  g=$("$W" run --backend gpu --tier interp --invoke main "$G/$prog.wasm" $args 2>&1)
  gc=$("$W" run --backend gpu --tier compiled --invoke main "$G/$prog.wasm" $args 2>&1)
  c=$("$W" run --backend cpu --tier interp --invoke main "$G/$prog.wasm" $args 2>&1)
  cc=$("$W" run --backend cpu --tier compiled --invoke main "$G/$prog.wasm" $args 2>&1)
  if [[ $g == "$want" && $gc == "$want" && $c == "$want" && $cc == "$want" ]]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "MISMATCH $prog: gpu=$g gpu-compiled=$gc cpu=$c cpu-compiled=$cc want=$want"; fi
done >"$O/programs.log" <<'LIST'
01_helper_function 25 3
02_two_helpers 20 3
03_recursive_factorial 120 5
06_nested_calls 13 10
07_three_parameters 50 0 100 50
08_callee_locals 159 5
09_mutual_recursion 7 5
10_call_chain 8 0
LIST
for tier in interp compiled; do
  "$W" run --backend gpu --tier $tier -q -n 100000 --output "$O/tid-$tier.csv" --invoke main "$G/04_thread_id.wasm" >>"$O/programs.log" 2>&1
  if awk -F, 'NR > 1 && $1 != $2 { bad = 1 } END { exit bad }' "$O/tid-$tier.csv"; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "MISMATCH thread ids ($tier)" >>"$O/programs.log"; fi
  "$W" run --backend gpu --tier $tier -q -n 800 --image 800x1="$O/grad-gpu-$tier.png" --invoke main "$G/05_pixel_output.wasm" 1 >/dev/null 2>>"$O/programs.log"
done
"$W" run --backend cpu -q -n 800 --image 800x1="$O/grad-cpu.png" --invoke main "$G/05_pixel_output.wasm" 1 >/dev/null 2>>"$O/programs.log"
for tier in interp compiled; do
  if cmp -s "$O/grad-gpu-$tier.png" "$O/grad-cpu.png"; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "MISMATCH gradient png ($tier)" >>"$O/programs.log"; fi
done
row "ten programs, gpu+cpu x interp+compiled" "$ok passed, $bad failed"
fi

if want examples; then
# 2b. The examples (demo), on the GPU through both tiers, against native.
E=$B/examples
ok=0; bad=0
for tier in interp compiled; do
  "$W" run --backend gpu --tier $tier -q --invoke row -n 768 --output "$O/mandel-$tier.csv" \
    --mem-out "pixels:2048=$O/pixels-$tier.bin" --image "1024x768=$O/mandel-$tier.png" "$E/mandelbrot-image.wasm" @index >>"$O/examples.log" 2>&1
  if diff -q <("$E/mandelbrot.native" 0 768) <(tail -n +2 "$O/mandel-$tier.csv" | cut -d, -f2) >/dev/null &&
    cmp -s <("$E/mandelbrot.native" pixels 0 768) "$O/pixels-$tier.bin"; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "MISMATCH mandelbrot ($tier)" >>"$O/examples.log"; fi
  "$W" run --backend gpu --tier $tier -q --invoke hash_seed -n 2000 --output "$O/hash-$tier.csv" "$E/hash.wasm" @index >>"$O/examples.log" 2>&1
  if diff -q <("$E/hash.native" 0 2000) <(tail -n +2 "$O/hash-$tier.csv" | cut -d, -f2) >/dev/null; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "MISMATCH hash ($tier)" >>"$O/examples.log"; fi
done
cmp -s "$O/mandel-interp.png" "$O/mandel-compiled.png" && ok=$((ok + 1)) || { bad=$((bad + 1)); echo "MISMATCH mandelbrot png interp vs compiled" >>"$O/examples.log"; }
row "examples (gpu, both tiers) = native" "$ok passed, $bad failed"

fi

if want auto; then
# 2c. --tier auto on an uncached module: the first stretches run on the
# interpreter while NVRTC compiles, the rest compiled; every answer checked.
N=$B/bench
"$W" run --backend gpu --tier auto --no-cache -n 4194304 --output "$O/auto-collatz.npy" \
  --invoke collatz "$N/collatz.wasm" 1000000000000 @index >"$O/auto.log" 2>&1
if "$N/gpu_ref" collatz "$O/auto-collatz.npy" 1000000000000 4194304 >>"$O/auto.log" 2>&1; then
  row "tier auto (gpu, uncached)" "ok: $(grep -E '^tiers?:' "$O/auto.log" | head -n 1)"
else
  row "tier auto (gpu, uncached)" "FAILED (auto.log)"
fi
# A compile that outlasts its batch (NVRTC's compile of option.wasm's
# sparse code takes seconds): the batch waits --compile-wait (1 s), then
# the process ends without it; its outputs equal the interpreter's.
if [[ -f $B/pywasm/option.wasm ]]; then
  rm -rf "$O/cw-cache"
  t0=$(date +%s.%N)
  WW_CACHE_DIR=$O/cw-cache "$W" run --backend gpu --tier auto -n 1000000 --output "$O/cw-auto.csv" --invoke payoff \
    "$B/pywasm/option.wasm" @index 0.2 >"$O/compile-wait.log" 2>&1
  rc=$?
  secs=$(echo "$(date +%s.%N) - $t0" | awk '{printf "%.2f", $1 - $3}')
  "$W" run --backend gpu --tier interp -q -n 1000000 --output "$O/cw-interp.csv" --invoke payoff \
    "$B/pywasm/option.wasm" @index 0.2 >>"$O/compile-wait.log" 2>&1
  if ((rc == 0)) && cmp -s "$O/cw-auto.csv" "$O/cw-interp.csv" && grep -q "compile: still running" "$O/compile-wait.log" &&
    ! find "$O/cw-cache" -name '.tmp-*' 2>/dev/null | grep -q .; then
    row "auto tier, compile outlasting the batch" "ok: process $secs s, outputs = interpreter"
  elif ((rc == 0)) && cmp -s "$O/cw-auto.csv" "$O/cw-interp.csv"; then
    row "auto tier, compile outlasting the batch" "compile finished within the wait (process $secs s)"
  else
    row "auto tier, compile outlasting the batch" "FAILED rc=$rc (compile-wait.log)"
  fi
fi
fi

if want wasi; then
# 2d. WASI programs (C, Rust, SQLite) on the GPU against node's outputs.
if [[ -d $B/wasi/bin ]]; then
  WW_TIER=interp bash "$root/tests/wasi/gpu-compare.sh" "$W" "$B/wasi" >"$O/wasi-gpu.log" 2>&1
  row "wasi programs on gpu = node" "$(tail -n 1 "$O/wasi-gpu.log")"
  # Compiled code: a few programs (NVRTC takes minutes per libc-sized
  # program; WW_WASI_COMPILED widens the set).
  WW_TIER=compiled WW_ONLY=${WW_WASI_COMPILED:-args,exit42,batch_exit,random} \
    bash "$root/tests/wasi/gpu-compare.sh" "$W" "$B/wasi" >"$O/wasi-gpu-compiled.log" 2>&1
  row "wasi on compiled gpu = node" "$(tail -n 1 "$O/wasi-gpu-compiled.log")"
  for t in interp compiled; do
    bash "$root/tests/wasi/gpu-files.sh" "$W" "$t" >"$O/gpu-files-$t.log" 2>&1
    row "gpu.read/write_file ($t)" "$(tail -n 1 "$O/gpu-files-$t.log")"
  done
else
  row "wasi programs on gpu = node" "not in the bundle"
fi
fi

if want wasisuite; then
# 2e. The WASI test suite (preview 1) on both GPU tiers: through its own
# runner, a process a test, and as batches, every instance in a directory
# of its own (tests/wasi/testsuite/run.sh).
if [[ -d $B/wasi-testsuite ]]; then
  for t in ${WASISUITE_TIERS:-interp compiled}; do
    PYTHONPATH=$B/pyrunner${PYTHONPATH:+:$PYTHONPATH} WASI_TESTSUITE=$B/wasi-testsuite \
      timeout "${WASISUITE_LIMIT:-900}" bash "$root/tests/wasi/testsuite/run.sh" "$O/wasisuite-$t" "$W" --backend gpu \
      --tier $t >"$O/wasisuite-$t.log" 2>&1
    row "wasi testsuite, gpu $t" "rc=$? $(grep -E '^(single runs|batches of)' "$O/wasisuite-$t.log" | tr '\n' ' ')"
  done
else
  row "wasi testsuite" "not in the bundle"
fi
fi

if want npmwasi; then
# 2f. Real WASI programs from npm (CPython 3.12, flite, esbuild) on the GPU
# against node's outputs that gpu-prepare recorded: single runs (batches
# of one) and batches of 4 in every stdio mode (tests/wasi/npm-programs.sh
# --replay). Compiled code for flite only by default: NVRTC over CPython's
# 26 MB or esbuild's 20 MB would outlast the call.
if [[ -d $B/npm-wasi/expected ]]; then
  for t in interp compiled; do
    NPM_TIERS=$t timeout "${NPMWASI_LIMIT:-900}" bash "$root/tests/wasi/npm-programs.sh" --replay "$W" "$B/npm-wasi" gpu \
      >"$O/npmwasi-$t.log" 2>&1
    rc=$?
    row "npm wasi programs, gpu $t" "rc=$rc$( ((rc == 124)) && echo " (cut at ${NPMWASI_LIMIT:-900} s)") $(tail -n 1 "$O/npmwasi-$t.log")"
  done
else
  row "npm wasi programs" "not in the bundle"
fi
fi

if want spec; then
# 3. The spec suite on the GPU backend: interpreter kernel, compiled code.
"$B/ww-spectest" --backend gpu --expected-failures "$B/expected-failures-gpu.txt" "$B"/spec/*.json >"$O/spec-gpu.log" 2>&1
row "spec suite, gpu interpreter" "$(tail -n 1 "$O/spec-gpu.log")"
"$B/ww-spectest" --backend gpu --tier compiled --expected-failures "$B/expected-failures-gpu.txt" "$B"/spec/*.json >"$O/spec-gpu-compiled.log" 2>&1
row "spec suite, gpu compiled" "$(tail -n 1 "$O/spec-gpu-compiled.log")"
# Invokes that ran on the CPU instead (re-exports only, when every call
# out of an instance runs on the GPU).
row "spec suite, run on the CPU" "$(grep -m1 -oE 'ran on CPU \(not GPU-runnable\): [0-9]+ invokes' "$O/spec-gpu.log")"
fi

if want spec3; then
# 3b. The WebAssembly 3.0 features that run (extended constant expressions,
# relaxed SIMD), from the 3.0 suite's files that CI runs on the CPU
# (tests/spec/suite3-landed.txt), through both GPU tiers.
if [[ -d $B/spec3 ]]; then
  "$B/ww-spectest" --backend gpu "$B"/spec3/*.json >"$O/spec3-gpu.log" 2>&1
  row "3.0 suite (landed), gpu interp" "rc=$? $(tail -n 1 "$O/spec3-gpu.log")"
  "$B/ww-spectest" --backend gpu --tier compiled --cache-dir "$O/spec3-cache" "$B"/spec3/*.json \
    >"$O/spec3-gpu-compiled.log" 2>&1
  row "3.0 suite (landed), gpu compiled" "rc=$? $(tail -n 1 "$O/spec3-gpu-compiled.log")"
else
  row "3.0 suite" "not in the bundle"
fi
fi

if want diff; then
# 4. Randomized differential test: the CPU interpreter vs the GPU
# interpreter kernel and vs compiled GPU code.
"$B/ww-difftest" "$B"/spec/*.json >"$O/difftest.log" 2>&1
row "differential cpu / gpu interp" "$(tail -n 1 "$O/difftest.log")"
"$B/ww-difftest" --tier compiled "$B"/spec/*.json >"$O/difftest-compiled.log" 2>&1
row "differential cpu / gpu compiled" "$(tail -n 1 "$O/difftest-compiled.log")"
fi

if want sparse; then
# 4b. Sparse memory under the spec suite and the differential test: every
# memory op through chunks materialised on first write.
# Compiled code for the sparse layout is not in the bundle's cache, so the
# compiled difftest compiles every module: it runs when SPARSE_COMPILED=1.
timeout "${SPARSE_LIMIT:-300}" "$B/ww-spectest" --backend gpu --gpu-layout sparse --expected-failures "$B/expected-failures-gpu.txt" "$B"/spec/*.json >"$O/spec-gpu-sparse.log" 2>&1
row "spec suite, gpu interp, sparse" "rc=$? $(tail -n 1 "$O/spec-gpu-sparse.log")"
timeout "${SPARSE_LIMIT:-300}" "$B/ww-difftest" --gpu-layout sparse "$B"/spec/*.json >"$O/difftest-sparse.log" 2>&1
row "differential cpu / gpu interp, sparse" "rc=$? $(tail -n 1 "$O/difftest-sparse.log")"
if [[ ${SPARSE_COMPILED:-0} == 1 ]]; then
  timeout "${SPARSE_LIMIT:-300}" "$B/ww-difftest" --tier compiled --gpu-layout sparse "$B"/spec/*.json >"$O/difftest-compiled-sparse.log" 2>&1
  row "differential cpu / gpu compiled, sparse" "rc=$? $(tail -n 1 "$O/difftest-compiled-sparse.log")"
fi
fi

if want startup; then
# 5. Start-up: command start to first result, small module, GPU backend.
t0=$(date +%s.%N)
"$W" run --backend gpu --tier interp --invoke main "$G/01_helper_function.wasm" 3 >/dev/null 2>&1
t1=$(date +%s.%N)
row "start to first result (gpu interp)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }') ms"
"$W" compile --backend gpu --invoke main "$G/01_helper_function.wasm" >/dev/null 2>&1
t0=$(date +%s.%N)
"$W" run --backend gpu --tier compiled --invoke main "$G/01_helper_function.wasm" 3 >/dev/null 2>&1
t1=$(date +%s.%N)
row "start to first result (gpu compiled, cached)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }') ms"
fi

if want bench; then
uptime_row bench
# 6. Benchmarks with the default (auto) memory layout, then the GPU runs
# again with each layout forced, for the comparison.
BUILD_DIR=$B/bench bash "$root/bench/gpu/run.sh" "$W" "$O/bench-table.txt" "$O/bench-work" >"$O/bench.log" 2>&1
row "benchmarks (auto layout)" "exit $? (table below)"
fi
if want wasibench; then
# 6b. WASI batches against the CPU backend on every core: greet at 10K,
# 100K and 1M on both GPU tiers, SQLite at 10K and 100K on the
# interpreter, and on compiled code when the bundle carries it, and
# CPython scripts (PY_SIZES, default 2048: several minutes on the GPU
# interpreter).
sql_tiers=interp
[[ -f $B/code-cache/sqlite-compiled ]] && sql_tiers="interp compiled"
WORK=$O/wasi-bench-work SQL_TIERS=$sql_tiers bash "$root/bench/wasi/run-gpu.sh" "$W" "$B" >"$O/wasi-bench.txt" 2>&1
row "wasi bench (rows = cpu's)" "exit $?, $(grep -c ' identical$' "$O/wasi-bench.txt") identical, $(grep -c ' DIFFER$' "$O/wasi-bench.txt") differ ($sql_tiers)"
rm -f "$O"/wasi-bench-work/*.out
fi

if want programsbench; then
# 6c. Real programs as batches (bench/programs/run.sh: CPython scripts,
# SQLite queries, flite, esbuild), the GPU against the CPU backend on every
# core, outputs compared instance by instance; its sizes from N_python,
# N_sqlite, N_flite, N_esbuild.
if [[ -f $B/npm-wasi/bin/python.wasm && -f $B/wasi/bin/sqlite.wasm ]]; then
  pm=$O/programs-modules
  mkdir -p "$pm"
  ln -sf "$B"/npm-wasi/bin/{python,flite,esbuild}.wasm "$B/wasi/bin/sqlite.wasm" "$B/wasi/fx/db/t.db" "$pm/"
  MODULES=$pm bash "$root/bench/programs/run.sh" "$W" "$O/programs-bench-work" >"$O/programs-bench.txt" 2>&1
  row "programs bench (outputs = cpu's)" "exit $?, $(grep -c ' identical$' "$O/programs-bench.txt") rows identical"
  rm -rf "$O/programs-bench-work/out"
else
  row "programs bench" "not in the bundle"
fi
fi

if want simd; then
# SIMD on the GPU interpreter: the vectorised C program, as exports and as
# a WASI command, against its native build (tests/simd/simd-c.sh), then the kernels with and without
# -msimd128 on each way that runs them (kernel ms, best of 3).
SIMD_WASM=$B/simd/kernels-simd.wasm SIMD_WASI_WASM=$B/simd/kernels-wasi.wasm SIMD_NATIVE=$B/simd/kernels_native SIMD_N=100000 \
  WAYS="gpu:interp gpu:compiled cpu:interp cpu:compiled" bash "$root/tests/simd/simd-c.sh" "$W" "$O/simd" >"$O/simd.log" 2>&1
row "simd C program = native" "$(grep -c '= native' "$O/simd.log") passed, $(grep -cE 'MISMATCH|FAILED' "$O/simd.log") failed"
# Every SIMD instruction with random operands against the CPU interpreter.
"$B/ww-difftest" --backend gpu -n 256 --seed 1 "$B/simd/simd_ops.json" >"$O/simd-difftest.log" 2>&1
row "simd difftest, gpu interp" "$(tail -n 1 "$O/simd-difftest.log")"
"$B/ww-difftest" --backend gpu --tier compiled -n 256 --seed 1 "$B/simd/simd_ops.json" >"$O/simd-difftest-compiled.log" 2>&1
row "simd difftest, gpu compiled" "$(tail -n 1 "$O/simd-difftest-compiled.log")"
# The suite's 56 SIMD files through both GPU tiers (nothing expected to
# fail, as on the CPU); the bundle carries them packed.
mkdir -p "$O/spec-simd" && tar -xJf "$B/spec-simd.tar.xz" -C "$O/spec-simd"
timeout "${SIMD_SPEC_LIMIT:-400}" "$B/ww-spectest" --backend gpu "$O"/spec-simd/*.json >"$O/spec-simd-gpu.log" 2>&1
row "simd spec suite, gpu interp" "rc=$? $(tail -n 1 "$O/spec-simd-gpu.log")"
timeout "${SIMD_SPEC_LIMIT:-400}" "$B/ww-spectest" --backend gpu --tier compiled --cache-dir "$O/spec-simd-cache" \
  "$O"/spec-simd/*.json >"$O/spec-simd-gpu-compiled.log" 2>&1
row "simd spec suite, gpu compiled" "rc=$? $(tail -n 1 "$O/spec-simd-gpu-compiled.log")"
{
  printf '%-10s %-13s %12s %12s\n' kernel way "simd ms" "scalar ms"
  for way in gpu:interp gpu:compiled cpu:interp cpu:compiled; do
    for k in dot saxpy histogram brighten; do
      line=$(printf '%-10s %-13s' "$k" "$way")
      for v in simd scalar; do
        best=
        for r in 1 2 3; do
          "$W" run -q -n 100000 --backend "${way%%:*}" --tier "${way#*:}" --stats "$O/simd/s.json" --invoke "$k" \
            "$B/simd/kernels-$v.wasm" @index >/dev/null 2>&1
          ms=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["phases_ms"]["kernel"])' "$O/simd/s.json" 2>/dev/null)
          [[ -z $best ]] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }' && best=$ms
        done
        line+=$(printf ' %12.2f' "$best")
      done
      echo "$line"
    done
  done
} >"$O/simd-table.txt"
row "simd kernels" "see simd table"
fi

if want chain; then
# 6b. Chained calls on resident instances against a batch or an API call
# per step, the state through the host (bench/chain/run.sh).
N=$B/bench
for be in gpu cpu; do
  steps=1000 && [[ $be == cpu ]] && steps=100
  bash "$root/bench/chain/run.sh" "$W" "$N/api_chain_bench" "$N/particle.wasm" "$N/particle_ref" $be 1000000 $steps \
    "${CHAIN_SEPARATE:-10}" >"$O/chain-$be.txt" 2>&1
  row "chain bench ($be)" "exit $? ($(awk 'NR == 2 {print $NF " s one launch"}' "$O/chain-$be.txt"))"
done
# The API's call overhead on the GPU, C++ and Python (the extension the
# python part built).
if [[ -d $O/python/wasmwarp ]]; then
  mkdir -p "$O/apibuild/bench"
  ln -sf "$N/api_call_overhead" "$O/apibuild/bench/api_call_overhead"
  ln -sfn "$O/python" "$O/apibuild/python"
  INC_WASM=$N/inc.wasm PYTHON=python3 bash "$root/bench/api/run.sh" "$O/apibuild" gpu 5 >"$O/api-overhead-gpu.txt" 2>&1
  row "api overhead (gpu)" "exit $?"
fi
fi
if want layout; then
for l in ${LAYOUTS:-contiguous sparse interleaved}; do
  GPU_LAYOUT=$l CPU_DIV=100 BUILD_DIR=$B/bench bash "$root/bench/gpu/run.sh" "$W" \
    "$O/bench-table-$l.txt" "$O/bench-work-$l" >>"$O/bench.log" 2>&1
  row "benchmarks ($l)" "exit $? (table below)"
done
fi

if want ncu; then
# 7. Nsight Compute on the compiled kernels of the four bench guests and
# thread-id:
# registers, occupancy, memory throughput (clocks left alone).
: >"$O/ncu.txt"
N=$B/bench
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)
"$N/gpu_ref" gen-messages "$O/ncu-messages.bin" 1000000
for spec in "mandel|-n 1048576 --image 3840x2160=$O/ncu.png --invoke render $N/mandel.wasm 3840 2160 1" \
            "collatz|-n 1048576 --invoke collatz $N/collatz.wasm 1000000000000 @index" \
            "montecarlo|-n 262144 --invoke price $N/montecarlo.wasm @index 256" \
            "sha256|-n 1000000 --mem-in input_ptr=$O/ncu-messages.bin --mem-in-size 64 --invoke hash $N/sha256.wasm" \
            "thread-id|-n 1000000 --invoke main $G/04_thread_id.wasm"; do
  name=${spec%%|*}
  args=${spec#*|}
  "$W" run --backend gpu --tier compiled -q $args >/dev/null 2>&1  # fills the cache
  # The code's load launches its kernel once with no instances (its first
  # launch's cost paid there, compiled_launcher.cu): the batch's is the next.
  timeout 300 "$NCU" --clock-control none -k ww_compiled_kernel --launch-skip 1 -c 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    "$W" run --backend gpu --tier compiled -q $args >"$O/ncu-$name.log" 2>&1
  { echo "== $name"; grep -E "Grid Size|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|Compute \(SM\) Throughput|Duration|Local Memory|Block Limit Registers|DRAM Throughput" "$O/ncu-$name.log"; } >>"$O/ncu.txt"
done
row "ncu on compiled kernels" "see ncu.txt"
fi

if want scale; then
uptime_row scale
# 8. Scale: real modules at millions of instances on both tiers:
# the time split, device memory per instance, waves and the host's peak
# memory, from --stats; every digest checked against python's hashlib/zlib.
S=$O/scale
mkdir -p "$S"
N=$B/bench
: >"$O/scale.txt"
"$N/gpu_ref" gen-messages "$S/msgs.bin" 16777216
# The run of median wall time of three (its stats in `$S/TAG.json`) when
# the first took under 50 ms: a batch of a few ms varies a lot from run
# to run with the host's state. ENV: "" or VAR=VALUE for every run.
median_of_three() {  # ENV TAG ARGS...
  local envs=$1 tag=$2 k rc
  shift 2
  env $envs timeout 400 "$W" run --backend gpu -q --stats "$S/$tag.json" "$@"
  rc=$?
  python3 -c "import json,sys; sys.exit(0 if json.load(open('$S/$tag.json'))['wall_s'] < 0.05 else 1)" 2>/dev/null ||
    return $rc
  for k in 2 3; do env $envs timeout 400 "$W" run --backend gpu -q --stats "$S/$tag.r$k.json" "$@" >/dev/null 2>&1; done
  python3 - "$S/$tag" <<'PY'
import json, os, shutil, sys
t = sys.argv[1]
runs = [t + ".json"] + [f for f in (t + ".r2.json", t + ".r3.json") if os.path.exists(f)]
median = sorted(runs, key=lambda f: json.load(open(f))["wall_s"])[len(runs) // 2]
if median != runs[0]:
    shutil.copy(median, runs[0])
for f in runs[1:]:
    os.remove(f)
PY
  return $rc
}
scale_run() {  # TAG ARGS...
  local tag=$1 rc
  shift
  median_of_three "" "$tag" "$@" >"$S/$tag.log" 2>&1
  rc=$?
  printf '%-24s rc=%-3s %s\n' "$tag" "$rc" "$(tr -d '\n ' <"$S/$tag.json" 2>/dev/null |
    grep -oE '"(completed|wall_s|plan|upload|memoryset-up|kernel|download|bytes_per_instance|wave_size|waves|pool_reruns|host_peak_rss_bytes)":[0-9.eE+-]+|"layout":"[a-z]+"' |
    tr -d '"' | tr '\n' ' ')" >>"$O/scale.txt"
  ((rc == 0)) || tail -n 3 "$S/$tag.log" >>"$O/scale.txt"
}
digests_ok() {  # KIND FILE COUNT
  python3 - "$S/msgs.bin" "$@" <<'PY' >>"$O/scale.txt" 2>&1
import hashlib, sys, zlib
msgs, kind, path, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
m = open(msgs, "rb").read(64 * n); d = open(path, "rb").read()
size = 32 if kind == "sha" else 4
want = lambda i: hashlib.sha256(m[64*i:64*i+64]).digest() if kind == "sha" else zlib.crc32(m[64*i:64*i+64]).to_bytes(4, "big")
bad = sum(1 for i in range(0, n, max(1, n // 100000)) if d[size*i:size*i+size] != want(i))
print(f"  {path.split('/')[-1]}: {'ok' if bad == 0 and len(d) == size * n else f'{bad} WRONG'} (sampled)")
PY
}
"$W" run --backend cpu -q -n 200000 --output "$S/dirty-cpu.csv" --invoke probe "$root/bench/scale/dirty.wat" @index
gcc -O2 -DNATIVE_MAIN "$root/bench/scale/stack_mix.c" -o "$S/stack_mix.native" && "$S/stack_mix.native" 100000000 >"$S/stack_mix.ref"
gcc -O2 -DNATIVE_MAIN "$root/bench/scale/heap_sum.c" -o "$S/heap_sum.native" && "$S/heap_sum.native" 1000000 2000 >"$S/heap_sum.ref"
for tier in interp compiled; do
  for layout in interleaved sparse; do
    "$W" run --backend gpu --tier $tier --gpu-layout $layout -q -n 200000 --gpu-max-wave 4096 --output "$S/dirty-$tier.csv" \
      --invoke probe "$root/bench/scale/dirty.wat" @index >>"$O/scale.txt" 2>&1
    echo "  memory reset between waves ($tier, $layout, 49 waves): $(cmp -s "$S/dirty-cpu.csv" "$S/dirty-$tier.csv" && echo ok || echo MISMATCH)" >>"$O/scale.txt"
  done
  # Sparse memory, all 200,000 instances in one wave.
  "$W" run --backend gpu --tier $tier --gpu-layout sparse -n 200000 --output "$S/dirty-$tier.csv" \
    --invoke probe "$root/bench/scale/dirty.wat" @index 2>&1 | grep -E "gpu memory" >>"$O/scale.txt"
  echo "  sparse memory, one wave ($tier): $(cmp -s "$S/dirty-cpu.csv" "$S/dirty-$tier.csv" && echo ok || echo MISMATCH)" >>"$O/scale.txt"
  scale_run "stackmix-$tier-100M" --tier $tier -n 100000000 --output "$S/stackmix-$tier.npy" --invoke mix "$N/stack_mix.wasm" @index
  echo "  stack_mix 100M ($tier) = native: $(cmp -s <(tail -c 400000000 "$S/stackmix-$tier.npy") "$S/stack_mix.ref" && echo ok || echo MISMATCH)" >>"$O/scale.txt"
  rm -f "$S/stackmix-$tier.npy"
  # Each instance's heap (4 MB) outgrows its first reservation (2 + 16
  # pages): it runs again with more, as the CPU would have grown it.
  "$W" run --backend gpu --tier $tier -n 2000 --output "$S/heap-$tier.csv" --stats "$S/heap-$tier.json" \
    --invoke heap_sum "$N/heap_sum.wasm" 1000000 @index >/dev/null 2>&1
  echo "  heap past the reservation ($tier) = native: $(cmp -s <(tail -n +2 "$S/heap-$tier.csv" | cut -d, -f2,3) \
    <(sed 's/$/,/' "$S/heap_sum.ref") && echo ok || echo MISMATCH)," \
    "$(grep -oE '"(grow_reruns|wall_s)": *[0-9.e-]+' "$S/heap-$tier.json" | tr '\n' ' ')" >>"$O/scale.txt"
  # Compiled rows from a warm code cache (each call starts with an empty
  # one): the 1M rows run once untimed first; the larger ones share their code.
  warm() {
    [[ $tier == compiled ]] || return 0
    "$W" run --backend gpu --tier compiled -q "$@" >/dev/null 2>&1
  }
  warm -n 1000000 --invoke main "$G/04_thread_id.wasm"
  for n in 1000000 10000000; do scale_run "tid-$tier-$n" --tier $tier -n $n --invoke main "$G/04_thread_id.wasm"; done
  # The four bench/gpu programs as bench/gpu/run.sh runs them (its part
  # checks their answers).
  mandel=(-n 8294400 --image 3840x2160="$S/mandel.png" --output "$S/mandel.npy" --invoke render "$N/mandel.wasm" 3840 2160 1)
  bsha=(-n 1000000 --mem-in input_ptr="$S/msgs.bin" --mem-in-size 64 --mem-out output_ptr:32="$S/bsha.bin" --invoke hash "$N/sha256.wasm")
  mc=(-n 1048576 --output "$S/mc.npy" --invoke price "$N/montecarlo.wasm" @index 256)
  collatz=(-n 4194304 --output "$S/collatz.npy" --invoke collatz "$N/collatz.wasm" 1000000000000 @index)
  warm "${mandel[@]}"; warm "${bsha[@]}"; warm "${mc[@]}"; warm "${collatz[@]}"
  scale_run "mandel-$tier" --tier $tier "${mandel[@]}"
  scale_run "bsha-$tier" --tier $tier "${bsha[@]}"
  digests_ok sha "$S/bsha.bin" 1000000
  scale_run "mc-$tier" --tier $tier "${mc[@]}"
  scale_run "collatz-$tier-4M" --tier $tier "${collatz[@]}"
  rm -f "$S"/mandel.png "$S"/*.npy "$S"/bsha.bin
  warm -n 1000000 --mem-in Hash_GetBuffer="$S/msgs.bin" --mem-in-size 64 --mem-out Hash_GetBuffer:32="$S/warm.bin" \
    --invoke Hash_Calculate "$N/hashwasm_sha256.wasm" 64 256
  warm -n 1000000 --init Hash_Init:3988292384 --mem-in Hash_GetBuffer="$S/msgs.bin" --mem-in-size 64 \
    --mem-out Hash_GetBuffer:4="$S/warm.bin" --invoke Hash_Calculate "$N/hashwasm_crc32.wasm" 64 3988292384
  for n in 1000000 16777216; do
    scale_run "sha-$tier-$n" --tier $tier -n $n --mem-in Hash_GetBuffer="$S/msgs.bin" --mem-in-size 64 \
      --mem-out Hash_GetBuffer:32="$S/sha-$tier-$n.bin" --invoke Hash_Calculate "$N/hashwasm_sha256.wasm" 64 256
    digests_ok sha "$S/sha-$tier-$n.bin" $n
    scale_run "crc-$tier-$n" --tier $tier -n $n --init Hash_Init:3988292384 --mem-in Hash_GetBuffer="$S/msgs.bin" \
      --mem-in-size 64 --mem-out Hash_GetBuffer:4="$S/crc-$tier-$n.bin" --invoke Hash_Calculate \
      "$N/hashwasm_crc32.wasm" 64 3988292384
    digests_ok crc "$S/crc-$tier-$n.bin" $n
    rm -f "$S"/*-$n.bin
  done
  scale_run "collatz-$tier-100M" --tier $tier -n 100000000 --invoke collatz "$N/collatz.wasm" 1000000000000 @index
  scale_run "ackermann-$tier" --tier $tier --output - --invoke ack "$root/bench/scale/ackermann.wat" 3 5
  scale_run "ackermann-$tier-depth300" --tier $tier --gpu-call-depth 300 --output - --invoke ack "$root/bench/scale/ackermann.wat" 3 5
  echo "  ackermann A(3,5) with --gpu-call-depth 300 ($tier): $(head -c 200 "$S/ackermann-$tier-depth300.log" | tr "\n" " ")" >>"$O/scale.txt"
  echo "  ackermann A(3,5) on the gpu ($tier): $(head -c 300 "$S/ackermann-$tier.log" | tr '\n' ' ')" >>"$O/scale.txt"
done
echo "  ackermann A(3,5) on the cpu: $("$W" run --backend cpu --invoke ack "$root/bench/scale/ackermann.wat" 3 5 2>&1)" >>"$O/scale.txt"
row "scale" "see scale.txt"
fi

if want gpus; then
# 10. Several GPUs: one process over k GPUs (--gpus) and
# `mpirun -np k` (a GPU per rank), every output byte-identical to one
# GPU's, and the scaling table (bench/gpus/run.sh). On a one-GPU machine
# GPU_COUNTS "1 2" lists that GPU twice and has two ranks share it: the
# same paths run, but the figures say nothing of scaling.
  M=$O/gpus
  mkdir -p "$M/ompi"
  if [[ -f $B/openmpi.tar.xz ]] && tar -xJf "$B/openmpi.tar.xz" -C "$M/ompi"; then
    # shellcheck disable=SC1091
    source "$M/ompi/ompi/env.sh"
  fi
  ngpu=$(nvidia-smi -L | grep -c '^GPU ')
  counts=${GPU_COUNTS:-}
  ((ngpu == 1)) && counts=${GPU_COUNTS:-1 2}
  GPU_COUNTS=$counts SCALE=${GPUS_SCALE:-1} REPEAT=${GPUS_REPEAT:-$( ((ngpu == 1)) && echo 1 || echo 3)} \
    CHECK_DIV=${GPUS_CHECK_DIV:-4} \
    BUILD_DIR=$B/bench bash "$root/bench/gpus/run.sh" "$W" "$O/gpus-table.txt" "$M/work" >"$O/gpus.log" 2>&1
  row "gpus ($ngpu on this machine)" "exit $?, $(grep -c '^ok ' "$O/gpus.log") outputs equal, $(grep -c '^FAIL' "$O/gpus.log") failed (gpus-table.txt)"
  # The canvas of gpu.set_pixel drawn by every GPU at once, merged.
  sel=$( ((ngpu == 1)) && echo 0,0 || echo all)
  canvas=""
  for t in interp compiled; do
    for g in 1 "$sel"; do
      "$W" run --backend gpu --tier $t --gpus "$g" -q -n 1048576 --image "1024x1024=$M/canvas-$t-${g//,/_}.png" \
        --invoke render "$B/bench/mandel.wasm" 1024 1024 1 >>"$O/gpus.log" 2>&1
    done
    canvas+="$t $(cmp -s "$M/canvas-$t-1.png" "$M/canvas-$t-${sel//,/_}.png" && echo ok || echo DIFFERS); "
  done
  row "gpus: --image on --gpus $sel" "$canvas"
  # A WASI program's stdout from every GPU at once: the same bytes, in
  # instance order, as from one GPU.
  wasi_out=""
  for t in interp compiled; do
    for g in 1 "$sel"; do
      "$W" run --backend gpu --tier $t --gpus "$g" -q -n 600000 "$B/bench/greet.wasm" @index \
        >"$M/greet-$t-${g//,/_}.txt" 2>>"$O/gpus.log"
    done
    wasi_out+="$t $(cmp -s "$M/greet-$t-1.txt" "$M/greet-$t-${sel//,/_}.txt" && echo ok || echo DIFFERS)"
    wasi_out+=" ($(wc -l <"$M/greet-$t-1.txt") lines); "
  done
  row "gpus: WASI stdout on --gpus $sel" "$wasi_out"
  rm -rf "$M"
fi

if want interrupt; then
# 9. Stopping a running wave: instance 0 loops forever, the rest
# return at once; SIGTERM after 2 s (SIGINT, Ctrl-C, takes the same path,
# but a script's background job ignores it) must end the batch within
# seconds with exit code 143, the finished rows written and instance 0
# marked. Compiled code looks at the deadline only when built with one
# (--timeout), so that tier runs with a long one.
I=$O/interrupt
mkdir -p "$I"
cat >"$I/spin.wat" <<'WAT'
(module
  (func (export "spin") (param i32) (result i32)
    (if (i32.eqz (local.get 0)) (then (loop $l (br $l))))
    (local.get 0)))
WAT
for tier in interp compiled; do
  t0=$(date +%s.%N)
  deadline=()
  [[ $tier == compiled ]] && deadline=(--timeout 3600)
  "$W" run --backend gpu --tier $tier "${deadline[@]}" -n 100000 --invoke spin --output "$I/$tier.csv" "$I/spin.wat" @index \
    >/dev/null 2>"$I/$tier.err" </dev/null &
  p=$!
  sleep 2
  kill -TERM $p
  # A wave that ignored the signal would run forever: give up after 60 s.
  ( sleep 60; kill -KILL $p 2>/dev/null ) &
  guard=$!
  wait $p
  rc=$?
  kill $guard 2>/dev/null
  t1=$(date +%s.%N)
  ok=no
  if ((rc == 143)) && grep -q '^0,,not finished: interrupted$' "$I/$tier.csv" && grep -q '^99999,99999,$' "$I/$tier.csv"; then ok=yes; fi
  row "signal in a running wave ($tier)" "$ok: exit $rc after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (SIGTERM at 2 s)"
done
fi

if want deadline; then
# 10. What looking at the deadline costs compiled code: the bench guests
# with and without --timeout (which compiles the back-edge check in).
D=$O/deadline
mkdir -p "$D"
N=$B/bench
: >"$D/table.txt"
for spec in "mandel|-n 8294400 --invoke render $N/mandel.wasm 3840 2160 1" \
            "collatz|-n 4194304 --invoke collatz $N/collatz.wasm 1000000000000 @index" \
            "montecarlo|-n 1048576 --invoke price $N/montecarlo.wasm @index 256"; do
  name=${spec%%|*}
  args=${spec#*|}
  for t in "" "--timeout 100000"; do
    "$W" run --backend gpu --tier compiled -q $t $args >/dev/null 2>&1  # fills the cache
    best=
    for k in 1 2 3; do
      "$W" run --backend gpu --tier compiled -q $t --stats "$D/s.json" $args >/dev/null 2>&1
      ms=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["phases_ms"]["kernel"])' "$D/s.json" 2>/dev/null)
      [[ -z $best ]] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }' && best=$ms
    done
    printf '%-11s %-18s kernel %s ms\n' "$name" "${t:-no deadline}" "$best" >>"$D/table.txt"
  done
done
row "deadline cost (compiled)" "see deadline table"
fi

if want transfers; then
# 11. Allocation costs and host-device bandwidth (bench/scale/alloc_cost.cu),
# and 1 GiB through staging rings by piece size and depth
# (bench/scale/staging_pipeline.cu): what GpuTuning's staging values choose
# between.
T=$O/transfers
mkdir -p "$T"
nvcc -O2 "$root/bench/scale/alloc_cost.cu" -o "$T/alloc_cost" && "$T/alloc_cost" >"$T/alloc_cost.txt" 2>&1
nvcc -O2 -std=c++17 "$root/bench/scale/staging_pipeline.cu" -o "$T/staging_pipeline" &&
  "$T/staging_pipeline" 1024 ring >"$T/staging_pipeline.txt" 2>&1
row "transfers" "see transfers"
fi

if want ab; then
# 12. Before and after: an older build (the bundle's wasmwarp-old,
# gpu-prepare's WW_AB_OLD) against this one on the same batches,
# alternating (bench/gpu/ab.sh).
  if [[ -x $B/wasmwarp-old ]]; then
    WORK=$O/ab-work ROWS=${AB_ROWS:-} bash "$root/bench/gpu/ab.sh" "$B/wasmwarp-old" "$W" "$B" "${AB_RUNS:-5}" \
      >"$O/ab-table.txt" 2>"$O/ab.log"
    row "before / after (ab-table)" "exit $?, $(($(wc -l <"$O/ab-table.txt") - 1)) rows"
    rm -rf "$O/ab-work"
  else
    row "before / after" "no wasmwarp-old in the bundle (gpu-prepare's WW_AB_OLD)"
  fi
fi

{
  echo
  echo "== gpu-check summary ($(cat "$O/device.txt"), $(date -u +%F))"
  printf '%s\n' "${rows[@]}"
  [[ -f $O/bench-table.txt ]] && { echo "-- auto layout"; cat "$O/bench-table.txt"; }
  for l in contiguous sparse interleaved; do
    [[ -f $O/bench-table-$l.txt ]] && { echo "-- $l layout"; cat "$O/bench-table-$l.txt"; }
  done
  for be in gpu cpu; do [[ -s $O/chain-$be.txt ]] && { echo "-- chain ($be)"; cat "$O/chain-$be.txt"; }; done
  [[ -s $O/api-overhead-gpu.txt ]] && { echo "-- api call overhead (gpu)"; cat "$O/api-overhead-gpu.txt"; }
  [[ -s $O/ncu.txt ]] && { echo "-- ncu (compiled kernels)"; cat "$O/ncu.txt"; }
  [[ -s $O/scale.txt ]] && { echo "-- scale"; cat "$O/scale.txt"; }
  [[ -s $O/transfers/alloc_cost.txt ]] && { echo "-- allocation and transfers"; cat "$O/transfers/alloc_cost.txt" "$O/transfers/staging_pipeline.txt"; }
  [[ -s $O/ab-table.txt ]] && { echo "-- before / after (wasmwarp-old against this build, alternating; medians of walls, ms)"; cat "$O/ab-table.txt"; }
  [[ -s $O/deadline/table.txt ]] && { echo "-- deadline cost (compiled kernels, best of 3)"; cat "$O/deadline/table.txt"; }
  [[ -s $O/simd-table.txt ]] && { echo "-- simd kernels (100,000 instances, kernel ms, best of 3)"; cat "$O/simd-table.txt"; }
} | tee "$O/summary.txt"
if [[ -n ${OUT:-} ]]; then
  # (Parts that did not run left no log: a missing file is no failure.)
  cp "$O"/{summary.txt,gpu-unit.log,programs.log,spec-gpu.log,spec-gpu-compiled.log,bench.log,scale.txt,ab-table.txt} "$OUT/" 2>/dev/null || true
  tail -n 40 "$O"/sanitize-*.log >"$OUT/sanitize-tails.txt" 2>/dev/null || true
  tail -n 30 "$O"/spec-gpu-sparse.log "$O"/difftest*sparse.log >"$OUT/sparse-tails.txt" 2>/dev/null || true
fi
