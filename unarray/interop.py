"""Handoff between libraries: ``ua.to``, ``ua.from_dlpack``, ``ua.stats``.

Data moves through DLPack (or ``__cuda_array_interface__`` where that is the
faster correct path). A copy happens only where the consumer cannot alias the
producer's memory or the caller asked for another device; it is counted in
:func:`stats`, and ``copy=False`` turns it into a :class:`HandoffError`.
"""

from __future__ import annotations

import sys
from typing import Any

from unarray import _handoff as _h
from unarray._dispatch import backend_named as _backend_named
from unarray._dispatch import one as _one
from unarray._errors import HandoffError, TracerHandoffError, UnarrayError
from unarray._typing import Array, DeviceLike

__all__ = ["from_dlpack", "stats", "to"]

_lock = _h.lock
_STATS = _h.STATS
_DST: dict[str, Any] = {}
# (source type, target name) -> converter, for pairs whose native conversion is cheaper than a
# cache lookup (_h.UNCACHED): filled after the first zero-copy success of that pair, so that a
# later call is one dict lookup plus the converter.
_FAST: dict[tuple[type, str], Any] = {}


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

    The fastest measured path per pair of libraries is used (DLPack,
    ``__cuda_array_interface__`` or the library's own entry point; see
    ``unarray/_handoff.py``). Handing the same unchanged array over again is
    served from a weak cache (about a microsecond), re-validated by pointer,
    shape, strides and dtype. On CUDA the consumer's stream waits for the
    producer's pending work without a device-wide synchronize.

    Args:
        x: an array of any supported library.
        backend: the target library (``"torch"``, ``"jax"``, a module...).
        device: the target device; by default ``x``'s own. A different device
            means one copy.
        copy: ``None`` copies only when it must (a layout or alignment the
            target cannot alias, a device change), ``True`` always copies,
            ``False`` never copies and raises :class:`HandoffError` where a
            copy would be needed.

    Returns:
        An array of the target library that shares ``x``'s memory where possible.

    Raises:
        TracerHandoffError: ``x`` is a traced value (inside ``jax.jit``, ``tf.function``).
        HandoffError: ``copy=False`` but the target cannot alias ``x``.

    Examples:
        >>> import numpy as np, unarray as ua
        >>> x = np.arange(3.0)
        >>> y = ua.to(x, "numpy", copy=False)
        >>> y is x
        True
    """
    if device is None and copy is None:
        fast = _FAST.get((type(x), backend))  # type: ignore[arg-type]
        if fast is not None:
            try:
                out = fast(x)
            except Exception:  # noqa: S110 - the general path below handles and counts it
                pass
            else:
                # Note: lock-free on this path (the GIL keeps each += whole enough for a counter of
                # zero-copy handoffs); copies and bytes are always counted under the lock.
                _STATS["handoffs"] += 1
                _STATS["zero_copy"] += 1
                return out
    src = _one(x, _op)
    dst = _DST.get(backend) if isinstance(backend, str) else None
    if dst is None:
        dst = _backend_named(backend, _op)
        if isinstance(backend, str):
            _DST[backend] = dst
    s, d = src.name, dst.name
    stats_ = _h.STATS
    if device is None and copy is not True:
        if src is dst:
            with _lock:
                stats_["handoffs"] += 1
                stats_["zero_copy"] += 1
            return x
        out = _h.lookup(s, x, d, d)
        if out is not None:
            if s in _h.STREAM_SOURCES:
                order = _h.STREAM_ORDERED.get((s, d))
                if order is not None:
                    order(x, d)
            # Note: lock-free like the fast path (zero-copy counters only).
            stats_["handoffs"] += 1
            stats_["zero_copy"] += 1
            stats_["cache_hits"] += 1
            return out
    if src.is_tracer(x):
        raise TracerHandoffError(
            f"cannot hand a traced {s} value (inside jit/tf.function/compile) to {d}; "
            "do the handoff outside the traced function, or compute with the traced library's own ops",
            op=_op, backend=s,
        )
    if device is not None:
        here = src.device_of(x)
        want = _as_device(device, dst, _op)
        if want != here:
            return _move(x, src, dst, here, want, copy, _op)
    if src is dst:
        return _count_copy(s, x, _h.compact_copy(s, x))
    return _handoff(x, s, d, copy, _op)


def _handoff(x: Any, s: str, d: str, copy: bool | None, op: str) -> Any:
    if copy is None and (s, d) in _h.UNCACHED:
        try:
            out = _convert(s, d, x, op)
        except _h.NeedsCopy:
            pass
        else:
            _count_zero_copy()
            _FAST[(type(x), d)] = _h.path(s, d)
            return out
    if copy:
        return _copy_then_convert(x, s, d, op)
    before = sys.getrefcount(x)
    try:
        out = _convert(s, d, x, op)
        copied = d in _h.MAY_COPY and _copied(s, x, d, out) and _h.nbytes(s, x) > 0
    except _h.NeedsCopy as e:
        if copy is False:
            raise HandoffError(f"{d} cannot alias this {s} array ({e}), so a copy is needed but copy=False; "
                               "pass copy=None to allow one copy", op=op, backend=d) from None
        return _copy_then_convert(x, s, d, op)
    if copied:
        if copy is False:
            raise HandoffError(f"{d} copied this {s} array on import (alignment or layout it cannot alias), "
                               "but copy=False; pass copy=None to allow one copy", op=op, backend=d)
        return _count_copy(s, x, out)
    _count_zero_copy()
    _h.store(s, x, d, d, out, sys.getrefcount(x) - before)
    return out


def _copy_then_convert(x: Any, s: str, d: str, op: str) -> Any:
    # One compact (aligned) copy on the source side, then the zero-copy path from it.
    out = _convert(_h.kind_after_copy(s), d, _h.compact_copy(s, x), op)
    return _count_copy(s, x, out)


def _count_zero_copy() -> None:
    with _lock:
        _h.STATS["handoffs"] += 1
        _h.STATS["zero_copy"] += 1


def _convert(s: str, d: str, x: Any, op: str) -> Any:
    try:
        return _h.path(s, d)(x)
    except (_h.NeedsCopy, UnarrayError):
        raise
    except (BufferError, TypeError, ValueError, RuntimeError, NotImplementedError) as e:
        # A consumer refusing the layout/dtype is a copy case; anything else propagates.
        raise _h.NeedsCopy(f"{type(e).__name__}: {e}") from e


def _copied(s: str, x: Any, d: str, out: Any) -> bool:
    # Zero-copy proof: the target's buffer must start where the source's does.
    p_src, p_out = _h.data_ptr(s, x), _h.data_ptr(d, out)
    return p_src is not None and p_out is not None and p_src != p_out


def _count_copy(s: str, x: Any, out: Any) -> Any:
    with _lock:
        _h.STATS["handoffs"] += 1
        _h.STATS["copies"] += 1
        _h.STATS["bytes_copied"] += _h.nbytes(s, x)
    return out


def _as_device(device: Any, dst: Any, op: str) -> Any:
    from unarray._devices import Device, parse_device

    if isinstance(device, Device):
        return device
    d = parse_device(device)
    if d is None:
        # A native device object (torch.device, jax.Device): ask the library that owns it.
        try:
            return _one(dst.asarray([0], device=device), op).device_of(dst.asarray([0], device=device))
        except Exception as e:
            raise HandoffError(f"cannot read device {device!r}: {e}", op=op, backend=dst.name) from e
    return d


def _move(x: Any, src: Any, dst: Any, here: Any, want: Any, copy: bool | None, op: str) -> Any:
    # A device change is always one copy (counted); copy=False refuses it.
    if copy is False:
        raise HandoffError(f"moving from {here} to {want} needs a copy, but copy=False; pass copy=None",
                           op=op, backend=dst.name)
    n = _h.nbytes(src.name, x)
    if want.kind == "cpu" and dst.name in ("numpy", "tensorflow"):
        y = src.to_numpy(x) if hasattr(type(src), "to_numpy") else _h.compact_copy(src.name, x)
        out = y if dst.name == "numpy" else _h.to_tf(_h.aligned_copy(y) if not y.flags.c_contiguous else y)
    elif dst.name in ("cupy", "numba") and here.kind == "cpu":
        host = x if src.name == "numpy" else to(x, "numpy", _op=op)
        cp = _h.mod("cupy")
        with cp.cuda.Device(want.index):
            out = cp.asarray(host)
        out = out if dst.name == "cupy" else _h.mod("numba.cuda").as_cuda_array(out)
    else:
        mid = x if src is dst else to(x, dst.name, _op=op)
        out = _h.move_within(dst.name, mid, dst.native_device(want), dst)
    with _lock:
        _h.STATS["handoffs"] += 1
        _h.STATS["copies"] += 1
        _h.STATS["bytes_copied"] += n
    return out


def from_dlpack(x: Any, /, *, backend: Any = None, device: DeviceLike | None = None,
                copy: bool | None = None) -> Array:
    """An array of ``backend`` (the default backend if omitted) from any DLPack producer.

    Arrays of a supported library take the same path as :func:`to` (fastest
    pair path, cache, copy accounting); any other object with ``__dlpack__``
    goes to the backend's own ``from_dlpack``.

    Args:
        x: an array of a supported library, or any object with ``__dlpack__``
            and ``__dlpack_device__``.
        backend: the target library; the default backend (``ua.use``) if omitted.
        device: the target device; by default ``x``'s own.
        copy: as in :func:`to`.

    Returns:
        An array of ``backend``.

    Examples:
        >>> import numpy as np, unarray as ua
        >>> ua.from_dlpack(np.ones(2), backend="numpy").tolist()
        [1.0, 1.0]
    """
    from unarray._errors import UnknownArrayTypeError
    from unarray.creation import _creation_backend

    b, _ = _creation_backend("from_dlpack", backend, None)
    try:
        return to(x, b.name, device=device, copy=copy, _op="from_dlpack")
    except UnknownArrayTypeError:
        if not hasattr(x, "__dlpack__"):
            raise
    with _lock:
        _STATS["handoffs"] += 1
        _STATS["copies" if copy else "zero_copy"] += 1
    return b.from_dlpack(x, device=None if device is None else b.native_device(device), copy=copy)
