"""The Python side of call_overhead.cc: the same calls through
wasmwarp.Module.run, median of REPS; prints "instances seconds_per_call".
    usage: PYTHONPATH=build/python python3 call_overhead.py MODULE.wasm [cpu|gpu] [REPS]"""
import sys
import time

import numpy as np

import wasmwarp

m = wasmwarp.Module(sys.argv[1])
backend = sys.argv[2] if len(sys.argv) > 2 else "cpu"
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
for n in (1, 1000, 1000000):
    x = np.arange(n, dtype=np.int32)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = m.run("inc", x, backend=backend, tier="interp")
        times.append(time.perf_counter() - t0)
        assert r[-1] == n
    print(n, f"{sorted(times)[len(times) // 2]:.6f}")
