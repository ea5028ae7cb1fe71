#!/usr/bin/env bash
# Builds the libFuzzer target in build-fuzz (clang, ASan + UBSan, coverage
# instrumentation in every wasmwarp library), seeds the corpus with the spec
# suite's modules and fuzzes for a bounded time.
#   usage: fuzz/run.sh [SECONDS]         (default 120)
#   env:   WW_TESTSUITE=path/to/wasm-testsuite   WW_FUZZ_BUILD=dir
# Exit status 1 with the reproducer's path when the fuzzer finds a crash.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-120}
build=${WW_FUZZ_BUILD:-$root/build-fuzz}
suite=${WW_TESTSUITE:-}
if [[ -z $suite ]]; then
  for d in "$root/../shared/wasm-testsuite" /work/shared/wasm-testsuite; do
    if [[ -d $d ]]; then suite=$d; break; fi
  done
fi

# -O1: at -O2 the sanitized, instrumented build of src/exec/cpu/interpreter.cc
# alone takes most of CI's time, several times what it takes at -O1.
if [[ ! -f $build/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Fuzz "-DCMAKE_C_FLAGS_FUZZ=-O1 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_FUZZ=-O1 -g1 -DNDEBUG" \
    -DWW_BUILD_FUZZ=ON -DWW_BUILD_TESTS=OFF \
    -DWW_SANITIZE=address,undefined -DWW_CUDA=OFF \
    "-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all" \
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all" >/dev/null
fi
ninja -C "$build" -j "${WW_JOBS:-$(nproc)}" ww-fuzz-compile

# Seeds: every binary module of the spec suite (SIMD's included), converted
# once with wast2json, plus the example and bench guests.
seed=$build/seed
if [[ ! -f $seed/.done ]]; then
  rm -rf "$seed" "$build/wast"
  mkdir -p "$seed" "$build/wast"
  if [[ -n $suite ]]; then
    for w in "$suite"/*.wast; do
      name=$(basename "$w" .wast)
      wast2json "$w" -o "$build/wast/$name.json" >/dev/null 2>&1 || true
    done
    cp "$build"/wast/*.wasm "$seed"/ 2>/dev/null || true
  else
    echo "fuzz/run.sh: no spec test suite found; seeding from examples only" >&2
  fi
  find "$root/build" "$root/build-infra" -maxdepth 3 -name '*.wasm' -path '*guests*' \
    -exec cp {} "$seed"/ \; 2>/dev/null || true
  touch "$seed/.done"
fi
echo "fuzz/run.sh: $(find "$seed" -name '*.wasm' | wc -l) seed modules; fuzzing for ${seconds}s"

corpus=$build/corpus
crashes=$build/crashes
mkdir -p "$corpus" "$crashes"
set +e
"$build/fuzz/ww-fuzz-compile" "$corpus" "$seed" \
  -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -max_len=1048576 \
  -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 | tail -n 40
rc=${PIPESTATUS[0]}
set -e
if [[ $rc -ne 0 ]]; then
  echo "fuzz/run.sh: FAILED (exit $rc); reproducers:" >&2
  ls -1 "$crashes" >&2
  echo "replay one with: $build/fuzz/ww-fuzz-compile FILE" >&2
  exit 1
fi
echo "fuzz/run.sh: no crash in ${seconds}s"
