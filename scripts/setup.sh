#!/usr/bin/env bash
# Installs what wasmwarp needs on Debian 12 (skipping apt when all of it is
# there already), then configures and builds into build/ (Ninja,
# RelWithDebInfo).
#   env: WW_BUILD_DIR=dir (default build)  WW_JOBS=n (default: all cores)
#        WW_SKIP_BUILD=1 to install only
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${WW_BUILD_DIR:-$root/build}
jobs=${WW_JOBS:-$(nproc)}

# Compilers and build tools; the libraries the code links (xxhash: the
# compiled-code cache's keys and checksums); wabt for the spec
# suite (wast2json), tests (wat2wasm) and its library, with which `wasmwarp`
# reads text-format modules; clang + lld + wasi-libc + the wasm32
# compiler-rt builtins to build the C guests in examples/ and bench/; rustc
# with the wasm32 standard library for the Rust test guests (tests/guests);
# clang's compiler-rt for the libFuzzer target; pkg-config for the
# installed package's test; clang-format for the tree's formatting check;
# Python's headers, pybind11, DLPack's header,
# NumPy, pytest and matplotlib for the Python extension (python/), its
# tests and the example (examples/python); pip, setuptools and wheel for
# `pip install .` (pyproject.toml) and its test; colorama for the WASI test
# suite's own runner (tests/wasi/testsuite); Open MPI for `mpirun wasmwarp
# run` (optional at build time) and its tests; Slurm for the test that
# starts a one-host cluster (tests/slurm).
packages=(build-essential cmake ninja-build g++ clang clang-format lld wabt pkg-config
  python3-dev pybind11-dev python3-pybind11 libdlpack-dev python3-numpy python3-pytest python3-matplotlib
  python3-pip python3-setuptools python3-wheel
  python3-colorama libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libpng-dev libxxhash-dev
  wasi-libc libclang-rt-14-dev libclang-rt-14-dev-wasm32 rustc libstd-rust-dev-wasm32
  libopenmpi-dev openmpi-bin slurm-wlm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed'; then
    missing+=("$p")
  fi
done
# node (V8) is the benchmarks' baseline and the WASI tests' reference (its
# node:wasi), npm fetches SQLite for them, python3 makes their database;
# any installed versions will do.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
if ! python3 -c 'import sqlite3' >/dev/null 2>&1; then missing+=(python3); fi

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

[[ ${WW_SKIP_BUILD:-0} == 1 ]] && exit 0

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
ninja -C "$build" -j "$jobs"
echo "setup: built into $build"
