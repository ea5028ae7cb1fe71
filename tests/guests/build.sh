#!/usr/bin/env bash
# Builds the guest SDK and test programs into OUT_DIR:
#   OUT_DIR/sdk/libgpu_sdk.rlib       the Rust SDK (stable rustc)
#   OUT_DIR/sdk-mv/libgpu_sdk.rlib    the SDK with texture_sample (multi-value)
#   OUT_DIR/rust/NN_name.wasm         the ten Rust test programs
#   OUT_DIR/rust_multivalue/*.wasm    Rust programs using texture_sample
#   OUT_DIR/c/*.wasm                  C programs using sdk/c/wasmwarp.h
# and checks with wasm2wat (when installed) that the calls and recursion the
# programs exist to test survived optimisation.
#
# Usage: tests/guests/build.sh OUT_DIR
# Environment: RUSTC (default /usr/bin/rustc: Debian's rustc, whose sysroot
# has the wasm32 std; a rustup rustc earlier on PATH usually has not),
# CLANG (default clang), WASM2WAT/WAT2WASM (default wasm2wat/wat2wasm:
# wabt, needed for programs whose main takes no parameters, see below).
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
OUT=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUSTC=${RUSTC:-/usr/bin/rustc}
CLANG=${CLANG:-clang}
WASM2WAT=${WASM2WAT:-wasm2wat}
WAT2WASM=${WAT2WASM:-wat2wasm}
TARGET=wasm32-unknown-unknown

die() {
  echo "build.sh: error: $*" >&2
  exit 1
}

command -v "$WASM2WAT" >/dev/null || die "$WASM2WAT (wabt) not found; apt-get install wabt"
[[ -x $RUSTC ]] || die "$RUSTC not found; install Debian's rustc (apt-get install rustc) or set RUSTC"
SYSROOT=$("$RUSTC" --print sysroot) || die "$RUSTC --print sysroot failed"
[[ -d $SYSROOT/lib/rustlib/$TARGET/lib ]] ||
  die "$RUSTC has no $TARGET standard library (looked in $SYSROOT/lib/rustlib/$TARGET); install Debian's libstd-rust-dev-wasm32 or use a rustc with that target"

mkdir -p "$OUT/sdk" "$OUT/sdk-mv" "$OUT/rust" "$OUT/rust_multivalue" "$OUT/c"
RFLAGS=(--edition 2021 --target "$TARGET" -C panic=abort)

# The stable SDK: everything but texture_sample.
"$RUSTC" "${RFLAGS[@]}" --crate-type rlib --crate-name gpu_sdk -C opt-level=2 \
  "$ROOT/sdk/rust/gpu_sdk/src/lib.rs" -o "$OUT/sdk/libgpu_sdk.rlib"

# LLVM's wasm backend treats a symbol `main` of type () -> i32 as C's
# `int main(void)`: it renames it __original_main and exports a `main`
# wrapper of type (i32 argc, i32 argv) -> i32. Rust cannot avoid the symbol
# name (export_name sets it), so such modules are rewritten with wabt to
# export __original_main as "main" and drop the wrapper's export.
fix_zero_arg_main() {
  local wasm=$1 wat
  "$WASM2WAT" "$wasm" | grep -q '(export "__original_main"' || return 0
  command -v "$WAT2WASM" >/dev/null || die "$WAT2WASM is needed to fix the export of main in $wasm"
  wat=$(mktemp --suffix=.wat)
  "$WASM2WAT" "$wasm" |
    sed -e '/(export "main" (func \$main))/d' \
        -e 's/(export "__original_main" (func \$__original_main))/(export "main" (func $__original_main))/' >"$wat"
  "$WAT2WASM" --debug-names "$wat" -o "$wasm"
  rm -f "$wat"
}

