#!/usr/bin/env bash
# The public API as an embedder gets it: installs the build into a fresh
# prefix (cmake --install), builds examples/api against it with
# find_package(wasmwarp) and, separately, with pkg-config, and runs both
# on a small module whose answers are known.
#   usage: tests/api/install-example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: install-example.sh BUILD_DIR SOURCE_DIR}
root=${2:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/ww-api.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
cat >"$work/sq.wat" <<'WAT'
(module
  (func (export "sq") (param i32) (result i32)
    (if (i32.eq (local.get 0) (i32.const 3)) (then unreachable))
    (i32.mul (local.get 0) (local.get 0))))
WAT
wat2wasm "$work/sq.wat" -o "$work/sq.wasm"
printf '0 0\n1 1\n2 4\n3 trap: unreachable\n4 16\n' >"$work/want"

check() {  # NAME BINARY
  "$2" "$work/sq.wasm" sq 5 cpu >"$work/$1.out"
  head -n 5 "$work/$1.out" | diff -u "$work/want" - || { echo "$1: wrong rows" >&2; exit 1; }
  grep -q '^5 instances, 1 trapped, on threads=' "$work/$1.out" || { echo "$1: wrong summary" >&2; exit 1; }
  echo "$1: ok"
}

cmake -S "$root/examples/api" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log" ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log" >&2; exit 1; }
check find_package "$work/cmake-build/sweep"

pc=$(find "$work/prefix" -name wasmwarp.pc | head -n 1)
[[ -n $pc ]] || { echo "no wasmwarp.pc installed" >&2; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
# shellcheck disable=SC2046
c++ -O1 "$root/examples/api/sweep.cc" $(pkg-config --cflags --libs wasmwarp) -o "$work/sweep-pc" 2>"$work/pc.log" ||
  { tail -n 30 "$work/pc.log" >&2; exit 1; }
check pkg-config "$work/sweep-pc"
[[ ! -e $work/prefix/include/wasmwarp/runtime.h ]] || { echo "an internal header was installed" >&2; exit 1; }

# The Python package, when the build has it: importable from the prefix.
ext=$(find "$work/prefix" -name '_wasmwarp*.so' | head -n 1)
py=${PYTHON:-/usr/bin/python3}
if [[ -n $ext ]] && "$py" -c 'import numpy' 2>/dev/null; then
  got=$(PYTHONPATH=$(dirname "$(dirname "$ext")") "$py" -c "
import wasmwarp
r, trapped = wasmwarp.Module('$work/sq.wasm').run('sq', wasmwarp.INDEX, n=5, backend='cpu', traps='mask')
print(list(r), list(trapped))")
  [[ $got == "[0, 1, 4, 0, 16] [False, False, False, True, False]" ]] || { echo "python: got $got" >&2; exit 1; }
  echo "python: ok"
fi
ls "$work/prefix/include/wasmwarp" | grep -qx wasmwarp.h
