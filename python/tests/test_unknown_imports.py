"""Function imports nothing provides (Module's unknown_imports): a call
traps naming the import, or returns zeros; instances that never call one
run normally; memories, tables and globals stay an error."""
import numpy as np
import pytest

import wasmwarp


def test_an_error_without_the_option(wasm):
    m = wasmwarp.Module(wasm["unknown"])
    with pytest.raises(ValueError, match=r"unsatisfied import env\.foo \(func\)"):
        m.run("run", wasmwarp.INDEX, n=4, backend="cpu")


@pytest.mark.parametrize("tier", ["interp", "compiled"])
def test_trap_names_the_import(wasm, tier):
    m = wasmwarp.Module(wasm["unknown"], unknown_imports="trap")
    with pytest.raises(wasmwarp.Trap) as e:
        m.run("run", wasmwarp.INDEX, n=6, backend="cpu", tier=tier)
    assert list(e.value.instances) == [1, 3, 5]
    assert list(e.value.codes) == [21] * 3
    assert e.value.messages == ["unknown import called: env.foo"] * 3
    assert "instance 1: unknown import called: env.foo" in str(e.value)
    np.testing.assert_array_equal(e.value.results, [1, 0, 3, 0, 5, 0])
    r, trapped = m.run("run", wasmwarp.INDEX, n=4, backend="cpu", tier=tier, traps="mask")
    np.testing.assert_array_equal(trapped, [False, True, False, True])
    np.testing.assert_array_equal(r, [1, 0, 3, 0])


@pytest.mark.parametrize("tier", ["interp", "compiled"])
def test_default_returns_zeros(wasm, tier):
    m = wasmwarp.Module(wasm["unknown"], unknown_imports="default")
    np.testing.assert_array_equal(m.run("run", wasmwarp.INDEX, n=4, backend="cpu", tier=tier), [1, 0, 3, 0])
    f = m.run("f64", n=2, backend="cpu", tier=tier)
    assert f.dtype == np.float64
    assert not np.signbit(f).any() and (f == 0).all()


def test_resident_instances_keep_the_trap(wasm):
    m = wasmwarp.Module(wasm["unknown"], unknown_imports="trap")
    b = m.instances(4, backend="cpu")
    for _ in range(2):
        with pytest.raises(wasmwarp.Trap) as e:
            b.call("run", wasmwarp.INDEX)
        assert e.value.messages == ["unknown import called: env.foo"] * 2


def test_only_functions_and_bad_values(wasm):
    m = wasmwarp.Module(wasm["unknown_memory"], unknown_imports="trap")
    with pytest.raises(ValueError, match=r"env\.mem \(memory\): only function imports can be left unknown"):
        m.run("run", n=1, backend="cpu")
    with pytest.raises(ValueError, match="unknown_imports must be"):
        wasmwarp.Module(wasm["unknown"], unknown_imports="both")


def test_on_the_gpu(wasm):
    m = wasmwarp.Module(wasm["unknown"], unknown_imports="trap")
    try:
        _, trapped = m.run("run", wasmwarp.INDEX, n=64, backend="gpu", traps="mask")
    except ValueError as e:
        pytest.skip(f"no GPU: {e}")
    np.testing.assert_array_equal(trapped, np.arange(64) % 2 == 1)
    with pytest.raises(wasmwarp.Trap) as e:
        m.run("run", wasmwarp.INDEX, n=4, backend="gpu")
    assert e.value.messages == ["unknown import called: env.foo"] * 2
    z = wasmwarp.Module(wasm["unknown"], unknown_imports="default")
    np.testing.assert_array_equal(z.run("run", wasmwarp.INDEX, n=4, backend="gpu"), [1, 0, 3, 0])