for src in "$HERE"/rust/*.rs; do
  name=$(basename "$src" .rs)
  "$RUSTC" "${RFLAGS[@]}" --crate-type cdylib -C opt-level=2 \
    --extern gpu_sdk="$OUT/sdk/libgpu_sdk.rlib" "$src" -o "$OUT/rust/$name.wasm"
  fix_zero_arg_main "$OUT/rust/$name.wasm"
done

# Multi-value: the unstable extern "wasm" ABI (RUSTC_BOOTSTRAP), +multivalue
# everywhere, and the SDK at opt-level 0 to keep LLVM 14's stackifier away
# from the multi-value call (it crashes when optimising it). rustc warns
# that "multivalue" is unknown to it; LLVM still receives it.
MV=(-C target-feature=+multivalue --cfg gpu_sdk_multivalue)
if RUSTC_BOOTSTRAP=1 "$RUSTC" "${RFLAGS[@]}" "${MV[@]}" --crate-type rlib --crate-name gpu_sdk \
  -C opt-level=0 "$ROOT/sdk/rust/gpu_sdk/src/lib.rs" -o "$OUT/sdk-mv/libgpu_sdk.rlib" 2>"$OUT/sdk-mv/log"; then
  for src in "$HERE"/rust_multivalue/*.rs; do
    name=$(basename "$src" .rs)
    RUSTC_BOOTSTRAP=1 "$RUSTC" "${RFLAGS[@]}" "${MV[@]}" --crate-type cdylib -C opt-level=2 \
      --extern gpu_sdk="$OUT/sdk-mv/libgpu_sdk.rlib" "$src" -o "$OUT/rust_multivalue/$name.wasm" \
      2>>"$OUT/sdk-mv/log" || { cat "$OUT/sdk-mv/log" >&2; die "building $src failed"; }
  done
else
  cat "$OUT/sdk-mv/log" >&2
  die "building the multi-value SDK failed"
fi

# C: texture_copy needs clang's experimental multi-value ABI (wasmwarp.h).
if command -v "$CLANG" >/dev/null; then
  CFLAGS=(--target=wasm32 -O2 -nostdlib -Wl,--no-entry -Wall -Werror -I "$ROOT/sdk/c")
  for src in "$HERE"/c/*.c; do
    name=$(basename "$src" .c)
    extra=()
    [[ $name == texture_copy ]] && extra=(-mmultivalue -Xclang -target-abi -Xclang experimental-mv)
    "$CLANG" "${CFLAGS[@]}" "${extra[@]}" "$src" -o "$OUT/c/$name.wasm" ||
      die "building $src with $CLANG failed"
  done
else
  echo "build.sh: warning: $CLANG not found; C examples not built" >&2
fi

# Structure checks: the programs exist to exercise calls, so a build where
# LLVM inlined or folded them away would test nothing.
{
  # Prints the body of function $2 (by its name-section name) in $1.
  body() { "$WASM2WAT" "$1" | awk -v f="(func \$$2 " 'index($0, f) {p=1; print; next} p && /^  \(/ {p=0} p'; }
  calls() { body "$1" "$2" | grep -oE 'call \$[A-Za-z0-9_]+' | sed 's/call \$//' | sort -u; }
  expect_call() {  # file caller callee-regex
    calls "$OUT/rust/$1.wasm" "$2" | grep -qE "^($3)\$" ||
      die "$1.wasm: $2 does not call $3 (optimised away?)"
  }
  # Rust's symbols are mangled (_ZN..4name17h..E); match the name part.
  m() { echo "_ZN[0-9]+[A-Za-z0-9_]+[0-9]+$1[0-9]+h[0-9a-f]+E"; }
  expect_call 01_helper_function main "$(m square)"
  expect_call 02_two_helpers main "$(m add_two)"
  expect_call 02_two_helpers main "$(m times_four)"
  expect_call 03_recursive_factorial fact fact
  expect_call 03_recursive_factorial main fact
  expect_call 04_thread_id __original_main "$(m get_thread_id)"
  expect_call 05_pixel_output main "$(m set_pixel)"
  expect_call 06_nested_calls main "$(m inc)"
  expect_call 06_nested_calls main "$(m add)"
  expect_call 07_three_parameters main lerp
  expect_call 08_callee_locals main poly
  body "$OUT/rust/08_callee_locals.wasm" poly | grep -q '^ *loop' ||
    die "08_callee_locals.wasm: poly lost its loop"
  expect_call 09_mutual_recursion ping pong
  expect_call 09_mutual_recursion pong ping
  expect_call 10_call_chain main "$(m f1)"
  # The chain main -> f1 -> ... -> f8: follow it link by link.
  fn=$(calls "$OUT/rust/10_call_chain.wasm" main)
  for i in 2 3 4 5 6 7 8; do
    next=$(calls "$OUT/rust/10_call_chain.wasm" "$fn" | grep -E "^$(m f$i)\$" || true)
    [[ -n $next ]] || die "10_call_chain.wasm: the chain breaks before f$i"
    fn=$next
  done
  [[ -z $(calls "$OUT/rust/10_call_chain.wasm" "$fn") ]] || die "10_call_chain.wasm: f8 should call nothing"
}

echo "built guests in $OUT"
