"""wasmwarp: run a WebAssembly module's export on many instances at once,
on the CPU or an NVIDIA GPU, with NumPy arrays in and out.

    import numpy as np, wasmwarp
    m = wasmwarp.Module("collatz.wasm")
    steps = m.run("collatz_steps", np.arange(1, 100001, dtype=np.int64), backend="cpu")

Each instance gets one row of every array argument; scalars are the same
for all; ``wasmwarp.INDEX`` is the instance's own index. A trap belongs to
its instance: by default any trap raises :class:`Trap`, with
``traps="mask"`` the call returns the results (zeros where an instance
trapped) and a boolean mask of the instances that trapped.
"""

from collections import namedtuple

import numpy as np

from . import _wasmwarp

#: The version, the same as `wasmwarp --version` and CMake's project
#: version (python/tests/package.sh checks both).
__version__ = "0.1.0"

#: A result column left in GPU memory (``device=True``): exposes
#: ``__cuda_array_interface__`` and DLPack, so ``cupy.asarray(a)`` and
#: ``torch.from_dlpack(a)`` take it without a copy.
CudaArray = _wasmwarp.CudaArray

__all__ = ["__version__", "Module", "Instances", "CudaArray", "Trap", "Export", "Call", "INDEX", "trap_message"]

Export = namedtuple("Export", "name kind params results")


class _Index:
    def __repr__(self):
        return "wasmwarp.INDEX"


#: As an argument: each instance's index, converted to the parameter's type.
INDEX = _Index()

