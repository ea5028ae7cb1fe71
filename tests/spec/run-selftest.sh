#!/usr/bin/env bash
# Runs ww-spectest over runner-selftest.wast with every line marked
# ";; WRONG" listed as an expected failure: the runner exits 0 only when
# exactly those assertions fail (a wrong one that passes is an "unexpected
# pass", a right one that fails is an unlisted failure).
#   run-selftest.sh RUNNER WAST2JSON OUT_DIR
set -u
runner=$1 wast2json=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
wast=$here/runner-selftest.wast

fail() { echo "runner self-test FAILED: $*" >&2; exit 1; }
[ -x "$runner" ] || fail "ww-spectest runner '$runner' is missing"
command -v "$wast2json" >/dev/null 2>&1 || fail "wast2json ('$wast2json') not found: install Debian's wabt package"
mkdir -p "$out" || fail "cannot create '$out'"
rm -f "$out"/runner-selftest.*
"$wast2json" "$wast" -o "$out/runner-selftest.json" || fail "wast2json could not convert $wast"

xfail=$out/runner-selftest-failures.txt
grep -n ';; WRONG' "$wast" | cut -d: -f1 |
  sed 's/$/  marked WRONG in runner-selftest.wast/; s/^/runner-selftest.wast:/' > "$xfail"
wrong=$(wc -l < "$xfail")
[ "$wrong" -gt 0 ] || fail "no ;; WRONG lines found in $wast"

"$runner" --expected-failures "$xfail" "$out/runner-selftest.json" || fail "see above"
echo "runner self-test: all $wrong wrong assertions failed, every right one passed"
