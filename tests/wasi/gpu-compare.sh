#!/usr/bin/env bash
# WASI programs on the GPU backend against node's outputs that
# tests/wasi/check.sh recorded on a machine with node and clang
# (scripts/gpu-prepare.sh keeps its work directory in the bundle): the
# single-instance cases, the batches (stdout in instance order, --stdout
# files, exit codes) and the SQLite batch, on the GPU tier WW_TIER names
# (interp, compiled; default auto). WW_ONLY=TAG,TAG,... runs only those
# cases (compiled code takes minutes per program to build).
# usage: tests/wasi/gpu-compare.sh WASMWARP WORKDIR   (prints "N passed, M failed")
set -uo pipefail
ww=$(realpath "$1")
work=$(realpath "$2")
tier=(--tier "${WW_TIER:-auto}")
only=",${WW_ONLY:-},"
wanted() { [[ $only == ",," || $only == *",$1,"* ]]; }
cd "$work/fx"
ok=0; bad=0
fail() { echo "FAIL $*"; bad=$((bad + 1)); }

single() {  # TAG STDIN -- OPTIONS -- MODULE ARGS...
  local tag=$1 input=$2; shift 2
  local opts=(); while [[ $1 != -- ]]; do opts+=("$1"); shift; done; shift
  local wasm=$work/bin/$1.wasm; shift
  [[ -f $wasm && -f $work/$tag.node.rc ]] && wanted "$tag" || return 0
  "$ww" run --backend gpu "${tier[@]}" -n 1 -q --output "$work/$tag.gpu.csv" --stats "$work/$tag.gpu.json" "${opts[@]}" \
    "$wasm" "$@" <"$input" >"$work/$tag.gpu.out" 2>"$work/$tag.gpu.err"
  local rc=$? node_rc good=1
  # --tier compiled falls back to the interpreter when compiling fails.
  if [[ ${WW_TIER:-auto} == compiled ]] && ! grep -q '"tier": "compiled"' "$work/$tag.gpu.json"; then
    fail "$tag: did not run compiled code"
    return 0
  fi
  node_rc=$(cat "$work/$tag.node.rc")
  cmp -s "$work/$tag.node.out" "$work/$tag.gpu.out" || { good=0; fail "$tag: stdout differs from node's"; diff "$work/$tag.node.out" "$work/$tag.gpu.out" | head -5; }
  [[ $(tail -n 1 "$work/$tag.gpu.csv") == "0,$node_rc," ]] || { good=0; fail "$tag: exit code $(tail -n 1 "$work/$tag.gpu.csv"), node's $node_rc"; }
  # A batch exits 1 when an instance exited non-zero.
  [[ $rc == $((node_rc ? 1 : 0)) ]] || { good=0; fail "$tag: wasmwarp exited $rc"; }
  ((good)) && ok=$((ok + 1))
}
# A batch of one: the program's stdout, its exit code in --output.
single args /dev/null --env GREETING=hello --env EMPTY= -- args_env one "two words" "" -3
single stdio "$work/fx/lines.txt" --stdin "$work/fx/lines.txt" -- stdio
single files /dev/null --dir data::data -- files
single fileio /dev/null --dir data::data -- fileio 3
single exit0 /dev/null -- exit_code 0
single exit42 /dev/null -- exit_code 42
single bigprint /dev/null -- bigprint
single rust "$work/fx/lines.txt" --stdin "$work/fx/lines.txt" --dir data::data --env GREETING=hi -- hello_rust a b c

batch() {  # TAG N PROGRAM ARGS...
  local tag=$1 n=$2 prog=$3; shift 3
  [[ -f $work/$tag.node.cat ]] && wanted "$tag" || return 0
  "$ww" run --backend gpu "${tier[@]}" -q -n "$n" --output "$work/$tag.gpu.csv" --dir data::data --env GREETING=hi \
    "$work/bin/$prog.wasm" "$@" </dev/null >"$work/$tag.gpu.cat" 2>/dev/null
  local good=1
  tail -n +2 "$work/$tag.gpu.csv" | cmp -s - "$work/$tag.node.codes" || { good=0; fail "$tag: exit codes"; }
  cmp -s "$work/$tag.node.cat" "$work/$tag.gpu.cat" || { good=0; fail "$tag: stdout in instance order"; }
  "$ww" run --backend gpu "${tier[@]}" -q -n "$n" --stdout "$work/$tag.gpu.{i}" --dir data::data --env GREETING=hi \
    "$work/bin/$prog.wasm" "$@" </dev/null >/dev/null 2>&1
  for ((i = 0; i < n; ++i)); do
    cmp -s "$work/$tag.node.$i" "$work/$tag.gpu.$i" || { good=0; fail "$tag: --stdout file $i"; break; }
  done
  ((good)) && ok=$((ok + 1))
}
batch batch_args 40 args_env @index "arg @index"
batch batch_exit 30 exit_code @index
batch batch_files 20 files
batch batch_fileio 24 fileio @index

