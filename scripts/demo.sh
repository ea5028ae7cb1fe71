#!/usr/bin/env bash
# Setup, then the main job on a built-in example: the Mandelbrot set rendered
# by a batch of WebAssembly instances, one per image row
# (examples/mandelbrot/mandelbrot.c compiled with clang --target=wasm32,
# colouring a PNG through gpu.set_pixel), checked against the same C
# compiled natively; then a batch of 2,000 hash jobs. The backend is
# wasmwarp's default (auto): the GPU when one is usable, else the CPU.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${WW_BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh"
ww=$build/wasmwarp
guests=$build/guests
out=$build/demo
mkdir -p "$out"
bash "$root/examples/build.sh" "$guests"

rows=768
echo
echo "== Mandelbrot 1024x768: $rows instances of row(@index), one per image row"
echo "\$ wasmwarp run --invoke row -n $rows --output $out/mandelbrot.csv --mem-out pixels:2048=$out/pixels.bin --image 1024x768=$out/mandelbrot.png mandelbrot-image.wasm @index"
"$ww" run --invoke row -n $rows --output "$out/mandelbrot.csv" \
  --mem-out "pixels:2048=$out/pixels.bin" --image "1024x768=$out/mandelbrot.png" \
  "$guests/mandelbrot-image.wasm" @index

# The image from the instances' memories: escape counts (u16 per pixel),
# every 24th row and 16th column, as characters.
od -An -v -tu2 -w2048 "$out/pixels.bin" | awk 'NR % 24 == 12 {
  s = ""; for (i = 8; i <= NF; i += 16) { k = $i;
    s = s (k >= 256 ? "#" : k > 24 ? "+" : k > 8 ? "-" : k > 4 ? "." : " ") }
  print "  " s }'

if diff -q <("$guests/mandelbrot.native" 0 $rows) <(tail -n +2 "$out/mandelbrot.csv" | cut -d, -f2) >/dev/null &&
  cmp -s <("$guests/mandelbrot.native" pixels 0 $rows) "$out/pixels.bin"; then
  echo "check: all $rows results and pixel rows equal the native build's"
  echo "image: $out/mandelbrot.png"
else
  echo "check: FAILED: results differ from the native build" >&2
  exit 1
fi

n=2000
echo
echo "== Hash batch: $n instances, each hashing 64 KiB generated from its index"
echo "\$ wasmwarp run --invoke hash_seed -n $n --output $out/hash.csv hash.wasm @index"
"$ww" run --invoke hash_seed -n $n --output "$out/hash.csv" "$guests/hash.wasm" @index
if diff -q <("$guests/hash.native" 0 $n) <(tail -n +2 "$out/hash.csv" | cut -d, -f2) >/dev/null; then
  echo "check: all $n results equal the native build's"
else
  echo "check: FAILED: results differ from the native build" >&2
  exit 1
fi
echo
echo "outputs in $out"
