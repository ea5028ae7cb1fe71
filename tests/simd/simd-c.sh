#!/usr/bin/env bash
# A C program vectorised by clang (-msimd128 -O3): the
# module must hold v128 instructions, and every backend and tier that runs
# SIMD must give the answers of the same source compiled natively.
#   usage: tests/simd/simd-c.sh WASMWARP [WORKDIR]
#   env WAYS: backend:tier pairs (default "cpu:interp cpu:compiled");
#       SIMD_WASM, SIMD_WASI_WASM, SIMD_NATIVE: prebuilt modules and native
#       program (the GPU machine has no clang; scripts/gpu-prepare.sh
#       builds them).
# The same source as a WASI command (main prints instance `first`'s
# answer; a batch of n instances with @index as `first` prints them all
# in instance order) runs a v128 module's WASI calls on every way too.
# Exits 77 (skipped) when it cannot build them.
set -euo pipefail
ww=${1:?usage: simd-c.sh WASMWARP [WORKDIR]}
here=$(cd "$(dirname "$0")" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
wasm=${SIMD_WASM:-$work/kernels.wasm}
wasi=${SIMD_WASI_WASM:-$work/kernels-wasi.wasm}
native=${SIMD_NATIVE:-$work/kernels_native}
if [[ -z ${SIMD_WASM:-} ]]; then
  for tool in clang wasm-ld wasm-objdump cc; do
    command -v "$tool" >/dev/null || { echo "simd-c: $tool not found: skipped"; exit 77; }
  done
  # Compiled and linked in two steps: with binaryen's wasm-opt on PATH, a
  # one-step -O3 build would run it with its own feature set. Bulk memory
  # turns the zeroing loop into memory.fill instead of a libc memset.
  clang --target=wasm32 -O3 -msimd128 -mbulk-memory -c "$here/kernels.c" -o "$work/kernels.o"
  wasm-ld --no-entry --export=dot --export=saxpy --export=histogram --export=brighten "$work/kernels.o" -o "$wasm"
  ops=$(wasm-objdump -d "$wasm" | grep -cE "(i8x16|i16x8|i32x4|i64x2|f32x4|f64x2|v128)\." || true)
  [[ $ops -ge 10 ]] || { echo "simd-c: FAILED: only $ops v128 instructions in the module"; exit 1; }
  echo "simd-c: $ops v128 instructions in the module"
  cc -O2 -DNATIVE_MAIN "$here/kernels.c" -o "$native"
  clang --target=wasm32-wasi -O3 -msimd128 -mbulk-memory -DNATIVE_MAIN -c "$here/kernels.c" -o "$work/kernels-wasi.o" ||
    { echo "simd-c: no wasi-libc: skipped"; exit 77; }
  clang --target=wasm32-wasi "$work/kernels-wasi.o" -o "$wasi"
  ops=$(wasm-objdump -d "$wasi" | grep -cE "(i8x16|i16x8|i32x4|i64x2|f32x4|f64x2|v128)\." || true)
  [[ $ops -ge 10 ]] || { echo "simd-c: FAILED: only $ops v128 instructions in the WASI build"; exit 1; }
fi
n=${SIMD_N:-200}
bad=0
# check WHAT STATS OUT: the way asked for ran (a failed compile falls
# back) and printed the native answers.
check() {
  if [[ $tier == compiled ]] && ! grep -q '"used": true' "$2"; then
    echo "simd-c: $1 ($way): FAILED: compiled code did not run"
    bad=1
  elif ! grep -q "\"backend\": \"$backend\"" "$2"; then
    echo "simd-c: $1 ($way): FAILED: ran elsewhere"
    bad=1
  elif cmp -s "$work/native_$k.txt" "$3"; then
    echo "simd-c: $1 ($way): $n instances = native"
  else
    echo "simd-c: $1 ($way): MISMATCH against native"
    bad=1
  fi
}
for way in ${WAYS:-cpu:interp cpu:compiled}; do
  backend=${way%%:*} tier=${way#*:}
  for k in dot saxpy histogram brighten; do
    "$native" "$k" "$n" >"$work/native_$k.txt"
    "$ww" run -q -n "$n" --backend "$backend" --tier "$tier" --cache-dir "$work/cache" --output "$work/$k.csv" \
      --stats "$work/$k.json" --invoke "$k" "$wasm" @index
    tail -n +2 "$work/$k.csv" | cut -d, -f2 >"$work/wasm_$k.txt"
    check "$k" "$work/$k.json" "$work/wasm_$k.txt"
    # The WASI build: each instance prints its own answer.
    if "$ww" run -q -n "$n" --backend "$backend" --tier "$tier" --cache-dir "$work/cache" \
      --stats "$work/wasi_$k.json" "$wasi" "$k" 1 @index >"$work/wasi_$k.txt"; then
      check "$k, WASI" "$work/wasi_$k.json" "$work/wasi_$k.txt"
    else
      echo "simd-c: $k ($way, WASI): FAILED: wasmwarp exited $?"
      bad=1
    fi
  done
done
exit $bad
