"""Which GPU a CuPy call runs on. CuPy allocates and launches on the current device, not the array's, so each op
of the backend (and the layout route's copy) enters its array's device where that is not the current one."""

from __future__ import annotations

import contextlib
from typing import Any

import cupy

from unarray._backends.hot_calls import Here

__all__ = ["HERE", "current_id", "elsewhere", "on_device_of"]

_STAY = contextlib.nullcontext()
# The same rule for the hot calls (hot_calls.Here, read by the Python path and the C fast path alike):
# x.<data>.<device_id> equals getDevice(), the memory pointer's device id read as elsewhere() reads it.
HERE = Here("data", "device_id", cupy.cuda.runtime.getDevice)


def current_id() -> int:
    return int(cupy.cuda.runtime.getDevice())


def elsewhere(x: Any) -> Any:
    """``x``'s device (a ``cupy.cuda.Device``) where ``x`` is a CuPy array off the current device, else None."""
    # (the memory pointer's device id: x.device builds a Device object per call)
    if isinstance(x, cupy.ndarray) and x.data.device_id != current_id():
        return x.device
    return None


def on_device_of(x: Any) -> Any:
    """A context that makes ``x``'s device current for the block when it is not already."""
    # Note: a plain object, not a generator context manager: this runs on every op.
    d = elsewhere(x)
    return _STAY if d is None else d
