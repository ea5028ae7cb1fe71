#!/usr/bin/env bash
# gpu.read_file / gpu.write_file on the GPU (tests/wasi/files/copy.wat):
# the instances leave the kernel for the host, which reads and writes
# beneath the preopens; the files and results must be the CPU backend's.
# usage: tests/wasi/gpu-files.sh WASMWARP TIER   (prints "N passed, M failed")
set -uo pipefail
ww=$(realpath "$1")
tier=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" && mkdir in && printf 'hello' >in/data.txt
ok=0; bad=0
check() {  # NAME EXPECTED-CSV -- run arguments
  local name=$1 want=$2; shift 3
  rm -f r.csv s.json
  "$ww" run --backend gpu --tier "$tier" -q --output r.csv --stats s.json "$@" "$here/files/copy.wat" >/dev/null 2>err.txt
  # --tier compiled falls back to the interpreter when compiling fails.
  if [[ $tier == compiled ]] && ! grep -q '"tier": "compiled"' s.json 2>/dev/null; then
    bad=$((bad + 1)); echo "FAIL $name: did not run compiled code: $(head -c 300 err.txt)"; return
  fi
  if [[ $(tail -n +2 r.csv 2>/dev/null | tr '\n' ' ') == "$want" ]]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "FAIL $name: $(tr '\n' ' ' <r.csv 2>/dev/null) $(head -c 300 err.txt)"; fi
}
check copy "0,5, 1,5, 2,5, " -- -n 3 --invoke copy --dir in::in --dir-rw 'out/{i}::out'
for i in 0 1 2; do
  if [[ $(cat "out/$i/copy.txt" 2>/dev/null) == "hello$i" ]]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "FAIL out/$i/copy.txt"; fi
done
check escape "0,-76, 1,-76, " -- -n 2 --invoke escape --dir in::in
check readonly "0,-76, 1,-76, " -- -n 2 --invoke readonly --dir in::in
echo "$ok passed, $bad failed"
[[ $bad == 0 ]]
