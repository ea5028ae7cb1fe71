#!/usr/bin/env bash
# Builds, on a machine without a GPU, the bundle that scripts/gpu-check.sh
# runs on the GPU machine (which lacks this project's build dependencies):
# the binaries (built with -arch=sm_90 by the normal build), libpng, the
# converted spec suite, the guest programs and the benchmark builds.
# usage: scripts/gpu-prepare.sh [BUNDLE]   (default .device-build, git-ignored)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(realpath -m "${1:-$root/.device-build}")
build=${WW_BUILD_DIR:-$root/build}
suite=${WW_SPEC_SUITE:-$root/../shared/wasm-testsuite}

cmake -S "$root" -B "$build" -G Ninja >/dev/null
ninja -C "$build" -j"$(nproc)" wasmwarp ww_test_gpu ww-spectest ww-difftest
rm -rf "$bundle"
mkdir -p "$bundle/lib" "$bundle/spec"
cp "$build/wasmwarp" "$build/ww-spectest" "$build/ww-difftest" "$build/tests/ww_test_gpu" "$bundle/"
# The bundle travels to the GPU machine under a size limit: no debug info.
strip "$bundle/wasmwarp" "$bundle/ww-spectest" "$bundle/ww-difftest" "$bundle/ww_test_gpu"
cp "$root/tests/spec/expected-failures.txt" "$root/tests/spec/expected-failures-gpu.txt" "$bundle/"
# The GPU machine's image may lack libpng; carry the one we link.
cp "$(ldd "$build/wasmwarp" | awk '/libpng/ {print $3}')" "$bundle/lib/"
for f in "$suite"/*.wast; do
  case $(basename "$f") in simd_*) continue ;; esac
  wast2json "$f" -o "$bundle/spec/$(basename "${f%.wast}").json"
done
bash "$root/tests/guests/build.sh" "$bundle/guests" >/dev/null
rm -rf "$bundle/guests/sdk" "$bundle/guests/sdk-mv"
bash "$root/bench/gpu/build.sh" "$bundle/bench" >/dev/null
du -sh "$bundle"
