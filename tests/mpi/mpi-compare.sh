#!/usr/bin/env bash
# `mpirun -np R wasmwarp run ...` against one process: the same
# output files byte for byte (.csv, .json, .npy with its trap file,
# --mem-out), the same stdout (rows, WASI output in instance order) and
# exit code, for R = 2 and 3 on the CPU backend; --image's canvas, --stats
# with a figure per rank; and clear errors for what mpirun runs cannot do.
#   usage: tests/mpi/mpi-compare.sh WASMWARP CLI_MODULES_DIR [WORKDIR]
# Exits 77 (skipped) without mpirun.
set -uo pipefail
ww=${1:?usage: mpi-compare.sh WASMWARP CLI_MODULES_DIR [WORKDIR]}
mods=${2:?usage: mpi-compare.sh WASMWARP CLI_MODULES_DIR [WORKDIR]}
here=$(cd "$(dirname "$0")" && pwd)
work=${3:-$(mktemp -d)}
command -v mpirun >/dev/null || { echo "mpi-compare: no mpirun: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
# Root in containers and CI; more ranks than cores.
mpi=(mpirun --oversubscribe --allow-run-as-root)
bad=0
fail() { echo "mpi-compare: FAILED: $*"; bad=1; }

# 1000 i32 records for --mem-in and a column file for @col.
python3 -c "
import struct
open('in.bin','wb').write(b''.join(struct.pack('<i', i * 7 - 300) for i in range(1000)))
open('col.csv','w').write('\n'.join(str(i * 3 % 11) for i in range(1000)) + '\n')"

label=mpi-compare
launch() { "${mpi[@]}" -np "$@"; }
source "$here/compare-lib.sh"

basic=$mods/basic.wasm
compare csv 0 -n 1000 --invoke mixed --output out.csv "$basic" @index 2.5
compare json 0 -n 1000 --invoke mixed --output out.json "$basic" @index @col:../../col.csv
compare npy 0 -n 1000 --invoke pair --output out.npy "$basic" @index
compare traps 1 -n 1000 --invoke odd_traps --allow-traps --output out.npy "$basic" @index
compare traps-csv 1 -n 1000 --invoke odd_traps --output out.csv "$basic" @index
compare rows 0 -n 999 --invoke add --output - "$basic" @index 5
compare mem 0 -n 1000 --invoke load --mem-in 64=../../in.bin --mem-out 64:4=out.bin --output out.csv "$basic" 64
compare chain 0 -n 1000 --invoke pair --then add:3:@index,1 --output out.csv "$basic" @index
# Exit codes are argc (non-zero: exit 1, as one process says).
compare wasi 1 -n 300 "$here/argv.wat" @index x
compare wasi-files 1 -n 300 --stdout 'o-{i}.txt' "$here/argv.wat" @index

# --image: every rank's pixels in one PNG.
compare image 0 -n 1000 --image 40x25=canvas.png --invoke paint "$here/pixels.wat" @index

# --stats: the whole batch's counts and a figure per rank, from rank 0.
"${mpi[@]}" -np 2 "$ww" run -q -n 1000 --stats s.json --invoke pair "$basic" @index >/dev/null 2>&1 &&
  python3 - s.json <<'PY' || fail "--stats under mpirun (s.json: $(head -c 300 s.json))"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["instances"] == 1000 and j["completed"] == 1000, j
m = j["mpi"]
assert m["ranks"] == 2 and [r["instances"] for r in m["per_rank"]] == [500, 500], m
assert [r["first"] for r in m["per_rank"]] == [0, 500] and m["wall_s"] > 0, m
PY

# A rank that fails (here rank 1 asks for a GPU 99 that no machine has):
# the job ends with its error, and the other ranks' rows are written.
"${mpi[@]}" -np 2 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then set -- --backend gpu --gpus 99, "$@"; fi
  exec "$0" run -q "$@"' "$ww" -n 1000 --invoke mixed --output lost.csv "$basic" @index 2.5 >lost.out 2>lost.err
rc=$?
head -n 501 one/csv/out.csv >lost.want
[[ $rc != 0 ]] || fail "a failed rank: exit 0"
grep -q "rank 1: .*GPU.*(the other ranks' rows were written, this rank's as not finished)" lost.err ||
  fail "a failed rank: $(head -c 400 lost.err)"
cmp -s <(head -n 501 lost.csv) lost.want || fail "a failed rank: rank 0's rows were not kept"
[[ $(tail -n 500 lost.csv | grep -c "not finished") == 500 ]] || fail "a failed rank: its rows are not marked ($(tail -n 2 lost.csv))"

# Cores: a rank uses those it is bound to, and unbound ranks share the
# host's (nproc / ranks each); a process confined by taskset likewise.
cores=$(nproc)
want=$((cores / 2 > 0 ? cores / 2 : 1))
out=$("${mpi[@]}" --bind-to none -np 2 "$ww" run --backend cpu -n 10 --invoke pair "$basic" @index 2>&1)
[[ $out == *"backend=cpu threads=$want"* ]] || fail "unbound ranks: want threads=$want ($(grep -o 'threads=[0-9]*' <<<"$out" | head -1))"
if command -v taskset >/dev/null; then
  out=$(taskset -c 0 "$ww" run --backend cpu -n 10 --invoke pair "$basic" @index 2>&1)
  [[ $out == *"backend=cpu threads=1"* ]] || fail "taskset -c 0: $(grep -o 'threads=[0-9]*' <<<"$out" | head -1)"
fi

# What ranks cannot do, or a batch too small for them: one clear line.
out=$("${mpi[@]}" -np 2 "$ww" run -n 1 --invoke pair "$basic" 1 2>&1)
[[ $? == 2 && $out == *"leaves a rank without instances"* ]] || fail "-n 1 on 2 ranks: $out"
out=$("${mpi[@]}" -np 2 "$ww" run -n 4 --state 8 --invoke pair "$basic" @index 2>&1)
[[ $? == 2 && $out == *"--state is one buffer every instance reads and writes at once"* ]] || fail "--state: $out"
exit $bad
