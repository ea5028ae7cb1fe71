"""examples/python/option_sweep.py, the researcher's example: its numbers
against Black-Scholes and against NumPy computing the same paths, and its
plot written (the numbers, not the pixels)."""
import math
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import wasmwarp

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
sys.path.insert(0, str(EXAMPLE))
import option_sweep  # noqa: E402


@pytest.fixture(scope="module")
def option_wasm(tmp_path_factory):
    prebuilt = os.environ.get("WW_TEST_WASM_DIR")
    if prebuilt and (pathlib.Path(prebuilt) / "option.wasm").exists():
        return pathlib.Path(prebuilt) / "option.wasm"
    if not shutil.which("clang"):
        pytest.skip("no clang")
    out = tmp_path_factory.mktemp("option") / "option.wasm"
    r = subprocess.run(["clang", "--target=wasm32-wasi", "-O2", "-nostartfiles", "-Wl,--no-entry",
                        str(EXAMPLE / "option.c"), "-lm", "-o", str(out)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot build option.c for wasm32-wasi (wasi-libc?): {r.stderr.strip()[:200]}")
    return out


def numpy_payoffs(paths, sigma):
    """option.c's payoff, vectorised with NumPy (its own exp, log, cos)."""
    def splitmix64(x):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))

    k = np.arange(paths, dtype=np.uint64)
    with np.errstate(over="ignore"):
        u1 = ((splitmix64(2 * k) >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
        u2 = ((splitmix64(2 * k + np.uint64(1)) >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    st = 100.0 * np.exp((0.03 - 0.5 * sigma * sigma) + sigma * z)
    return math.exp(-0.03) * np.where(st > 105.0, st - 105.0, 0.0)


def test_prices_agree_with_black_scholes(option_wasm):
    sigmas = np.linspace(0.1, 0.5, 5)
    payoffs, means, errors = option_sweep.study(option_wasm, sigmas, 20000, backend="cpu")
    assert payoffs.shape == (5, 20000)
    exact = option_sweep.black_scholes(sigmas)
    assert np.all(np.abs(means - exact) < 4 * errors), (means, exact, errors)
    assert np.all(np.diff(means) > 0)  # a call is worth more as volatility rises


def test_each_path_is_what_numpy_computes(option_wasm):
    payoffs, _, _ = option_sweep.study(option_wasm, [0.3], 5000, backend="cpu")
    # The same formulas with another libm: equal up to a few ulps.
    np.testing.assert_allclose(payoffs[0], numpy_payoffs(5000, 0.3), rtol=1e-12, atol=1e-9)
    assert np.count_nonzero(payoffs[0]) > 1000


def test_the_script_prints_and_plots(option_wasm, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sweep.png"
    r = subprocess.run([sys.executable, str(EXAMPLE / "option_sweep.py"), str(option_wasm), "--paths", "3000",
                        "--sigmas", "3", "--backend", "cpu", "--png", str(png)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.splitlines() if l[:1].isdigit() and "instances" not in l]
    assert len(rows) == 3 and r.stdout.startswith("9000 instances")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
