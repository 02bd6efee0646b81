"""Handoff between libraries: ``ua.to``, ``ua.from_dlpack``, ``ua.stats``.

Data moves through DLPack (or ``__cuda_array_interface__`` where that is the
faster correct path). A copy happens only where the consumer cannot alias the
producer's memory or the caller asked for another device; it is counted in
:func:`stats`, and ``copy=False`` turns it into a :class:`HandoffError`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from unarray._errors import ArgumentError, UnarrayError
from unarray._lookup import backend_named, one
from unarray._typing import Array, DeviceLike
from unarray.interop import _cache, _compile_watch, _dask, _moves
from unarray.interop._common import STATS, OtherDevice, lock
from unarray.interop._paths import compact_copy
from unarray.interop._refusals import check_source
from unarray.interop._routes import (
    BY_NAMES,
    REFUSALS,
    convert,
    copy_then_convert,
    count_copy,
    elsewhere,
    route,
    speedups,
    traced_error,
    why,
    with_op,
)

__all__ = ["stats", "to"]

_DST: dict[str, Any] = {}
# (source type, target name) -> the route's handoff function (_routes.fast): after the first handoff of
# a pair, a call with neither device nor copy given is a dict lookup and that one function.
_FAST: dict[tuple[type, str], Callable[[Any, str], Any]] = {}


def stats(reset: bool = False) -> dict[str, int]:
    """Counters of handoffs, zero-copy handoffs, copies, bytes copied, synchronizations, cache hits and
    computes (dask arrays computed by a handoff: each is also a copy).

    Parameters
    ----------
    reset : bool
        Set every counter back to zero after reading it. Default ``False``.

    Returns
    -------
    out : dict of str to int
        ``handoffs`` (``zero_copy + copies``), ``zero_copy``, ``copies``, ``bytes_copied``, ``syncs``,
        ``cache_hits`` and ``computes``, counted since the start or the last reset, over every thread.

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> sorted(ua.stats())
    ['bytes_copied', 'cache_hits', 'computes', 'copies', 'handoffs', 'syncs', 'zero_copy']
    >>> _ = ua.stats(reset=True)
    >>> _ = ua.to(np.ones(3), "numpy")
    >>> ua.stats()["copies"]
    0
    """
    with lock:
        out = dict(STATS)
        for r in BY_NAMES.values():
            made, hits = r.counts
            if speedups is not None:  # what the C route counted
                c_made, c_hits = r.fast.counters(reset)
                made, hits = made + c_made, hits + c_hits
            out["zero_copy"] += made + hits
            out["cache_hits"] += hits
            if reset:
                r.counts[0] = r.counts[1] = 0
        out["handoffs"] = out["zero_copy"] + out["copies"]
        if reset:
            for k in STATS:
                STATS[k] = 0
    return out


def to(x: Array, backend: Any, *, device: DeviceLike | None = None, copy: bool | None = None,
       chunks: Any = None, _op: str = "to") -> Array:
    """Hand ``x`` to another library (and, on request, another device).

    The fastest measured path per pair of libraries is used (DLPack,
    ``__cuda_array_interface__`` or the library's own entry point; see
    ``unarray/interop/_paths.py``). An array handed over a second time gets a weak
    cache entry, so later handoffs of it, unchanged, cost about a microsecond
    (re-validated by pointer, shape, strides and dtype); a one-off handoff pays
    no cache store. On CUDA the consumer's stream waits for the producer's
    pending work without a device-wide synchronize. Inside ``torch.compile``
    the handoff runs eagerly on the real tensor (a graph break).

    Parameters
    ----------
    x : array
        an array of any supported library.
    backend : str or module
        the target library (``"torch"``, ``"jax"``, a module...).
    device : device, optional
        the target device; by default ``x``'s own. A different device
        means one copy.
    copy : bool, optional
        ``None`` copies only when it must (a layout or alignment the
        target cannot alias, a device change), ``True`` always copies,
        ``False`` never copies and raises :class:`HandoffError` where a
        copy would be needed.
    chunks : optional
        for ``backend="dask"`` only: the dask chunks (``"auto"`` by
        default; a dask array is rechunked lazily). Handing a dask array to
        another library computes it (with the caller's dask scheduler),
        counted in ``stats()["computes"]`` and refused under ``copy=False``.

    Returns
    -------
    out : array
        An array of the target library that shares ``x``'s memory where possible.

    Raises
    ------
    TracerHandoffError
        ``x`` is a traced value (inside ``jax.jit``, ``tf.function``).
    HandoffError
        ``copy=False`` but the target cannot alias ``x``; a torch tensor that
        requires grad (pass ``x.detach()``) or has a sparse layout.
    DTypeError
        a dtype the target has no counterpart for (object, structured, quantized...).
    ArgumentTypeError
        a NumPy masked array (pass ``x.filled(...)`` or ``x.data``).
    DeviceNotAvailableError
        ``device`` names a device the target cannot reach here.
    ArgumentError
        ``copy`` is not True, False or None; ``device`` cannot be read.

    Notes
    -----
    A target without read-only arrays (torch, CuPy, Numba) gets a copy (counted; refused
    under ``copy=False``) of memory its owner made read-only or immutable: a read-only NumPy array,
    a JAX array, a TensorFlow tensor. Writing through an alias would crash or change the owner's
    data. An immutable source's NumPy view (TensorFlow, JAX) is a read-only alias.

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> x = np.arange(3.0)
    >>> y = ua.to(x, "numpy", copy=False)
    >>> y is x
    True
    """
    if device is None and copy is None and chunks is None:
        try:
            f = _FAST.get((type(x), backend))
        except TypeError:  # an unhashable backend: _to names the error
            f = None
        if f is not None:
            return f(x, _op)
    return _to(x, backend, device, copy, _op, chunks)


# Their public home, where help(), doctest and the docs find them (this module is how they are built).
stats.__module__ = to.__module__ = "unarray.interop"


def _to(x: Any, backend: Any, device: Any, copy: bool | None, op: str, chunks: Any = None) -> Any:
    if copy is not None and copy is not True and copy is not False:
        copy = _as_copy(copy, backend, op)
    src = one(x, op)
    dst = _DST.get(backend) if isinstance(backend, str) else None
    if dst is None:
        dst = backend_named(backend, op)
        if isinstance(backend, str):
            _DST[backend] = dst
    s, d = src.name, dst.name
    if src.lazy or dst.lazy or chunks is not None:  # dask: wrapped lazily, or computed (counted); no route
        return _dask.to(x, src, dst, device, copy, chunks, op, to)
    if src is dst and device is None and copy is not True:
        if src.compiling is None or not src.compiling():  # Note: a torch.compile trace cannot take a lock
            with lock:
                STATS["zero_copy"] += 1
        if copy is None and type(backend) is str:
            _FAST[(type(x), backend)] = _same
        return x
    if src.compiling is not None and src.compiling():
        # A torch.compile trace: the handoff runs eagerly on the real tensor (a graph break, as for
        # any call the tracer cannot follow; under fullgraph=True, torch names the break).
        return src.outside_trace(_to, x, backend, device, copy, op)
    if src.is_tracer(x):
        raise traced_error(s, d, op)
    check_source(s, x, d, op)
    if device is not None:
        here = src.placement_of(x)  # a sharded JAX array: its mesh and spec (ShardedDevice)
        want = _moves.as_device(device, dst, op)
        if want != here:
            _moves.reachable(dst, want, op)
            return _moves.move(x, src, dst, here, want, copy, op, to)
    if src is dst:
        return count_copy(s, x, compact_copy(s, x))
    r = route(src, d, _to)
    if copy is None and type(backend) is str:
        _FAST[(type(x), backend)] = r.fast
    if copy is True:
        return copy_then_convert(x, s, d, op)
    if r.cached:
        out = _cache.hit(x, r)
        if out is not None:
            r.counts[1] += 1
            return out
    return convert(x, r, copy, op, r.cached and (id(x) in _cache.CACHE or _cache.admit(id(x))))


def _as_copy(copy: Any, backend: Any, op: str) -> bool:
    # A NumPy bool is a bool; anything else ("yes", 1) is refused rather than read as truthy.
    np = sys.modules.get("numpy")
    if np is not None and isinstance(copy, np.bool_):
        return bool(copy)
    name = backend if isinstance(backend, str) else getattr(backend, "__name__", None)
    raise ArgumentError(f"copy must be True, False or None, got {copy!r}; pass copy=True to always copy, "
                        "copy=False to never copy, or leave it out (copy only where needed)", op=op, backend=name)


def copy_reason(x: Any, backend: str, op: str) -> str | None:
    """Why handing ``x`` to ``backend`` where it lives would make one copy, or None where it is zero-copy.

    What ua.explain reports for a mixed call: the converter runs as the call's handoff would (a
    zero-copy view is made and dropped, nothing is counted or stored) and a refused layout,
    alignment or dtype is the reason; errors the call would raise are raised.
    """
    src, dst = one(x, op), backend_named(backend, op)
    if src is dst:
        return None
    if src.lazy or dst.lazy:
        return _dask.copy_reason(x, src, dst, op)
    if src.is_tracer(x):
        raise traced_error(src.name, dst.name, op)
    check_source(src.name, x, dst.name, op)
    r = route(src, dst.name, _to)
    if r.cached and _cache.hit(x, r) is not None:
        return None
    try:
        r.conv(x)
    except UnarrayError as e:
        raise with_op(e, op) from None
    except REFUSALS as e:
        if isinstance(e, OtherDevice):
            raise elsewhere(r.src, r.dst, e, op) from None
        return why(e)
    return None


def _same(x: Any, op: str) -> Any:
    # A handoff to x's own library: x itself.
    STATS["zero_copy"] += 1
    return x


def _traced_to(x: Array, backend: Any, *, device: DeviceLike | None = None, copy: bool | None = None,
               chunks: Any = None, _op: str = "to") -> Array:
    # What torch.compile traces in place of the C ua.to (torch.compiler.substitute_in_graph, registered
    # by the torch backend): the Python path, which runs the handoff eagerly (a graph break).
    return _to(x, backend, device, copy, _op, chunks)


if speedups is not None:
    # ua.to becomes the C function; the Python one above stays its documentation and its slow path.
    to = speedups.install(to, _FAST, _cache.CACHE, REFUSALS)

    # Note: torch.compile learns ua.to's traceable polyfill when it imports torch._dynamo (not before:
    # importing it here would cost about 2 s), so a compiled function may call ua.to in a cold process.
    _compile_watch.install(to, _traced_to)
