#!/usr/bin/env bash
# Builds the GPU benchmarks into OUTDIR:
#   mandel.wasm sha256.wasm montecarlo.wasm collatz.wasm   the guests (clang, wasm32)
#   gpu_ref                                               the native reference (gcc)
#   gpu_omp                                               the native baseline (gcc, OpenMP)
#   mandel_cuda sha256_cuda montecarlo_cuda collatz_cuda  the CUDA ceilings (only with nvcc)
# usage: bench/gpu/build.sh OUTDIR
# Env: CC (gcc), CLANG (clang), NVCC (nvcc, else PATH or /usr/local/cuda/bin),
#      CUDA_ARCH (sm_90).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTDIR}
mkdir -p "$out"

cc=${CC:-gcc}
clang=${CLANG:-clang}
arch=${CUDA_ARCH:-sm_90}

# Guests: freestanding, no libc. One 64 KiB page of memory (stack and data
# fit easily), so a GPU wave holds as many instances as possible. A machine
# without clang (the GPU machine) keeps guests already in OUTDIR, built
# elsewhere with this script.
if command -v "$clang" >/dev/null; then
  for g in mandel:render sha256:hash montecarlo:price collatz:collatz; do
    name=${g%%:*}
    "$clang" --target=wasm32 -O2 -ffreestanding -nostdlib -Wall -Wextra -Wno-unused-const-variable \
      -Wl,--no-entry -Wl,--export="${g##*:}" \
      -Wl,-z,stack-size=16384 -Wl,--initial-memory=65536 -Wl,--max-memory=65536 \
      -I "$here/../../sdk/c" "$here/$name.c" -o "$out/$name.wasm"
  done
else
  for name in mandel sha256 montecarlo collatz; do
    if [[ ! -f $out/$name.wasm ]]; then
      echo "build.sh: no $clang to build $out/$name.wasm: build the guests on a machine with clang" \
        "(bench/gpu/build.sh $out) and bring $out here" >&2
      exit 2
    fi
  done
  echo "build.sh: no $clang: keeping the guests already in $out" >&2
fi

# Native reference: no FMA contraction, so f32/f64 results match the guests'
# bit for bit; -fno-math-errno makes __builtin_sqrt a plain sqrtsd.
"$cc" -O2 -std=c11 -Wall -Wextra -Wno-unused-const-variable -ffp-contract=off -fno-math-errno \
  "$here/ref.c" -o "$out/gpu_ref" -lm
# The native baseline: the same code on every host core.
"$cc" -O2 -std=c11 -fopenmp -Wall -Wextra -Wno-unused-const-variable -ffp-contract=off -fno-math-errno \
  "$here/omp.c" -o "$out/gpu_omp" -lm

nvcc=${NVCC:-}
if [[ -z $nvcc ]]; then
  if command -v nvcc >/dev/null; then
    nvcc=nvcc
  elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc=/usr/local/cuda/bin/nvcc
  fi
fi
if [[ -n $nvcc ]]; then
  pids=()
  for c in mandel sha256 montecarlo collatz; do
    "$nvcc" -O3 -arch="$arch" --fmad=false -std=c++17 -I "$here" "$here/$c.cu" -o "$out/${c}_cuda" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  echo "built guests, gpu_ref and CUDA programs in $out"
else
  echo "built guests and gpu_ref in $out (no nvcc: CUDA programs skipped)"
fi
