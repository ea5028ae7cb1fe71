"""Builds the Python package's native parts with the project's CMake:
the extension (wasmwarp._wasmwarp) and the `wasmwarp` command, which the
package carries in wasmwarp/bin and runs through its console script.
pyproject.toml holds the metadata.

env: WASMWARP_BUILD_DIR  an existing CMake build of this tree (made for the
     same Python) to take the extension and the command from, building
     only those two targets; without it, a fresh Release build (no tests)
     in setuptools' build_temp.
     WASMWARP_CMAKE_ARGS  more arguments for that fresh build's configure
     (e.g. -DWW_CUDA=OFF)."""
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("WASMWARP_BUILD_DIR")
        build = pathlib.Path(given).resolve() if given else pathlib.Path(self.build_temp).resolve() / "cmake"
        if not given:
            args = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DWW_BUILD_TESTS=OFF",
                    f"-DPython3_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
            try:
                import pybind11  # pip's pybind11 (isolated builds) has its CMake files inside
                args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
            except ImportError:
                pass  # Debian's pybind11-dev, found by CMake itself
            args += shlex.split(os.environ.get("WASMWARP_CMAKE_ARGS", ""))
            subprocess.run(args, check=True)
        elif not (build / "CMakeCache.txt").exists():
            sys.exit(f"WASMWARP_BUILD_DIR={given}: not a CMake build folder (no CMakeCache.txt)")
        jobs = ["-j", str(self.parallel or os.cpu_count() or 1)]
        subprocess.run(["cmake", "--build", str(build), "--target", "_wasmwarp", "wasmwarp", *jobs], check=True)
        # The extension, for the interpreter that runs this build: another
        # Python's would not import.
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build / "python" / "wasmwarp" / ("_wasmwarp" + suffix)
        if not built.exists():
            found = sorted(p.name for p in (build / "python" / "wasmwarp").glob("_wasmwarp*"))
            sys.exit(f"the CMake build made no {built.name} for this Python ({sys.executable}); it has: "
                     f"{', '.join(found) or 'no extension (is python3-dev / pybind11 there?)'}")
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, dest)
        cli = dest.parent / "bin" / "wasmwarp"
        cli.parent.mkdir(exist_ok=True)
        shutil.copy2(build / "wasmwarp", cli)
        cli.chmod(0o755)


# setuptools' own build folder beside CMake's build/, not inside it.
setup(ext_modules=[Extension("wasmwarp._wasmwarp", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": "build-python"}})
