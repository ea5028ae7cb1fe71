from typing import Any, Literal, NamedTuple, Sequence, Tuple, Union
import os
import numpy as np

__version__: str

class Export(NamedTuple):
    name: str
    kind: str
    params: Sequence[str]
    results: Sequence[str]

INDEX: Any

def trap_message(code: int) -> str: ...

class Trap(Exception):
    mask: np.ndarray
    instances: np.ndarray
    codes: np.ndarray
    # "integer divide by zero", ...; an unknown import's trap names it:
    # "unknown import called: env.foo".
    messages: list[str]
    results: Union[None, np.ndarray, Tuple[np.ndarray, ...]]

class Module:
    def __init__(self, source: Union[str, os.PathLike, bytes, bytearray, memoryview],
                 imports: dict[str, dict[str, Any]] | None = ...,
                 unknown_imports: Literal["trap", "default"] | None = ...) -> None:
        """Loads a module. ``imports`` serves function imports with Python
        callables. ``unknown_imports`` stands in for function imports that
        nothing provides, otherwise an error: "trap" (a call traps its
        instance with "unknown import called: MODULE.NAME") or "default" (a
        call returns zeros of its result types). Memories, tables and
        globals that nothing provides stay an error."""
    @property
    def exports(self) -> list[Export]: ...
    def run(self, export: str, *args: Any, n: int | None = ..., backend: str = ..., tier: str = ...,
            threads: int = ..., fuel: int = ..., timeout: float = ..., traps: str = ..., device: bool = ...,
            gpus: Union[str, int, Sequence[int]] = ..., gpu_workers: int = ...) -> Any: ...
    def chain(self, calls: Sequence[Union["Call", str]], n: int | None = ..., backend: str = ...,
              tier: str = ..., threads: int = ..., fuel: int = ..., timeout: float = ..., traps: str = ...,
              launch_per_call: bool = ..., device: bool = ..., gpus: Union[str, int, Sequence[int]] = ...,
              gpu_workers: int = ...) -> Any: ...
    def instances(self, n: int, backend: str = ..., tier: str = ..., threads: int = ...) -> "Instances": ...

class Call:
    export: str
    args: Tuple[Any, ...]
    repeat: int
    def __init__(self, export: str, *args: Any, repeat: int = ...) -> None: ...

class Instances:
    @property
    def n(self) -> int: ...
    @property
    def backend(self) -> str: ...
    def call(self, export: str, *args: Any, fuel: int = ..., timeout: float = ..., traps: str = ...,
             device: bool = ...) -> Any: ...
    def chain(self, calls: Sequence[Union[Call, str]], fuel: int = ..., timeout: float = ..., traps: str = ...,
              launch_per_call: bool = ..., device: bool = ...) -> Any: ...
    def read_memory(self, addr: int, nbytes: int) -> np.ndarray: ...
    def write_memory(self, addr: int, array: np.ndarray) -> int: ...

class CudaArray:
    """A result column in GPU memory (device=True)."""
    @property
    def shape(self) -> Tuple[int]: ...
    @property
    def dtype(self) -> np.dtype: ...
    @property
    def __cuda_array_interface__(self) -> dict: ...
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    def __len__(self) -> int: ...
