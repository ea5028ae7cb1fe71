#!/usr/bin/env bash
# Converts a .wast file that uses WebAssembly 3.0 features with Debian's
# wabt (1.0.32): every feature flag on, and relaxed SIMD's two dot
# products renamed to the names that wabt knows them by (from before 3.0;
# the file's exports of those names are renamed alike). Files that need
# what wabt 1.0.32 cannot read (most of the 3.0 suite) fail here.
# usage: tests/spec/wast2json3.sh WAST2JSON IN.wast OUT.json
set -euo pipefail
wast2json=$1 in=$2 out=$3
src=$in
if grep -q 'relaxed_dot_i8x16_i7x16' "$in"; then
  src=${out%.json}.renamed.wast
  sed 's/relaxed_dot_i8x16_i7x16/dot_i8x16_i7x16/g' "$in" >"$src"
fi
"$wast2json" --enable-all "$src" -o "$out"
