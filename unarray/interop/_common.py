"""What every handoff module shares: the counters and their lock, the refusals a converter raises
(NeedsCopy and its kinds), module lookup through sys.modules, NumPy imported on first use, and the
device and stream lookups of the CPU and CUDA paths."""

from __future__ import annotations

import importlib
import sys
import threading
from typing import TYPE_CHECKING, Any


class LazyNumpy:
    """A module's ``np`` until its first use, which puts NumPy itself in its place.

    Note: importing unarray imports no array library, NumPy included; the first handoff does."""

    def __init__(self, namespace: dict[str, Any]):
        self._namespace = namespace

    def __getattr__(self, name: str) -> Any:
        import numpy

        self._namespace["np"] = numpy
        return getattr(numpy, name)


if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyNumpy(globals())

STATS = {"handoffs": 0, "zero_copy": 0, "copies": 0, "bytes_copied": 0, "syncs": 0, "cache_hits": 0,
         "computes": 0}
lock = threading.Lock()


class NeedsCopy(Exception):
    """The target cannot alias this source (layout, alignment, read-only, dtype)."""


class Immutable(NeedsCopy):
    """The source is immutable (a JAX array, a TensorFlow tensor) and the target has no read-only
    arrays (torch, CuPy, Numba): its alias, made and held in ``alias``, would let a write change the
    source. The handoff copies it on the target's side (one counted copy), or refuses under copy=False."""

    def __init__(self, reason: str, alias: Any):
        super().__init__(reason)
        self.alias = alias


class Snapshot(NeedsCopy):
    """The source's value changes in place (a tf.Variable): what is handed over, made and held in
    ``value``, is its current value, which a later ``assign`` does not reach (TensorFlow copies the
    buffer on that write). A snapshot is a copy: counted, or refused under copy=False."""

    def __init__(self, reason: str, value: Any):
        super().__init__(reason)
        self.value = value


class Gather(NeedsCopy):
    """The source is one array spread over several devices (a sharded JAX array): another library
    gets it gathered into one buffer, a copy (counted, or refused under copy=False)."""


class OtherDevice(NeedsCopy):
    """The target cannot hold arrays on the source's device: a move the caller asks for (device=)."""


def mod(name: str) -> Any:
    m = sys.modules.get(name)
    return m if m is not None else importlib.import_module(name)


# -- device lookups (CPU and CUDA paths) ----------------------------------------------------

_JAX_DL_DEVICE: dict[Any, Any] = {}


def jax_dlpack_device(x: Any) -> tuple[int, int]:
    # x.__dlpack_device__() is slow: read once per JAX device and memory kind (an array in pinned host
    # memory exports as host memory). A single-device sharding names its device, cheaper than x.device.
    s = x.sharding
    try:
        key = (s._device, s.memory_kind)
    except AttributeError:
        key = (x.device, s.memory_kind)
    out = _JAX_DL_DEVICE.get(key)
    if out is None:
        out = _JAX_DL_DEVICE[key] = tuple(x.__dlpack_device__())
    return out


_TORCH_RAW_STREAM: list[Any] = []


def torch_raw_stream(index: int) -> int:
    # torch's current CUDA stream as a handle: torch._C._cuda_getCurrentRawStream (what compiled
    # kernels launch on) builds no Stream object, unlike torch.cuda.current_stream().
    if not _TORCH_RAW_STREAM:
        torch = mod("torch")
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _TORCH_RAW_STREAM.append(raw or (lambda i: torch.cuda.current_stream(i).cuda_stream))
    return int(_TORCH_RAW_STREAM[0](index))
