"""wasmwarp's Python API against answers NumPy computes."""
import numpy as np
import pytest

import wasmwarp


def collatz_ref(n):
    steps = np.zeros(len(n), dtype=np.int32)
    for k, v in enumerate(n.tolist()):
        s = 0
        while v > 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            s += 1
        steps[k] = s
    return steps


def test_columns_in_arrays_out(wasm):
    m = wasmwarp.Module(wasm["calc"])
    n = np.arange(1, 5001, dtype=np.int64)
    steps = m.run("collatz_steps", n, backend="cpu")
    assert steps.dtype == np.int32 and steps.shape == (5000,)
    np.testing.assert_array_equal(steps, collatz_ref(n))


def test_scalars_broadcast_index_and_lists(wasm):
    m = wasmwarp.Module(wasm["calc"].read_bytes())
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    r = m.run("affine", 0.5, x, wasmwarp.INDEX, backend="cpu")
    np.testing.assert_array_equal(r, 0.5 * x.astype(np.float64) + np.arange(1000))
    r2 = m.run("affine", 2.0, [1.0, 2.0], [10, 20], backend="cpu")
    np.testing.assert_array_equal(r2, [12.0, 24.0])
    same = m.run("affine", 1.0, 3.0, 7, n=4, backend="cpu")
    np.testing.assert_array_equal(same, [10.0] * 4)


def test_several_results_and_traps(wasm):
    m = wasmwarp.Module(wasm["calc"])
    num = np.array([7, 7, -2**31, 9], dtype=np.int32)
    den = np.array([2, 0, -1, -4], dtype=np.int32)
    (q, r), trapped = m.run("divmod", num, den, backend="cpu", traps="mask")
    np.testing.assert_array_equal(trapped, [False, True, True, False])
    np.testing.assert_array_equal(q, [3, 0, 0, -2])
    np.testing.assert_array_equal(r, [1, 0, 0, 1])
    with pytest.raises(wasmwarp.Trap) as e:
        m.run("divmod", num, den, backend="cpu")
    assert list(e.value.instances) == [1, 2]
    assert e.value.messages == ["integer divide by zero", "integer overflow"]
    assert "2 of 4 instance(s) trapped" in str(e.value)
    assert m.run("nothing", n=3, backend="cpu") is None


def test_fuel_and_timeout_end_instances(wasm):
    m = wasmwarp.Module(wasm["calc"])
    _, trapped = m.run("spin", wasmwarp.INDEX, n=4, backend="cpu", fuel=1000, traps="mask")
    assert trapped.all()
    with pytest.raises(wasmwarp.Trap) as e:
        m.run("spin", wasmwarp.INDEX, n=2, backend="cpu", timeout=0.2)
    assert e.value.messages == ["not finished: timeout"] * 2


def test_bad_input_says_what_the_cli_says(wasm):
    m = wasmwarp.Module(wasm["calc"])
    with pytest.raises(ValueError, match="unknown export 'nope'"):
        m.run("nope", n=1)
    with pytest.raises(TypeError, match=r"argument 1 of 'collatz_steps' is i64 \(dtype int64\), given dtype int32"):
        m.run("collatz_steps", np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="takes 3 argument"):
        m.run("affine", 1.0, n=1)
    with pytest.raises(ValueError, match="differ in length"):
        m.run("affine", 1.0, np.zeros(3, np.float32), np.zeros(4, np.int32))
    with pytest.raises(ValueError, match="give n="):
        m.run("affine", 1.0, 2.0, 3)
    with pytest.raises(ValueError, match="must be 1-D"):
        m.run("collatz_steps", np.zeros((2, 2), np.int64))
    with pytest.raises(ValueError, match="backend must be"):
        m.run("nothing", n=1, backend="tpu")
    with pytest.raises(ValueError, match="cannot open"):
        wasmwarp.Module("/nonexistent.wasm")
    with pytest.raises(ValueError, match="magic"):
        wasmwarp.Module(b"not wasm")


def test_exports_listed(wasm):
    m = wasmwarp.Module(wasm["calc"])
    names = [e.name for e in m.exports]
    assert names == ["collatz_steps", "affine", "divmod", "spin", "nothing"]
    assert m.exports[1].params == ["f64", "f32", "i32"] and m.exports[1].results == ["f64"]


def test_gpu_or_a_clear_error(wasm):
    m = wasmwarp.Module(wasm["calc"])
    n = np.arange(1, 20001, dtype=np.int64)
    try:
        steps = m.run("collatz_steps", n, backend="gpu")
    except ValueError as e:
        assert "GPU" in str(e) or "CUDA" in str(e)
        pytest.skip(f"no GPU: {e}")
    np.testing.assert_array_equal(steps, collatz_ref(n))


