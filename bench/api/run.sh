#!/usr/bin/env bash
# Call overhead of the C++ API and of Python (issue 11): the same trivial
# export on 1, 1K and 1M instances, one call at a time, both ways.
#   usage: bench/api/run.sh BUILD_DIR [cpu|gpu] [REPS]
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [cpu|gpu] [REPS]}
backend=${2:-cpu}
reps=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# INC_WASM: inc.wat built elsewhere (the GPU machine has no wabt).
if [[ -n ${INC_WASM:-} ]]; then cp "$INC_WASM" "$work/inc.wasm"; else wat2wasm "$here/inc.wat" -o "$work/inc.wasm"; fi
"$build/bench/api_call_overhead" "$work/inc.wasm" "$backend" "$reps" >"$work/cpp.txt"
PYTHONPATH=$build/python ${PYTHON:-/usr/bin/python3} "$here/call_overhead.py" "$work/inc.wasm" "$backend" "$reps" >"$work/py.txt"
echo "instances  C++ API s/call  Python s/call  Python/C++  ($backend, median of $reps)"
paste "$work/cpp.txt" "$work/py.txt" | awk '{printf "%9d  %14.6f  %13.6f  %10.2f\n", $1, $2, $4, $4 / $2}'
