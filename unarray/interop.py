"""Handoff between libraries: ``ua.to``, ``ua.from_dlpack``, ``ua.stats``.

Data moves through DLPack (or ``__cuda_array_interface__`` where that is the
faster correct path). A copy happens only where the consumer cannot alias the
producer's memory or the caller asked for another device; it is counted in
:func:`stats`, and ``copy=False`` turns it into a :class:`HandoffError`.
"""

from __future__ import annotations

import threading
from typing import Any

from unarray._dispatch import backend_named as _backend_named
from unarray._dispatch import one as _one
from unarray._errors import HandoffError, TracerHandoffError
from unarray._typing import Array, DeviceLike

__all__ = ["from_dlpack", "stats", "to"]

_lock = threading.Lock()
_STATS = {"handoffs": 0, "zero_copy": 0, "copies": 0, "bytes_copied": 0, "syncs": 0, "cache_hits": 0}


def count(key: str, n: int = 1) -> None:
    with _lock:
        _STATS[key] += n


def stats(reset: bool = False) -> dict[str, int]:
    """Counters of handoffs, zero-copy handoffs, copies, bytes copied, synchronizations and cache hits.

    Examples:
        >>> import unarray as ua
        >>> sorted(ua.stats())
        ['bytes_copied', 'cache_hits', 'copies', 'handoffs', 'syncs', 'zero_copy']
    """
    with _lock:
        out = dict(_STATS)
        if reset:
            for k in _STATS:
                _STATS[k] = 0
    return out


def to(x: Array, backend: Any, *, device: DeviceLike | None = None, copy: bool | None = None,
       _op: str = "to") -> Array:
    """Hand ``x`` to another library (and, on request, another device).

    Args:
        x: an array of any supported library.
        backend: the target library (``"torch"``, ``"jax"``, a module...).
        device: the target device; by default ``x``'s own.
        copy: ``None`` copies only when it must, ``True`` always copies,
            ``False`` never copies and raises :class:`HandoffError` where a
            copy would be needed.

    Returns:
        An array of the target library that shares ``x``'s memory where possible.

    Examples:
        >>> import numpy as np, unarray as ua
        >>> x = np.arange(3.0)
        >>> y = ua.to(x, "numpy", copy=False)
        >>> y is x
        True
    """
    src = _one(x, _op)
    dst = _backend_named(backend, _op)
    if src.is_tracer(x):
        raise TracerHandoffError(
            f"cannot hand a traced {src.name} value (inside jit/tf.function/compile) to {dst.name}; "
            "do the handoff outside the traced function",
            op=_op, backend=src.name,
        )
    count("handoffs")
    from unarray._devices import parse_device

    want = None if device is None else (parse_device(device) if isinstance(device, str) else device)
    here = src.device_of(x)
    if src is dst and (want is None or want == here):
        if copy:
            count("copies")
            return dst.asarray(x, copy=True)
        count("zero_copy")
        return x
    if want is not None and want != here:
        if copy is False:
            raise HandoffError(f"moving from {here} to {want} needs a copy, but copy=False", op=_op,
                               backend=dst.name)
        count("copies")
        moved = dst.from_dlpack(x, copy=True) if src is not dst else x
        return dst.to_device(moved, dst.native_device(want))
    try:
        out = dst.from_dlpack(x, copy=copy)
    except (BufferError, TypeError, ValueError, RuntimeError) as e:
        if copy is False:
            raise HandoffError(f"{dst.name} cannot alias this {src.name} array ({e}); pass copy=None to allow a copy",
                               op=_op, backend=dst.name) from e
        import numpy as np

        count("copies")
        return dst.asarray(np.asarray(src.to_numpy(x) if hasattr(src, "to_numpy") else x), copy=True)
    count("copies" if copy else "zero_copy")
    return out


def from_dlpack(x: Any, /, *, backend: Any = None, device: DeviceLike | None = None,
                copy: bool | None = None) -> Array:
    """An array of ``backend`` (the default backend if omitted) from any DLPack producer."""
    from unarray.creation import _creation_backend

    b, _ = _creation_backend("from_dlpack", backend, None)
    try:
        return to(x, b.name, device=device, copy=copy, _op="from_dlpack")
    except Exception:
        return b.from_dlpack(x, copy=copy)
