from typing import Any, NamedTuple, Sequence, Tuple, Union
import os
import numpy as np

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
    messages: list[str]
    results: Union[None, np.ndarray, Tuple[np.ndarray, ...]]

class Module:
    def __init__(self, source: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> None: ...
    @property
    def exports(self) -> list[Export]: ...
    def run(self, export: str, *args: Any, n: int | None = ..., backend: str = ..., tier: str = ...,
            threads: int = ..., fuel: int = ..., timeout: float = ..., traps: str = ...) -> Any: ...
    def chain(self, calls: Sequence[Union["Call", str]], n: int | None = ..., backend: str = ...,
              tier: str = ..., threads: int = ..., fuel: int = ..., timeout: float = ..., traps: str = ...,
              launch_per_call: bool = ...) -> Any: ...
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
    def call(self, export: str, *args: Any, fuel: int = ..., timeout: float = ..., traps: str = ...) -> Any: ...
    def chain(self, calls: Sequence[Union[Call, str]], fuel: int = ..., timeout: float = ..., traps: str = ...,
              launch_per_call: bool = ...) -> Any: ...
    def read_memory(self, addr: int, nbytes: int) -> np.ndarray: ...
    def write_memory(self, addr: int, array: np.ndarray) -> int: ...
