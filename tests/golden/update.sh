#!/usr/bin/env bash
# Rewrites tests/golden/expected/ from the current code generator: builds
# the golden test and runs it with WW_GOLDEN_UPDATE=1, which writes each
# module's generated source instead of comparing it (and removes files no
# module makes any more). Arguments go to ninja, e.g. -j1. Then review
# `git diff tests/golden/expected/` like code (README.md).
#   env: WW_BUILD_DIR (default: build/ in the tree)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${WW_BUILD_DIR:-$root/build}
ninja -C "$build" "$@" ww_test_golden
# Only the tests that write files: the check that the tiers compile the
# same source has nothing to update.
WW_GOLDEN_UPDATE=1 "$build/tests/ww_test_golden" \
  --gtest_filter='Modules/CodegenGolden.GeneratedSourceIsTheExpectedFile/*:CodegenGoldenFiles.*'
git -C "$root" status --short --untracked-files=all -- tests/golden/expected || true
