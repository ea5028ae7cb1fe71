#!/usr/bin/env bash
# Converts the suite's non-SIMD .wast files (with --simd, its SIMD files)
# with wast2json and runs ww-spectest over them. Run by ctest (spec.cmake)
# or by hand:
#   tests/spec/run-spec.sh --runner build/ww-spectest --suite ../shared/wasm-testsuite \
#     --out /tmp/spec-json --expected-failures tests/spec/expected-failures.txt
# --only "NAME..." runs those files alone (names without .wast); --all-features
# converts with tests/spec/wast2json3.sh (3.0 features: the 3.0 suite's files).
# Every missing piece is an error: a spec test that cannot run must not pass.
set -u

runner= suite= wast2json=wast2json out= xfail= backend=cpu simd=0 only= features=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runner) runner=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --wast2json) wast2json=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --expected-failures) xfail=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --simd) simd=1; shift ;;
    --only) only=$2; shift 2 ;;
    --all-features) features=(--enable-all); shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "run-spec.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

fail() { echo "spec test FAILED: $*" >&2; exit 1; }

[ -n "$runner" ] && [ -x "$runner" ] || fail "ww-spectest runner '$runner' is missing or not executable"
[ -n "$out" ] || fail "no --out folder given"
[ -d "$suite" ] || fail "spec suite folder '$suite' not found (configure with -DWW_SPEC_SUITE=/path/to/wasm-testsuite)"
command -v "$wast2json" >/dev/null 2>&1 || fail "wast2json ('$wast2json') not found: install Debian's wabt package"
[ -z "$xfail" ] || [ -f "$xfail" ] || fail "expected-failures file '$xfail' not found"

shopt -s nullglob
wasts=()
for f in "$suite"/*.wast; do
  if [ -n "$only" ]; then
    # Named files run whatever their kind.
    [[ " $only " == *" $(basename "$f" .wast) "* ]] && wasts+=("$f")
    continue
  fi
  case "$(basename "$f")" in
    simd_*) [ "$simd" = 1 ] && wasts+=("$f") ;;
    *) [ "$simd" = 1 ] || wasts+=("$f") ;;
  esac
done
[ ${#wasts[@]} -gt 0 ] || fail "no .wast files in '$suite'"

mkdir -p "$out" || fail "cannot create '$out'"
jsons=()
for f in "${wasts[@]}"; do
  name=$(basename "$f" .wast)
  json="$out/$name.json"
  # Reconvert only when the .wast is newer: wast2json over 90 files takes
  # a while on a busy machine.
  if [ ! -s "$json" ] || [ "$f" -nt "$json" ]; then
    rm -f "$out/$name".*
    if [ ${#features[@]} -gt 0 ]; then
      bash "$(dirname "$0")/wast2json3.sh" "$wast2json" "$f" "$json" || { rm -f "$json"; fail "wast2json could not convert $f"; }
    else
      "$wast2json" "$f" -o "$json" || { rm -f "$json"; fail "wast2json could not convert $f"; }
    fi
  fi
  jsons+=("$json")
done
echo "spec suite: ${#jsons[@]} scripts from $suite (backend $backend)"

args=(--backend "$backend")
[ -z "$xfail" ] || args+=(--expected-failures "$xfail")
exec "$runner" "${args[@]}" "${extra[@]}" "${jsons[@]}"
