#!/usr/bin/env bash
# WASI programs on wasmwarp against node's WASI (node:wasi, the reference):
# C programs built with Debian's wasi-libc and a Rust program built for
# wasm32-wasi, each run on the CPU interpreter and the compiled CPU tier;
# stdout, stderr and the exit code must equal node's. sandbox.c and
# calls.c have their own expected output (node's --dir preopens are
# writable, ours are read-only; --dir-rw ones are compared with node's in
# writes.c; node's answers to many calls are not wasmtime's).
# usage: tests/wasi/check.sh WASMWARP WORKDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ww=$(realpath "$1")
work=$2
command -v node >/dev/null && command -v clang >/dev/null || { echo "wasi: needs node and clang; skipped"; exit 77; }
echo 'int main(void) { return 0; }' | clang --target=wasm32-wasi -x c -c - -o /dev/null 2>/dev/null ||
  { echo "wasi: clang has no wasm32-wasi target (wasi-libc); skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work/bin" "$work/fx/data/sub"
cd "$work/fx"
printf 'hello file\nsecond line\n' >data/in.txt
printf 'nested\n' >data/sub/nested.txt
printf 'secret\n' >outside.txt
ln -s ../outside.txt data/link-out
seq 1 2000 >lines.txt

fail=0
for src in "$here"/programs/*.c; do
  name=$(basename "$src" .c)
  # Compile and link in two steps: a wasm-opt on PATH would otherwise run
  # with its own feature set.
  clang --target=wasm32-wasi -O2 -c "$src" -o "$work/bin/$name.o" &&
    clang --target=wasm32-wasi -O2 "$work/bin/$name.o" -o "$work/bin/$name.wasm" || { echo "FAIL build $name"; fail=1; }
done
# node 18 (Debian 12's) wants a flag for node:wasi that node 20 no longer
# takes; a node whose WASI cannot run the simplest program is no reference.
node_flags=(--no-warnings)
node --experimental-wasi-unstable-preview1 -e 0 >/dev/null 2>&1 && node_flags+=(--experimental-wasi-unstable-preview1)
probe=$(node "${node_flags[@]}" "$here/run-node.mjs" "$work/bin/exit_code.wasm" 5 </dev/null 2>&1)
if [[ $? != 5 || $probe != "leaving with 5" ]]; then
  echo "wasi: node $(node --version) cannot run a WASI program ($probe); skipped"
  exit 77
fi
have_rust=0
have_sqlite=0
# (The target list is read whole: with pipefail, grep -q leaving early
# would let rustc's SIGPIPE fail the test now and then.)
rust_targets=$(/usr/bin/rustc --print target-list 2>/dev/null)
if grep -qx wasm32-wasi <<<"$rust_targets" &&
  /usr/bin/rustc --target wasm32-wasi -O -C strip=debuginfo "$here/programs/hello_rust.rs" -o "$work/bin/hello_rust.wasm" 2>/dev/null; then
  have_rust=1
fi

# case NAME STDIN -- wasmwarp/node options -- MODULE ARGS...
cases=0
run_case() {
  local tag=$1 input=$2
  shift 2
  local opts=() wasm
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  wasm=$work/bin/$1.wasm
  shift
  [[ -f $wasm ]] || return 0
  node "${node_flags[@]}" "$here/run-node.mjs" "${opts[@]}" "$wasm" "$@" <"$input" >"$work/$tag.node.out" 2>"$work/$tag.node.err"
  echo $? >"$work/$tag.node.rc"
  for tier in interp compiled; do
    "$ww" run --backend cpu --tier $tier "${opts[@]}" "$wasm" "$@" <"$input" >"$work/$tag.$tier.out" 2>"$work/$tag.$tier.err"
    echo $? >"$work/$tag.$tier.rc"
    cases=$((cases + 1))
    for part in out err rc; do
      if ! cmp -s "$work/$tag.node.$part" "$work/$tag.$tier.$part"; then
        echo "FAIL $tag ($tier): std$part differs from node's"
        diff "$work/$tag.node.$part" "$work/$tag.$tier.$part" | head -5
        fail=1
      fi
    done
  done
}
run_case args /dev/null --env GREETING=hello --env EMPTY= -- args_env one "two words" "" -3
run_case stdio lines.txt -- stdio
run_case files /dev/null --dir data::data -- files
run_case fileio /dev/null --dir data::data -- fileio 3
run_case exit0 /dev/null -- exit_code 0
run_case exit42 /dev/null -- exit_code 42
run_case bigprint /dev/null -- bigprint
((have_rust)) && run_case rust lines.txt --dir data::data --env GREETING=hi -- hello_rust a b c

# Batches: instance i's argv has i for @index; its stdout (in instance
# order, or in its own --stdout file) and exit code must be node's for
# that argv. Instances share a worker's reused instance, so any state one
# left behind would show.
batch_case() {
  local tag=$1 n=$2 prog=$3
  shift 3
  : >"$work/$tag.node.cat"
  for ((i = 0; i < n; ++i)); do
    node "${node_flags[@]}" "$here/run-node.mjs" --dir data::data --env GREETING=hi "$work/bin/$prog.wasm" "${@//@index/$i}" \
      </dev/null >"$work/$tag.node.$i" 2>/dev/null
    echo "$i,$?," >>"$work/$tag.node.codes"
    cat "$work/$tag.node.$i" >>"$work/$tag.node.cat"
  done
  for tier in interp compiled; do
    cases=$((cases + 1))
    "$ww" run --backend cpu --tier $tier -q -n "$n" --threads 2 --output "$work/$tag.$tier.csv" --dir data::data \
      --env GREETING=hi "$work/bin/$prog.wasm" "$@" </dev/null >"$work/$tag.$tier.cat" 2>/dev/null
    tail -n +2 "$work/$tag.$tier.csv" | cmp -s - "$work/$tag.node.codes" || { echo "FAIL $tag ($tier): exit codes"; fail=1; }
    cmp -s "$work/$tag.node.cat" "$work/$tag.$tier.cat" || { echo "FAIL $tag ($tier): stdout in instance order"; fail=1; }
    "$ww" run --backend cpu --tier $tier -q -n "$n" --stdout "$work/$tag.$tier.{i}" --dir data::data \
      --env GREETING=hi "$work/bin/$prog.wasm" "$@" </dev/null >/dev/null 2>&1
    for ((i = 0; i < n; ++i)); do
      cmp -s "$work/$tag.node.$i" "$work/$tag.$tier.$i" || { echo "FAIL $tag ($tier): --stdout file $i"; fail=1; break; }
    done
  done
}
rm -f "$work"/*.codes
batch_case batch_args 40 args_env @index "arg @index"
batch_case batch_exit 30 exit_code @index
batch_case batch_files 20 files
batch_case batch_fileio 24 fileio @index

# Writable directories: what the program prints and the tree it leaves
# must be node's (its preopens are writable); in a batch, instance i
# writes in out/i only.
rm -rf "$work/w" && mkdir -p "$work/w/node"
for ((i = 0; i < 3; ++i)); do
  mkdir -p "$work/w/node/$i"
  node "${node_flags[@]}" "$here/run-node.mjs" --dir "$work/w/node/$i::out" "$work/bin/writes.wasm" "$i" \
    </dev/null >>"$work/w/node.out" 2>&1
done
for tier in interp compiled; do
  cases=$((cases + 1))
  "$ww" run --backend cpu --tier $tier -q -n 3 --dir-rw "$work/w/$tier/{i}::out" "$work/bin/writes.wasm" @index \
    </dev/null >"$work/w/$tier.out" 2>&1
  cmp -s "$work/w/node.out" "$work/w/$tier.out" || { echo "FAIL writes ($tier): stdout"; fail=1; }
  diff -r "$work/w/node" "$work/w/$tier" >/dev/null || { echo "FAIL writes ($tier): the trees differ from node's"; fail=1; }
done

# random_get in a batch: --seed repeats a batch's bytes, instances differ.
"$ww" run --backend cpu -q -n 8 --seed 7 "$work/bin/random.wasm" >"$work/random.a" 2>&1
"$ww" run --backend cpu -q -n 8 --seed 7 "$work/bin/random.wasm" >"$work/random.b" 2>&1
"$ww" run --backend cpu -q -n 8 "$work/bin/random.wasm" >"$work/random.c" 2>&1
cases=$((cases + 1))
if ! cmp -s "$work/random.a" "$work/random.b" || cmp -s "$work/random.a" "$work/random.c" ||
  [[ $(sort -u "$work/random.a" | wc -l) != 8 ]]; then
  echo "FAIL random_get: --seed must repeat a batch and its instances must differ"
  fail=1
fi

# SQLite, a real program nobody here wrote (tests/wasi/sqlite/build.sh:
# sqlite3.c from npm, fetched at run time into a cache, never into the
# tree), each instance of a batch running its own query against a
# database in a read-only preopen; the interpreter only (the compiled CPU
# tier takes minutes to compile SQLite on a small machine;
# WASI_SQLITE_COMPILED=1 adds it).
sqlite_cache=${WASI_TEST_CACHE:-/tmp/wasmwarp-test-cache}/sqlite
if command -v npm >/dev/null || [[ -f $sqlite_cache/sqlite3.o ]]; then
  sqlite_built=$(bash "$here/sqlite/build.sh" "$sqlite_cache") || echo "wasi: $sqlite_built"
fi
if [[ -f $sqlite_cache/sqlite.wasm && -f $sqlite_cache/t.db ]]; then
  cp "$sqlite_cache/sqlite.wasm" "$work/bin/sqlite.wasm"
  mkdir -p db && cp "$sqlite_cache/t.db" db/t.db
  sql_tiers=(interp)
  [[ ${WASI_SQLITE_COMPILED:-0} == 1 ]] && sql_tiers+=(compiled)
  q="select id, name, v * 3, length(name) from t where id % 97 = @index order by v desc limit 5"
  : >"$work/sqlite.node.cat"
  for ((i = 0; i < 25; ++i)); do
    node "${node_flags[@]}" "$here/run-node.mjs" --dir db::db "$work/bin/sqlite.wasm" db/t.db "${q//@index/$i}" \
      </dev/null >>"$work/sqlite.node.cat" 2>&1
  done
  for tier in "${sql_tiers[@]}"; do
    cases=$((cases + 1))
    "$ww" run --backend cpu --tier $tier -q -n 25 --dir db::db "$work/bin/sqlite.wasm" db/t.db "$q" \
      </dev/null >"$work/sqlite.$tier.cat" 2>&1
    cmp -s "$work/sqlite.node.cat" "$work/sqlite.$tier.cat" || { echo "FAIL sqlite batch ($tier)"; fail=1; }
    cases=$((cases + 1))
    "$ww" run --backend cpu --tier $tier --dir db::db "$work/bin/sqlite.wasm" db/t.db \
      "select count(*), sum(v), max(name) from t; select * from nosuchtable" >"$work/sqlite1.$tier" 2>&1
    echo "rc=$?" >>"$work/sqlite1.$tier"
    node "${node_flags[@]}" "$here/run-node.mjs" --dir db::db "$work/bin/sqlite.wasm" db/t.db \
      "select count(*), sum(v), max(name) from t; select * from nosuchtable" >"$work/sqlite1.node" 2>&1
    echo "rc=$?" >>"$work/sqlite1.node"
    cmp -s "$work/sqlite1.node" "$work/sqlite1.$tier" || { echo "FAIL sqlite single ($tier)"; fail=1; }
  done
  have_sqlite=1
fi

# Clocks and random bytes against the only right answers (node's own
# poll_oneoff can return before the 2 ms it is asked to sleep on a loaded
# CI machine, so node is not the reference here).
for tier in interp compiled; do
  cases=$((cases + 1))
  "$ww" run --backend cpu --tier $tier "$work/bin/clocks.wasm" </dev/null >"$work/clocks.$tier.out" 2>&1
  cmp -s "$here/programs/clocks.expected" "$work/clocks.$tier.out" || {
    echo "FAIL clocks ($tier)"
    diff "$here/programs/clocks.expected" "$work/clocks.$tier.out" | head -5
    fail=1
  }
done

for tier in interp compiled; do
  "$ww" run --backend cpu --tier $tier --dir data::data "$work/bin/sandbox.wasm" </dev/null >"$work/sandbox.$tier.out" 2>&1
  cases=$((cases + 1))
  cmp -s "$here/programs/sandbox.expected" "$work/sandbox.$tier.out" || {
    echo "FAIL sandbox ($tier)"
    diff "$here/programs/sandbox.expected" "$work/sandbox.$tier.out" | head -5
    fail=1
  }
done
# The WASI calls one by one (calls.c), in a fresh writable directory.
for tier in interp compiled; do
  rm -rf "$work/calls" && mkdir -p "$work/calls"
  "$ww" run --backend cpu --tier $tier --dir-rw "$work/calls::out" --dir data::data "$work/bin/calls.wasm" </dev/null \
    >"$work/calls.$tier.out" 2>&1
  cases=$((cases + 1))
  cmp -s "$here/programs/calls.expected" "$work/calls.$tier.out" || {
    echo "FAIL calls ($tier)"
    diff "$here/programs/calls.expected" "$work/calls.$tier.out" | head -5
    fail=1
  }
done
echo "wasi: $cases runs compared ($( ((have_rust)) && echo "with" || echo "without") the Rust program, $( ((have_sqlite)) && echo "with" || echo "without") SQLite), $( ((fail)) && echo "FAILED" || echo "all equal")"
exit $fail
