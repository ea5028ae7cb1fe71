#!/usr/bin/env bash
# Builds the C guest programs (examples/ and bench/) to WebAssembly with
# clang --target=wasm32 (no libc, no WASI: the modules import nothing but,
# for mandelbrot-image, gpu.set_pixel), and the same sources natively, whose
# output is the expected answer.
#   usage: examples/build.sh [OUTDIR]        (default build/guests)
#   env:   SCALE=n  work of the benchmark modules (default 2)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/guests}
scale=${SCALE:-2}
mkdir -p "$out"

inc=(-I "$root/examples/include")
# -O2 like a release build of a real guest; -nostdlib --no-entry: a library
# of exports, no _start. No FMA contraction natively, so native float
# results equal WebAssembly's bit for bit.
wasm=(clang --target=wasm32 -O2 -nostdlib -Wl,--no-entry -Wl,--strip-debug "${inc[@]}")
native=(clang -O2 -ffp-contract=off -DWW_NATIVE_MAIN "${inc[@]}")

build() {  # name source [extra flags...]
  local name=$1 src=$2
  shift 2
  "${wasm[@]}" "$@" "$src" -o "$out/$name.wasm"
  "${native[@]}" "$@" "$src" -o "$out/$name.native" -lm
}

build mandelbrot "$root/examples/mandelbrot/mandelbrot.c"
"${wasm[@]}" -DWW_GPU_IMAGE -I "$root/sdk/c" "$root/examples/mandelbrot/mandelbrot.c" \
  -o "$out/mandelbrot-image.wasm"
build hash "$root/examples/hash/hash.c"
build int_bench "$root/bench/int_bench.c" -DSCALE="$scale"
build float_bench "$root/bench/float_bench.c" -DSCALE="$scale"
# Small versions for the test suite: the same code, one round.
build int_bench_small "$root/bench/int_bench.c" -DSCALE=1
build float_bench_small "$root/bench/float_bench.c" -DSCALE=1
echo "guests built into $out"
