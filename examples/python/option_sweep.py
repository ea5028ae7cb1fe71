#!/usr/bin/env python3
"""A volatility sweep of a European call's price by Monte Carlo: option.c,
compiled to WebAssembly, prices one path per instance; a million
instances (100,000 paths at each of 10 volatilities) run in one wasmwarp
call, on the GPU when there is one. The means, with their standard
errors, are plotted against Black-Scholes' closed form.

    clang --target=wasm32-wasi -O2 -nostartfiles -Wl,--no-entry option.c -lm -o option.wasm
    PYTHONPATH=build/python python3 option_sweep.py option.wasm --png sweep.png
"""
import argparse
import math

import numpy as np

import wasmwarp

S0, STRIKE, RATE, YEARS = 100.0, 105.0, 0.03, 1.0  # as in option.c


def black_scholes(sigma):
    """The call's price in closed form, for each volatility."""
    sigma = np.asarray(sigma, dtype=np.float64)
    d1 = (np.log(S0 / STRIKE) + (RATE + 0.5 * sigma**2) * YEARS) / (sigma * math.sqrt(YEARS))
    d2 = d1 - sigma * math.sqrt(YEARS)
    cdf = np.vectorize(lambda x: 0.5 * (1.0 + math.erf(x / math.sqrt(2.0))))
    return S0 * cdf(d1) - STRIKE * math.exp(-RATE * YEARS) * cdf(d2)


def study(wasm, sigmas, paths, backend="auto"):
    """Prices every volatility with `paths` paths each, one instance per
    path: returns (payoffs with a row per volatility, means, standard errors)."""
    m = wasmwarp.Module(wasm)
    sigma_of_instance = np.repeat(np.asarray(sigmas, dtype=np.float64), paths)
    # Path i of every volatility uses the same random numbers (common random
    # numbers): the curve is smooth, and the comparison between points fair.
    path_of_instance = np.tile(np.arange(paths, dtype=np.int64), len(sigmas))
    payoffs = m.run("payoff", path_of_instance, sigma_of_instance, backend=backend).reshape(len(sigmas), paths)
    return payoffs, payoffs.mean(axis=1), payoffs.std(axis=1, ddof=1) / math.sqrt(paths)


def plot(sigmas, means, errors, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fine = np.linspace(min(sigmas), max(sigmas), 200)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(fine, black_scholes(fine), label="Black-Scholes", color="black", linewidth=1)
    ax.errorbar(sigmas, means, yerr=3 * errors, fmt="o", label="wasmwarp Monte Carlo (±3 s.e.)")
    ax.set_xlabel("volatility")
    ax.set_ylabel("call price")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("wasm")
    p.add_argument("--paths", type=int, default=100_000, help="paths per volatility")
    p.add_argument("--sigmas", type=int, default=10, help="volatilities from 0.1 to 0.5")
    p.add_argument("--backend", default="auto")
    p.add_argument("--png", default="option_sweep.png")
    a = p.parse_args()
    sigmas = np.linspace(0.1, 0.5, a.sigmas)
    _, means, errors = study(a.wasm, sigmas, a.paths, a.backend)
    exact = black_scholes(sigmas)
    print(f"{len(sigmas) * a.paths} instances")
    print("sigma   monte carlo  +-3 s.e.  black-scholes")
    for s, mc, e, bs in zip(sigmas, means, errors, exact):
        print(f"{s:5.3f}  {mc:11.4f}  {3 * e:8.4f}  {bs:13.4f}")
    plot(sigmas, means, errors, a.png)
    print(f"plot: {a.png}")


if __name__ == "__main__":
    main()
