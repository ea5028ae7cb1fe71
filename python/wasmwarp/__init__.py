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

__all__ = ["Module", "Trap", "Export", "INDEX", "trap_message"]

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
    their messages; ``results``: what the call returned (zeros where an
    instance trapped); ``mask``: a boolean array, True where one trapped.
    """

    def __init__(self, results, codes_all):
        self.mask = codes_all != 0
        self.instances = np.flatnonzero(self.mask)
        self.codes = codes_all[self.instances]
        self.results = results
        self.messages = [trap_message(c) for c in self.codes]
        first = f"instance {self.instances[0]}: {self.messages[0]}" if len(self.instances) else ""
        super().__init__(f"{len(self.instances)} of {len(codes_all)} instance(s) trapped; {first}")


class Module:
    """A WebAssembly module (a .wasm path, or its bytes), loaded once."""

    def __init__(self, source):
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._m = _wasmwarp._Module.from_bytes(bytes(source))
        else:
            self._m = _wasmwarp._Module.load(str(source))
        self._exports = [Export(*e) for e in self._m.exports()]

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
            traps="raise"):
        """Calls ``export`` on ``n`` fresh instances, one per row of the
        array arguments (``n`` may be left out when one is an array).

        Returns one NumPy array (a row per instance), a tuple of them for
        several results, or None for none; with ``traps="mask"``, a pair
        (those results, a boolean trap mask). ``backend``: "auto", "cpu" or
        "gpu"; ``tier``: "auto", "interp" or "compiled"; ``fuel``: the most
        back-edges and calls an instance may take; ``timeout``: seconds.
        """
        if traps not in ("raise", "mask"):
            raise ValueError(f"traps must be 'raise' or 'mask', not {traps!r}")
        params = self._params(export)
        converted = []
        for k, a in enumerate(args):
            if a is INDEX:
                converted.append(None)
            elif isinstance(a, (list, tuple)) and params is not None and k < len(params) and params[k] in _DTYPES:
                converted.append(np.asarray(a, dtype=_DTYPES[params[k]]))
            else:
                converted.append(a)
        lengths = sorted({len(a) for a in converted if isinstance(a, np.ndarray)})
        if len(lengths) > 1:
            raise ValueError(f"array arguments differ in length: {lengths}")
        if n is None:
            if not lengths:
                raise ValueError("give n= (the number of instances) when no argument is an array")
            n = lengths[0]
        elif lengths and lengths[0] != n:
            raise ValueError(f"n={n}, but the array arguments have {lengths[0]} rows")
        cols, codes = self._m.call(export, converted, int(n), backend, tier, int(threads), int(fuel), float(timeout))
        results = None if not cols else cols[0] if len(cols) == 1 else tuple(cols)
        if traps == "mask":
            return results, codes != 0
        if codes.any():
            raise Trap(results, codes)
        return results
