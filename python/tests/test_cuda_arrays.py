"""CUDA arrays in and out of GPU calls (CuPy and PyTorch, where installed
and a GPU is there: the GPU machine's python3): arguments read where they
are, results left there and taken by CuPy (__cuda_array_interface__) and
PyTorch (DLPack) without a copy, answers checked against NumPy."""
import numpy as np
import pytest

import wasmwarp
from test_run import collatz_ref

cupy = pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def m(wasm):
    mod = wasmwarp.Module(wasm["calc"])
    try:
        mod.run("collatz_steps", np.arange(1, 3, dtype=np.int64), backend="gpu")
    except ValueError as e:
        pytest.skip(f"no GPU: {e}")
    return mod


def test_cupy_column_in_numpy_out(m):
    start = cupy.arange(1, 200001, dtype=cupy.int64)
    steps = m.run("collatz_steps", start, backend="gpu")
    np.testing.assert_array_equal(steps, collatz_ref(np.arange(1, 200001, dtype=np.int64)))


def test_results_stay_on_the_device(m):
    start = np.arange(1, 100001, dtype=np.int64)
    out = m.run("collatz_steps", start, backend="gpu", device=True)
    assert isinstance(out, wasmwarp.CudaArray) and out.shape == (100000,) and out.dtype == np.int32
    on_gpu = cupy.asarray(out)
    assert on_gpu.data.ptr == out.__cuda_array_interface__["data"][0]  # no copy
    np.testing.assert_array_equal(cupy.asnumpy(on_gpu), collatz_ref(start))
    # Several results: a tuple of device columns.
    q, r = m.run("divmod", cupy.arange(100, 1100, dtype=cupy.int32), 7, backend="gpu", device=True)
    np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(q)), np.arange(100, 1100) // 7)
    np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(r)), np.arange(100, 1100) % 7)


def test_torch_tensors_in_and_out(m):
    torch = pytest.importorskip("torch")
    a = torch.full((5000,), 0.5, dtype=torch.float64, device="cuda")
    x = torch.arange(5000, dtype=torch.float32, device="cuda")
    out = m.run("affine", a, x, wasmwarp.INDEX, backend="gpu", device=True)
    t = torch.from_dlpack(out)
    assert t.is_cuda and t.dtype == torch.float64
    want = 0.5 * np.arange(5000, dtype=np.float32).astype(np.float64) + np.arange(5000)
    np.testing.assert_array_equal(t.cpu().numpy(), want)

    class OnlyDlpack:
        """A producer with DLPack and nothing else."""

        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

        def __len__(self):
            return len(self.t)

    steps = m.run("collatz_steps", OnlyDlpack(torch.arange(1, 1001, dtype=torch.int64, device="cuda")), backend="gpu")
    np.testing.assert_array_equal(steps, collatz_ref(np.arange(1, 1001, dtype=np.int64)))


def test_resident_instances_take_and_give_device_columns(m):
    b = m.instances(1000, backend="gpu")
    out = b.call("collatz_steps", cupy.arange(1, 1001, dtype=cupy.int64), device=True)
    np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(out)), collatz_ref(np.arange(1, 1001, dtype=np.int64)))


def test_bad_device_input(m):
    with pytest.raises(TypeError, match="given a CUDA array of <i4"):
        m.run("collatz_steps", cupy.arange(10, dtype=cupy.int32), backend="gpu")
    with pytest.raises(ValueError, match="need the GPU backend"):
        m.run("collatz_steps", cupy.arange(10, dtype=cupy.int64), backend="cpu")
    with pytest.raises(ValueError, match="gaps between its rows"):
        m.run("collatz_steps", cupy.arange(20, dtype=cupy.int64)[::2], backend="gpu")