# A process out of descriptors: a wave whose instances hold more files
# open than the limit allows (24 each, 4 of them the device's). Those that
# meet EMFILE on the host trap ("host function failed", never an errno the
# CPU would not have given) and the summary says so.
if [[ -f $work/bin/holdfiles.wasm ]] && wanted fds; then
  (ulimit -n 300 && "$ww" run --backend gpu "${tier[@]}" -n 200 --output "$work/fds.csv" --dir data::data \
    "$work/bin/holdfiles.wasm" 24 </dev/null >"$work/fds.out" 2>"$work/fds.err")
  rc=$?
  trapped=$(grep -c 'host function failed' "$work/fds.csv" 2>/dev/null)
  if [[ $rc != 0 ]] && grep -q "ran out of file descriptors" "$work/fds.err" && [[ ${trapped:-0} -gt 0 ]]; then
    ok=$((ok + 1))
  else
    fail "fds: exit $rc, ${trapped:-0} trapped, $(grep -c 'ran out of file descriptors' "$work/fds.err") notes"
  fi
fi

# Reads the device served (read-only files it holds) against the CPU
# backend's, errno for errno ("raw" shows the two node answers
# differently), and the device really held the files.
if [[ -f $work/bin/fileio.wasm ]] && wanted fileio_raw; then
  "$ww" run --backend gpu "${tier[@]}" -q -n 24 --dir data::data --stats "$work/fileio.json" "$work/bin/fileio.wasm" \
    @index raw </dev/null >"$work/fileio.gpu.raw" 2>&1
  "$ww" run --backend cpu -q -n 24 --dir data::data "$work/bin/fileio.wasm" @index raw </dev/null >"$work/fileio.cpu.raw" 2>&1
  held=$(grep -oE '"device_files": *[0-9]+' "$work/fileio.json" | grep -oE '[0-9]+$')
  if [[ ${held:-0} == 2 ]] && cmp -s "$work/fileio.cpu.raw" "$work/fileio.gpu.raw"; then
    ok=$((ok + 1))
  else
    fail "fileio raw: device held ${held:-0} files (want 2), outputs $(cmp -s "$work/fileio.cpu.raw" "$work/fileio.gpu.raw" && echo equal || echo differ)"
    diff "$work/fileio.cpu.raw" "$work/fileio.gpu.raw" | head -5
  fi
fi

# Writable directories (--dir-rw): instance i writes beneath w/gpu/i only,
# and leaves node's tree.
if [[ -f $work/bin/writes.wasm && -d $work/w/node ]] && wanted writes; then
  rm -rf "$work/w/gpu"
  "$ww" run --backend gpu "${tier[@]}" -q -n 3 --dir-rw "$work/w/gpu/{i}::out" "$work/bin/writes.wasm" @index \
    </dev/null >"$work/w/gpu.out" 2>&1
  if cmp -s "$work/w/node.out" "$work/w/gpu.out" && diff -r "$work/w/node" "$work/w/gpu" >/dev/null; then
    ok=$((ok + 1))
  else
    fail "writes: stdout or the written trees differ from node's"
  fi
fi

# Output the device cannot take whole: a log that fills (40 instances of
# bigprint, 2.4 MB each, past the 64 MiB device log) and the output cap
# (the host cuts the write where the CPU does). Both must leave for the
# host at least once and end as the CPU backend's output.
if [[ -f $work/bin/bigprint.wasm ]] && wanted bigbatch; then
  for opts in "-n 40" "-n 4 --output-cap 100000"; do
    # shellcheck disable=SC2086
    "$ww" run --backend gpu "${tier[@]}" -q $opts --stats "$work/big.json" "$work/bin/bigprint.wasm" >"$work/big.gpu" 2>/dev/null
    # shellcheck disable=SC2086
    "$ww" run --backend cpu -q $opts "$work/bin/bigprint.wasm" >"$work/big.cpu" 2>/dev/null
    calls=$(grep -oE '"calls": *[0-9]+' "$work/big.json" | grep -oE '[0-9]+$')
    if [[ ${calls:-0} -gt 0 ]] && cmp -s "$work/big.gpu" "$work/big.cpu"; then
      ok=$((ok + 1))
    else
      fail "bigprint $opts: $(stat -c %s "$work/big.gpu") bytes against the CPU's $(stat -c %s "$work/big.cpu"), ${calls:-0} host calls"
    fi
  done
fi

# random_get: the same counter-based bytes as the CPU backend for a seed.
if [[ -f $work/bin/random.wasm ]] && wanted random; then
  "$ww" run --backend gpu "${tier[@]}" -q -n 8 --seed 7 "$work/bin/random.wasm" >"$work/random.gpu" 2>&1
  if cmp -s "$work/random.a" "$work/random.gpu"; then ok=$((ok + 1)); else fail "random_get: GPU bytes differ from the CPU's for --seed 7"; fi
fi

if [[ -f $work/bin/sqlite.wasm && -f $work/sqlite.node.cat ]] && wanted sqlite; then
  q="select id, name, v * 3, length(name) from t where id % 97 = @index order by v desc limit 5"
  "$ww" run --backend gpu "${tier[@]}" -q -n 25 --dir db::db --stats "$work/sqlite.json" "$work/bin/sqlite.wasm" db/t.db "$q" \
    </dev/null >"$work/sqlite.gpu.cat" 2>&1
  held=$(grep -oE '"device_files": *[0-9]+' "$work/sqlite.json" | grep -oE '[0-9]+$')
  if cmp -s "$work/sqlite.node.cat" "$work/sqlite.gpu.cat" && [[ ${held:-0} == 1 ]]; then
    ok=$((ok + 1))
  else
    fail "sqlite batch (the device held ${held:-0} files, want the database)"
    diff "$work/sqlite.node.cat" "$work/sqlite.gpu.cat" | head -5
  fi
fi
echo "$ok passed, $bad failed"
[[ $bad == 0 ]]