_DTYPES = {"i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}


def trap_message(code):
    """The message of a trap code ("integer divide by zero", ...)."""
    return _wasmwarp.trap_message(int(code))


class Trap(Exception):
    """Instances of a call trapped.

    ``instances``: their indices; ``codes``: their trap codes; ``messages``:
    their messages (an unknown import's names it: "unknown import called:
    env.foo"); ``results``: what the call returned (zeros where an instance
    trapped); ``mask``: a boolean array, True where one trapped.
    """

    def __init__(self, results, codes_all, sites_all=None, module=None):
        self.mask = codes_all != 0
        self.instances = np.flatnonzero(self.mask)
        self.codes = codes_all[self.instances]
        self.results = results
        if sites_all is not None and module is not None:
            sites = sites_all[self.instances]
            self.messages = [module.trap_message(int(c), int(f)) for c, f in zip(self.codes, sites)]
        else:
            self.messages = [trap_message(c) for c in self.codes]
        first = f"instance {self.instances[0]}: {self.messages[0]}" if len(self.instances) else ""
        super().__init__(f"{len(self.instances)} of {len(codes_all)} instance(s) trapped; {first}")


class Call:
    """One call of a chain (:meth:`Module.chain`): ``export`` with ``args``,
    ``repeat`` times in a row. After the first call, arguments are scalars
    or :data:`INDEX`."""

    def __init__(self, export, *args, repeat=1):
        if int(repeat) < 1:
            raise ValueError(f"repeat must be at least 1, not {repeat}")
        self.export = str(export)
        self.args = args
        self.repeat = int(repeat)

    def __repr__(self):
        return f"Call({self.export!r}, *{self.args!r}, repeat={self.repeat})"


def _outcome(out, traps, module):
    cols, codes, sites = out
    results = None if not cols else cols[0] if len(cols) == 1 else tuple(cols)
    if traps == "mask":
        return results, codes != 0
    if codes.any():
        raise Trap(results, codes, sites, module)
    return results


_UNKNOWN_IMPORTS = {None: "error", "trap": "trap", "default": "default"}


class Module:
    """A WebAssembly module (a .wasm path, or its bytes), loaded once.

    ``imports`` serves the module's function imports with Python callables,
    ``{"env": {"mix": fn}}``: ``fn(instance, *args)`` gets the calling
    instance's index and the arguments and returns the result (a tuple for
    several). Calls come from the engine's threads, one at a time under
    the GIL (on the GPU, the instances that made them wait in their wave);
    an exception ends that instance with "host function failed".

    ``unknown_imports`` stands in for function imports that nothing
    provides (neither ``imports`` nor the ``gpu`` module), which are
    otherwise an error: ``"trap"``, a call traps its instance ("unknown
    import called: env.foo"); ``"default"``, a call returns zeros of its
    result types. A module that calls them only on rare paths then runs.
    Memories, tables and globals that nothing provides stay an error."""

    def __init__(self, source, imports=None, unknown_imports=None):
        if unknown_imports not in _UNKNOWN_IMPORTS:
            raise ValueError(f"unknown_imports must be None, 'trap' or 'default', not {unknown_imports!r}")
        self._unknown = _UNKNOWN_IMPORTS[unknown_imports]
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._m = _wasmwarp._Module.from_bytes(bytes(source))
        else:
            self._m = _wasmwarp._Module.load(str(source))
        self._exports = [Export(*e) for e in self._m.exports()]
        self._host = {}
        for module, names in (imports or {}).items():
            for name, fn in names.items():
                if not callable(fn):
                    raise TypeError(f"import {module}.{name}: {fn!r} is not callable")
                self._host[(module, name)] = fn

    @property
    def exports(self):
        """The module's exports: (name, kind, params, results) each."""
        return list(self._exports)

    def _params(self, export):
        for e in self._exports:
            if e.name == export and e.kind == "function":
                return e.params
        return None

    def run(self, export, *args, n=None, backend="auto", tier="auto", threads=0, fuel=0, timeout=0.0,
            traps="raise", device=False, gpus="all", gpu_workers=1):
        """Calls ``export`` on ``n`` fresh instances, one per row of the
        array arguments (``n`` may be left out when one is an array).

        Returns one NumPy array (a row per instance), a tuple of them for
        several results, or None for none; with ``traps="mask"``, a pair
        (those results, a boolean trap mask). A v128 argument is its 16
        bytes (bytes, bytearray, or any array's bytes), the same for every
        instance; a v128 result is a (n, 16) uint8 array. ``backend``: "auto", "cpu" or
        "gpu"; ``tier``: "auto", "interp" or "compiled"; ``fuel``: the most
        back-edges and calls an instance may take; ``timeout``: seconds;
        ``gpus``: the GPUs the instances spread over, "all", a count (the
        first N) or a list of GPU numbers (the faster GPU takes more; the
        rows come back in instance order); ``gpu_workers``: wave loops per
        GPU, so that one wave's transfers overlap another's kernel.

        On the GPU, arguments may be CUDA arrays (CuPy, PyTorch: anything
        with ``__cuda_array_interface__`` or ``__dlpack__``), read where
        they are; with ``device=True`` the results stay there too, as
        :class:`CudaArray` columns (``cupy.asarray(r)``,
        ``torch.from_dlpack(r)``).
        """
        _check_traps(traps)
        converted = self._convert(export, args)
        n = _instances(n, converted)
        out = self._m.call(export, converted, n, backend, tier, int(threads), int(fuel), float(timeout), bool(device),
                           self._host, gpus, int(gpu_workers), self._unknown)
        return _outcome(out, traps, self._m)

    def chain(self, calls, n=None, backend="auto", tier="auto", threads=0, fuel=0, timeout=0.0, traps="raise",
              launch_per_call=False, device=False, gpus="all", gpu_workers=1):
        """Calls ``calls`` in order on the same ``n`` fresh instances, each on
        the state the one before left: e.g. ``[Call("init", seeds),
        Call("step", 0.01, repeat=1000), "result"]`` (a name alone is a call
        without arguments). On the GPU the chain runs in one launch, the
        state never leaving the device. Returns what the last call returns,
        as :meth:`run` does; an instance that traps stops at its trap.
        ``fuel`` is per call. ``launch_per_call``: one GPU launch per call
        (for comparison; slower). ``gpus`` and ``gpu_workers`` as for
        :meth:`run`."""
        _check_traps(traps)
        items = self._chain_items(calls)
        n = _instances(n, [a for _, args, _ in items for a in args])
        out = self._m.chain(items, n, backend, tier, int(threads), int(fuel), float(timeout), bool(launch_per_call),
                            bool(device), self._host, gpus, int(gpu_workers), self._unknown)
        return _outcome(out, traps, self._m)

    def instances(self, n, backend="auto", tier="auto", threads=0):
        """``n`` instances that keep their state between calls: see
        :class:`Instances`. The backend and tier are chosen now (on the GPU,
        the instances live on the device from here on)."""
        return Instances(self, self._m.instances(int(n), backend, tier, int(threads), self._host, self._unknown))

    def _chain_items(self, calls):
        items = []
        for c in calls:
            if isinstance(c, str):
                c = Call(c)
            elif not isinstance(c, Call):
                raise TypeError(f"a chain's calls are wasmwarp.Call or export names, not {type(c).__name__}")
            items.append((c.export, self._convert(c.export, c.args), c.repeat))
        if not items:
            raise ValueError("a chain needs at least one call")
        return items

    def _convert(self, export, args):
        params = self._params(export)
        converted = []
        for k, a in enumerate(args):
            if a is INDEX:
                converted.append(None)
            elif isinstance(a, (list, tuple)) and params is not None and k < len(params) and params[k] in _DTYPES:
                converted.append(np.asarray(a, dtype=_DTYPES[params[k]]))
            elif isinstance(a, np.ndarray) and params is not None and k < len(params) and params[k] == "v128":
                # A vector, the same for every instance: its 16 bytes, not rows.
                converted.append(np.ascontiguousarray(a).tobytes())
            else:
                converted.append(a)
        return converted


class Instances:
    """``n`` instances of a module that keep their state between calls
    (:meth:`Module.instances`): each call runs on the memories and globals
    the call before left. On the GPU they stay on the device: a call sends
    its arguments, and only its results, or what :meth:`read_memory` asks
    for, come back. An instance that trapped keeps its trap: later calls
    skip it and report that trap again.

        b = m.instances(1_000_000, backend="gpu")
        b.call("init", wasmwarp.INDEX)
        b.chain([wasmwarp.Call("step", 0.01, repeat=1000)])
        x = b.call("result")
    """

    def __init__(self, module, inner):
        self._module = module
        self._b = inner

    @property
    def n(self):
        """The number of instances."""
        return self._b.count()

    @property
    def backend(self):
        """"cpu" or "gpu"."""
        return self._b.backend()

    def call(self, export, *args, fuel=0, timeout=0.0, traps="raise", device=False):
        """Calls ``export`` on every instance; arguments and return value as
        :meth:`Module.run` (``n`` is the instances')."""
        _check_traps(traps)
        converted = self._module._convert(export, args)
        _instances(self.n, converted)
        out = self._b.call(self._module._m, export, converted, int(fuel), float(timeout), bool(device))
        return _outcome(out, traps, self._module._m)

    def chain(self, calls, fuel=0, timeout=0.0, traps="raise", launch_per_call=False, device=False):
        """Calls ``calls`` one after another on every instance, as
        :meth:`Module.chain` (one launch on the GPU)."""
        _check_traps(traps)
        items = self._module._chain_items(calls)
        _instances(self.n, [a for _, args, _ in items for a in args])
        out = self._b.chain(self._module._m, items, int(fuel), float(timeout), bool(launch_per_call), bool(device))
        return _outcome(out, traps, self._module._m)

    def read_memory(self, addr, nbytes):
        """``nbytes`` bytes at ``addr`` of every instance's memory: a uint8
        array of shape (n, nbytes) (zeros for an instance that trapped)."""
        return self._b.read_memory(int(addr), int(nbytes))

    def write_memory(self, addr, array):
        """Writes row i of ``array`` (its bytes, in the machine's order) at
        ``addr`` in instance i's memory; ``array`` has n rows (shape (n,) or
        (n, ...), any dtype). Returns the bytes written."""
        a = np.ascontiguousarray(array)
        if a.ndim == 0 or a.shape[0] != self.n:
            raise ValueError(f"write_memory needs one row per instance ({self.n}), given shape {a.shape}")
        rows = a.reshape(self.n, -1).view(np.uint8)
        return self._b.write_memory(int(addr), np.ascontiguousarray(rows).reshape(-1), int(rows.shape[1]))


def _check_traps(traps):
    if traps not in ("raise", "mask"):
        raise ValueError(f"traps must be 'raise' or 'mask', not {traps!r}")


def _rows(a):
    """The rows of an array argument (NumPy, or a CUDA array), else None."""
    if isinstance(a, np.ndarray):
        return len(a)
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["shape"][0]) if cai["shape"] else None
    if hasattr(a, "__dlpack__") and hasattr(a, "__len__"):
        return len(a)
    return None


def _instances(n, args):
    """The instance count: ``n``, or the rows of the array arguments."""
    lengths = sorted({r for r in map(_rows, args) if r is not None})
    if len(lengths) > 1:
        raise ValueError(f"array arguments differ in length: {lengths}")
    if n is None:
        if not lengths:
            raise ValueError("give n= (the number of instances) when no argument is an array")
        return lengths[0]
    if lengths and lengths[0] != n:
        raise ValueError(f"n={n}, but the array arguments have {lengths[0]} rows")
    return int(n)