def test_gpus_choose_where_instances_run(wasm):
    """gpus= takes "all", a count or GPU numbers; one GPU listed twice
    shares it, and the rows are one GPU's, in instance order."""
    m = wasmwarp.Module(wasm["calc"])
    n = np.arange(1, 600001, dtype=np.int64)
    with pytest.raises(ValueError, match="gpus"):
        m.run("collatz_steps", n[:10], backend="cpu", gpus=0)
    with pytest.raises(ValueError, match="gpus"):
        m.run("collatz_steps", n[:10], backend="cpu", gpus="two")
    with pytest.raises(ValueError, match="gpu_workers"):
        m.run("collatz_steps", n[:10], backend="cpu", gpu_workers=0)
    np.testing.assert_array_equal(m.run("collatz_steps", n[:100], backend="cpu", gpus=[0, 1]), collatz_ref(n[:100]))
    np.testing.assert_array_equal(m.run("collatz_steps", n[:100], backend="cpu", gpus=(0, 1), gpu_workers=2),
                                  collatz_ref(n[:100]))
    try:
        steps = m.run("collatz_steps", n, backend="gpu", gpus=[0, 0])
    except ValueError as e:
        assert "GPU" in str(e) or "CUDA" in str(e)
        pytest.skip(f"no GPU: {e}")
    # collatz_ref, a whole array at a time (600,000 values).
    v, want = n.copy(), np.zeros(len(n), dtype=np.int32)
    while (live := v > 1).any():
        v = np.where(live, np.where(v % 2 == 0, v // 2, 3 * v + 1), v)
        want += live
    np.testing.assert_array_equal(steps, want)


def test_ctrl_c_stops_a_running_call(wasm):
    """SIGINT while instances spin: KeyboardInterrupt, not a wait for the timeout."""
    import os
    import signal
    import subprocess
    import sys
    import time

    code = (
        "import wasmwarp, sys\n"
        f"m = wasmwarp.Module({str(wasm['calc'])!r})\n"
        "print('started', flush=True)\n"
        "try:\n"
        "    m.run('spin', wasmwarp.INDEX, n=2, backend='cpu', timeout=60)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(3)\n"
    )
    env = dict(os.environ)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == "started"
    time.sleep(0.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 3, out
    assert "interrupted" in out
    assert time.monotonic() - t0 < 30


def _walker_expected(n, k):
    """walker.wat's init(i), step(2) k times, result(): (i + 2k, k), except
    that an instance whose g is 3 when a step starts traps there."""
    i = np.arange(n, dtype=np.int64)
    trapped = (i == 3) | ((k > 1) & (i == 1))
    return i + 2 * k, np.full(n, k, dtype=np.int64), trapped


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_chain_runs_calls_on_the_same_instances(wasm, backend):
    m = wasmwarp.Module(wasm["walker"])
    try:
        (g, steps), mask = m.chain([wasmwarp.Call("init", wasmwarp.INDEX), wasmwarp.Call("step", 2, repeat=100),
                                    "result"], n=500, backend=backend, traps="mask")
    except ValueError as e:
        if backend == "gpu" and "gpu" in str(e).lower():
            pytest.skip(str(e))
        raise
    want_g, want_steps, want_mask = _walker_expected(500, 100)
    np.testing.assert_array_equal(mask, want_mask)
    np.testing.assert_array_equal(g[~mask], want_g[~mask])
    np.testing.assert_array_equal(steps[~mask], want_steps[~mask])
    np.testing.assert_array_equal(g[mask], 0)
    # A per-instance column for the first call; a trap raises by default.
    with pytest.raises(wasmwarp.Trap) as t:
        m.chain([wasmwarp.Call("init", np.arange(10, dtype=np.int64)), wasmwarp.Call("step", 2, repeat=5), "result"],
                backend=backend)
    assert list(t.value.instances) == [1, 3]
    assert t.value.messages == ["integer divide by zero"] * 2


def test_chain_bad_input(wasm):
    m = wasmwarp.Module(wasm["walker"])
    with pytest.raises(ValueError, match="unknown export 'nope'"):
        m.chain([wasmwarp.Call("init", 1), "nope"], n=2, backend="cpu")
    with pytest.raises(ValueError, match="the same for every instance"):
        m.chain([wasmwarp.Call("init", 1), wasmwarp.Call("step", np.ones(2, dtype=np.int64))], n=2, backend="cpu")
    with pytest.raises(ValueError, match="of a repeated call, are the same for every instance"):
        m.chain([wasmwarp.Call("init", np.ones(2, dtype=np.int64), repeat=2)], backend="cpu")
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        wasmwarp.Call("step", 1, repeat=0)
    with pytest.raises(TypeError, match="wasmwarp.Call or export names"):
        m.chain([("init", 1)], n=2, backend="cpu")
    with pytest.raises(TypeError, match="takes 1 argument"):
        m.chain([wasmwarp.Call("init")], n=2, backend="cpu")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_instances_keep_their_state(wasm, backend):
    m = wasmwarp.Module(wasm["walker"])
    try:
        b = m.instances(400, backend=backend)
    except ValueError as e:
        if backend == "gpu":
            pytest.skip(str(e))
        raise
    assert b.n == 400 and b.backend == backend
    b.call("init", wasmwarp.INDEX)
    for _ in range(3):
        _, mask = b.call("step", 2, traps="mask")
    np.testing.assert_array_equal(np.flatnonzero(mask), [1, 3])
    # The step counters (i64 at 8), read and set to 100 + i.
    counts = b.read_memory(8, 8).view(np.int64)[:, 0]
    assert counts.shape == (400,)
    want = np.full(400, 3)
    want[[1, 3]] = 0  # trapped instances read as zeros
    np.testing.assert_array_equal(counts, want)
    assert b.write_memory(8, 100 + np.arange(400, dtype=np.int64)) == 400 * 8
    (g, steps), mask = b.chain([wasmwarp.Call("step", 2, repeat=5), "result"], traps="mask")
    i = np.arange(400)
    np.testing.assert_array_equal(np.flatnonzero(mask), [1, 3])
    np.testing.assert_array_equal(g[~mask], (i + 16)[~mask])
    np.testing.assert_array_equal(steps[~mask], (105 + i)[~mask])
    with pytest.raises(wasmwarp.Trap) as t:
        b.call("result")
    assert list(t.value.instances) == [1, 3]
    with pytest.raises(ValueError, match="past instance 0's memory"):
        b.read_memory(65536 - 4, 8)
    with pytest.raises(ValueError, match="one row per instance"):
        b.write_memory(0, np.zeros(3, dtype=np.int32))
    with pytest.raises(ValueError, match="unknown export"):
        b.call("nope")


def test_cuda_arrays_need_the_gpu(wasm):
    """An argument with __cuda_array_interface__ is read on the device:
    the CPU backend refuses it before touching it."""

    class FakeCudaColumn:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<i8", "data": (16, False), "version": 3}

    m = wasmwarp.Module(wasm["calc"])
    with pytest.raises(ValueError, match="need the GPU backend"):
        m.run("collatz_steps", FakeCudaColumn(), backend="cpu")
    with pytest.raises(TypeError, match="given a CUDA array of <i8"):
        m.run("affine", FakeCudaColumn(), 1.0, 1, backend="cpu")
    with pytest.raises(ValueError, match="need the GPU backend"):
        m.run("collatz_steps", np.arange(1, 5, dtype=np.int64), backend="cpu", device=True)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # mix's ValueError, reported
@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_python_host_functions(wasm, backend):
    """host.wat's run(x) calls env.mix(x, 3): served here with the calling
    instance's index; an exception traps only its instance."""
    seen = set()

    def mix(instance, x, k):
        seen.add(instance)
        if x == 13:
            raise ValueError("thirteen")
        return x * k + instance

    m = wasmwarp.Module(wasm["host"], imports={"env": {"mix": mix}})
    try:
        r, mask = m.run("run", wasmwarp.INDEX, n=300, backend=backend, traps="mask")
    except ValueError as e:
        if backend == "gpu":
            pytest.skip(str(e))
        raise
    i = np.arange(300)
    np.testing.assert_array_equal(np.flatnonzero(mask), [13])
    np.testing.assert_array_equal(r[~mask], (4 * i)[~mask])
    assert seen == set(range(300))
    with pytest.raises(ValueError, match="unsatisfied import env.mix"):
        wasmwarp.Module(wasm["host"]).run("run", 1, n=2, backend="cpu")
    with pytest.raises(TypeError, match="not callable"):
        wasmwarp.Module(wasm["host"], imports={"env": {"mix": 5}})


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_v128_arguments_and_results(wasm, backend):
    m = wasmwarp.Module(wasm["lanes"])
    v = np.array([1, -2, 3, 0x7FFFFFF0], dtype=np.int32)
    k = np.arange(100, dtype=np.int32)
    try:
        r = m.run("add_lanes", v.tobytes(), k, backend=backend)
    except ValueError as e:
        if backend == "gpu" and "gpu" in str(e).lower():
            pytest.skip(str(e))
        raise
    assert r.dtype == np.uint8 and r.shape == (100, 16)
    np.testing.assert_array_equal(r.view(np.int32), v[None, :] + k[:, None])  # wraps like i32x4.add
    total = 1 - 2 + 3 + 0x7FFFFFF0
    np.testing.assert_array_equal(m.run("sum", bytearray(v.tobytes()), backend=backend, n=3), [total] * 3)
    np.testing.assert_array_equal(m.run("sum", v, backend=backend, n=2), [total] * 2)  # an array's bytes
    with pytest.raises(ValueError, match="16 bytes, given 4"):
        m.run("sum", b"abcd", backend=backend, n=1)
