#!/usr/bin/env bash
# A C program vectorised by clang (-msimd128 -O3; issue 12 part 4): the
# module must hold v128 instructions, and every tier that runs SIMD (the
# CPU's interpreter and compiled code, so far) must give the answers of the
# same source compiled natively.
#   usage: tests/simd/simd-c.sh WASMWARP [WORKDIR]
# Exits 77 (skipped) without clang, wasm-ld or wasm-objdump.
set -euo pipefail
ww=${1:?usage: simd-c.sh WASMWARP [WORKDIR]}
here=$(cd "$(dirname "$0")" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
for tool in clang wasm-ld wasm-objdump cc; do
  command -v "$tool" >/dev/null || { echo "simd-c: $tool not found: skipped"; exit 77; }
done
# Compiled and linked in two steps: with binaryen's wasm-opt on PATH, a
# one-step -O3 build would run it with its own feature set. Bulk memory
# turns the zeroing loop into memory.fill instead of a libc memset.
clang --target=wasm32 -O3 -msimd128 -mbulk-memory -c "$here/kernels.c" -o "$work/kernels.o"
wasm-ld --no-entry --export=dot --export=saxpy --export=histogram --export=brighten \
  "$work/kernels.o" -o "$work/kernels.wasm"
ops=$(wasm-objdump -d "$work/kernels.wasm" | grep -cE "(i8x16|i16x8|i32x4|i64x2|f32x4|f64x2|v128)\." || true)
[[ $ops -ge 10 ]] || { echo "simd-c: FAILED: only $ops v128 instructions in the module"; exit 1; }
cc -O2 -DNATIVE_MAIN "$here/kernels.c" -o "$work/kernels_native"
n=200
bad=0
for tier in interp compiled; do
  for k in dot saxpy histogram brighten; do
    "$work/kernels_native" "$k" "$n" >"$work/native_$k.txt"
    "$ww" run -q -n "$n" --backend cpu --tier "$tier" --cache-dir "$work/cache" --output "$work/$k.csv" \
      --stats "$work/$k.json" --invoke "$k" "$work/kernels.wasm" @index
    tail -n +2 "$work/$k.csv" | cut -d, -f2 >"$work/wasm_$k.txt"
    # The compiled tier must really have run (a failed compile falls back).
    if [[ $tier == compiled ]] && ! grep -q '"used": true' "$work/$k.json"; then
      echo "simd-c: $k ($tier): FAILED: compiled code did not run"
      bad=1
    elif cmp -s "$work/native_$k.txt" "$work/wasm_$k.txt"; then
      echo "simd-c: $k ($tier): $n instances = native"
    else
      echo "simd-c: $k ($tier): MISMATCH against native"
      bad=1
    fi
  done
done
echo "simd-c: $ops v128 instructions in the module"
exit $bad
