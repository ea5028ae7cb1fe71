#!/usr/bin/env bash
# The Python package as a user installs it: `pip install` of this tree into
# a fresh virtual environment (offline: --no-build-isolation, Debian's
# pip, setuptools, wheel and NumPy seen through
# --system-site-packages), taking the extension and the command from the
# CMake build BUILD (WASMWARP_BUILD_DIR, setup.py) rather than building
# the project a second time. Then, from another folder and without
# PYTHONPATH: the version, the `wasmwarp` command, the type stubs, and the
# Python tests against the installed package.
# usage: python/tests/package.sh BUILD [PYTHON]   (default /usr/bin/python3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(realpath "${1:?usage: package.sh BUILD [PYTHON]}")
python=${2:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Debian's pip (python3-pip), seen through the system's site-packages,
# installs into the environment that runs it.
"$python" -m venv --system-site-packages --without-pip "$work/venv"
py=$work/venv/bin/python
# pip builds in the tree (setuptools' build-python/ and
# python/wasmwarp.egg-info, both git-ignored).
WASMWARP_BUILD_DIR=$build "$py" -m pip install -q --no-build-isolation --no-deps --no-index "$root"
cd "$work"
unset PYTHONPATH
want=$("$build/wasmwarp" --version | awk '{print $2}')
cmake_version=$(sed -n 's/^project(wasmwarp VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
got=$("$py" -c 'import wasmwarp, pathlib; assert pathlib.Path(wasmwarp.__file__).is_relative_to(pathlib.Path("'"$work"'/venv")), wasmwarp.__file__; print(wasmwarp.__version__)')
[[ $got == "$want" && $got == "$cmake_version" ]] ||
  { echo "package: __version__ $got, wasmwarp --version $want, CMake's $cmake_version"; exit 1; }
[[ $("$work/venv/bin/wasmwarp" --version) == "wasmwarp $want" ]] || { echo "package: its wasmwarp command fails"; exit 1; }
site=$("$py" -c 'import wasmwarp, os; print(os.path.dirname(wasmwarp.__file__))')
for f in __init__.pyi py.typed bin/wasmwarp _cli.py; do
  [[ -e $site/$f ]] || { echo "package: $f not installed"; exit 1; }
done
"$py" -m pytest -q -p no:cacheprovider "$here"
echo "package: installed into a fresh virtual environment, version $got, command and tests OK"
