#!/usr/bin/env bash
# SQLite, a real program nobody here wrote: sqlite3.c from npm's
# better-sqlite3 (fetched at run time into CACHE, never into the tree)
# with query.c, this folder's query driver, built for wasm32-wasi (the
# interpreter and compiled tiers run it) and, with --native, for this
# machine (the benchmarks' native row). Also makes CACHE/t.db, the
# database the tests and benchmarks query: t(id, name, v), 5,000 rows.
# usage: tests/wasi/sqlite/build.sh CACHE [--native]
#   makes CACHE/sqlite.wasm, CACHE/t.db [, CACHE/sqlite-native]; exit 1
#   when npm, the registry, clang for wasm32-wasi or python3's sqlite3 are
#   missing (with one line saying which).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:?usage: build.sh CACHE [--native]}
mkdir -p "$cache" && cd "$cache" || exit 1
src=package/deps/sqlite3
# The same switches for both builds: one thread, no extensions, no WAL
# (the database is read-only), no system().
defs=(-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_OMIT_WAL -DSQLITE_OMIT_SHARED_CACHE -DSQLITE_NOHAVE_SYSTEM)
if [[ ! -f $src/sqlite3.c ]]; then
  command -v npm >/dev/null || { echo "sqlite: needs npm to fetch sqlite3.c"; exit 1; }
  rm -rf package ./*.tgz
  npm pack --silent better-sqlite3@12.11.1 >/dev/null 2>&1 && tar xzf ./*.tgz $src/sqlite3.c $src/sqlite3.h ||
    { echo "sqlite: could not fetch better-sqlite3 from npm"; exit 1; }
fi
if [[ ! -f sqlite3.o ]]; then
  clang --target=wasm32-wasi -O2 -c -D_WASI_EMULATED_MMAN -D_WASI_EMULATED_GETPID -D_WASI_EMULATED_PROCESS_CLOCKS \
    "${defs[@]}" -I$src $src/sqlite3.c -o sqlite3.o.tmp && mv sqlite3.o.tmp sqlite3.o ||
    { echo "sqlite: clang could not build sqlite3.c for wasm32-wasi"; exit 1; }
fi
clang --target=wasm32-wasi -O2 -c -I$src "$here/query.c" -o query.o &&
  clang --target=wasm32-wasi -O2 query.o sqlite3.o -lwasi-emulated-mman -lwasi-emulated-getpid \
    -lwasi-emulated-process-clocks -o sqlite.wasm || { echo "sqlite: could not link sqlite.wasm"; exit 1; }
if [[ ${2:-} == --native ]] && [[ ! -x sqlite-native || sqlite-native -ot "$here/query.c" ]]; then
  cc -O2 "${defs[@]}" -I$src "$here/query.c" $src/sqlite3.c -o sqlite-native -lm ||
    { echo "sqlite: could not build the native query driver"; exit 1; }
fi
if [[ ! -f t.db ]]; then
  python3 -c "
import sqlite3
c = sqlite3.connect('t.db.tmp')
c.execute('create table t(id integer primary key, name text, v real)')
c.executemany('insert into t values(?, ?, ?)', [(i, 'name%d' % i, i * 0.25) for i in range(5000)])
c.commit()" && mv t.db.tmp t.db || { echo "sqlite: python3's sqlite3 could not make t.db"; exit 1; }
fi
