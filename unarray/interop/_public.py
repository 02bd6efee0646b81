"""``ua.to`` and ``ua.stats`` (how data moves, and when it is copied: the package's docstring)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

from unarray._backends import handoff
from unarray._backends._handoff import HOST, STATS, OtherDevice, lock
from unarray._devices import Device, parse_device
from unarray._errors import ArgumentError, DeviceNotAvailableError, HandoffError, UnarrayError
from unarray._explanation import Explanation
from unarray._lookup import backend_named, one
from unarray._names import refuse as _refuse
from unarray._typing import Array, DeviceLike, Refused
from unarray.interop import _cache, _compile_watch, _dask, _promise
from unarray.interop._routes import (
    BY_NAMES,
    REFUSALS,
    check_source,
    convert,
    copy_then_convert,
    count_copy,
    elsewhere,
    pair,
    route,
    speedups,
    traced_error,
    why,
    with_op,
)

__all__ = ["stats", "to"]

_DST: dict[str, Any] = {}
# (source type, target name[, True for readonly=True]) -> the route's handoff function (_routes.fast): after the
# first handoff of a pair, a call with neither device nor copy given is a dict lookup and that one function.
_FAST: dict[tuple[Any, ...], Callable[[Any, str], Any]] = {}


def _drop_promised() -> None:
    # The read-only check switched on or off: promise routes register anew (checked or not).
    for k in [k for k in _FAST if len(k) == 3]:
        _FAST.pop(k, None)


_promise.ON_SWITCH.append(_drop_promised)


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
       chunks: Any = None, readonly: bool = False, _op: str = "to", **refused: Refused) -> Array:
    """Hand ``x`` to another library (and, on request, another device).

    The fastest path found for each pair of libraries is used (DLPack,
    ``__cuda_array_interface__`` or the library's own entry point; see
    each library's ``unarray/_backends/<lib>/handoff.py``). An array handed over a second time gets a weak
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
    readonly : bool
        ``True`` is the caller's promise that nothing writes through the result (for code that
        only reads). Where the target has no read-only arrays (torch, CuPy, Numba) and ``x``'s
        memory is immutable or read-only (a JAX array, a TensorFlow tensor, a read-only NumPy
        array), the result is then the zero-copy alias instead of a copy, and repeated handoffs
        are served from the cache. A write through it changes ``x`` (a JAX array, a cached
        TensorFlow constant) or crashes (a read-only memory map): ``ua.checking_readonly()``
        or ``UNARRAY_CHECK_READONLY=1`` checks the promise. Elsewhere it changes nothing.
        Default ``False``.

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
    ReadOnlyViolationError
        with the read-only check on, an earlier ``readonly=True`` handoff of ``x`` was written to.
    ArgumentError
        ``copy`` is not True, False or None; ``readonly`` is not a bool; ``device`` cannot be read.

    Notes
    -----
    A target without read-only arrays (torch, CuPy, Numba) gets a copy (counted; refused
    under ``copy=False``) of memory its owner made read-only or immutable: a read-only NumPy array,
    a JAX array, a TensorFlow tensor, unless the caller promises ``readonly=True``. Writing through
    an alias would crash or change the owner's data. An immutable source's NumPy view (TensorFlow,
    JAX) is a read-only alias.

    A ``tf.Variable`` hands over its current value, which a later ``assign`` does not reach: one
    copy (counted; refused under ``copy=False``). A JAX array sharded over several devices is
    gathered into one buffer for another library: one copy (counted; refused under ``copy=False``);
    a replicated one hands over one device's copy, zero-copy. A torch tensor that requires grad is
    refused while grad mode is on, and handed over detached under ``torch.no_grad()`` or
    ``torch.inference_mode()``, from the cache or not.

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> x = np.arange(3.0)
    >>> y = ua.to(x, "numpy", copy=False)
    >>> y is x
    True
    """
    if refused:  # torch's t.to(dtype=..., non_blocking=...); the C ua.to's fallback for a keyword it lacks
        _refuse(to, refused, x)
    if device is None and copy is None and chunks is None and (readonly is False or readonly is True):
        try:
            f = _FAST.get((type(x), backend) if readonly is False else (type(x), backend, True))
        except TypeError:  # an unhashable backend: _to names the error
            f = None
        if f is not None:
            return f(x, _op)
    return _to(x, backend, device, copy, _op, chunks, readonly)


# Their public home, where help(), doctest and the docs find them (this module is how they are built).
stats.__module__ = to.__module__ = "unarray.interop"


def _to(x: Any, backend: Any, device: Any, copy: bool | None, op: str, chunks: Any = None,
        readonly: bool = False) -> Any:
    if copy is not None and copy is not True and copy is not False:
        copy = _as_bool(copy, backend, op, "copy")
    if readonly is not False and readonly is not True:
        readonly = _as_bool(readonly, backend, op, "readonly")
    src = one(x, op)
    if src.compiling is not None and type(backend) is str and backend != src.name and src.compiling():
        # A torch.compile trace handing over to another library: out of the trace before the target is looked up,
        # whose first lookup imports it (an import the trace refuses with the tracer's words, not unarray's).
        return src.outside_trace(_to, x, backend, device, copy, op)
    dst = _DST.get(backend) if isinstance(backend, str) else None
    if dst is None:
        dst = backend_named(backend, op)
        if isinstance(backend, str):
            _DST[backend] = dst
    s, d = src.name, dst.name
    if src.lazy or dst.lazy or chunks is not None:  # dask: wrapped lazily, or computed (counted); no route
        out, on = _dask.to(x, src, dst, device, copy, chunks, op)
        if on is not None:  # an eager leg: to the library of the lazy array's chunks (then wrapped), or computed, on
            out = _to(out, on, device, copy if dst.lazy else None, op)
            return dst.wrap(out, chunks) if dst.lazy else out
        return out
    if src is dst and device is None and copy is not True:
        if src.compiling is None or not src.compiling():  # Note: a torch.compile trace cannot take a lock
            with lock:
                STATS["zero_copy"] += 1
        if copy is None and type(backend) is str:
            _FAST[(type(x), backend, True) if readonly else (type(x), backend)] = _same
        return x
    if src.compiling is not None and src.compiling():
        # A torch.compile trace: the handoff runs eagerly on the real tensor (a graph break, as for
        # any call the tracer cannot follow; under fullgraph=True, torch names the break).
        return src.outside_trace(_to, x, backend, device, copy, op)
    if src.is_tracer(x):
        raise traced_error(s, d, op)
    check_source(handoff(s), x, d, op)
    if device is not None:
        here = src.placement_of(x)  # a sharded JAX array: its mesh and spec (ShardedDevice)
        want = _as_device(device, dst, op)
        if want != here:
            _reachable(dst, want, op)
            return _move(x, src, dst, here, want, copy, op)
    if src is dst:  # a copy within the library (one made through another library comes back)
        h = handoff(s)
        mid, kind = h.compact_copy(x, src), h.copies_into or s
        return count_copy(h, x, mid if kind == s else pair(kind, s).convert(mid))
    r = route(src, d, readonly)
    promise = r.promise
    if copy is None and type(backend) is str:
        f = _checked(r.fast, s, d) if promise and _promise.CHECKING[0] else r.fast
        _FAST[(type(x), backend, True) if readonly else (type(x), backend)] = f
    if copy is True:
        return copy_then_convert(x, r, op)
    out = _handoff(x, r, copy, op)
    if promise and _promise.CHECKING[0]:
        _promise.record(x, s, d, op)
    return out


def _move(x: Any, src: Any, dst: Any, here: Any, want: Any, copy: bool | None, op: str) -> Any:
    # A device change is always one copy (counted); copy=False refuses it.
    if copy is False:
        raise HandoffError(f"moving from {here} to {want} needs a copy, but copy=False; pass copy=None",
                           op=op, backend=dst.name)
    target = handoff(dst.name)
    if want.kind == "cpu" and target.lands_on_host:
        if hasattr(type(src), "to_numpy"):
            y = src.to_numpy(x)
        else:  # Note: first to the host within the source's library, then its usual handoff to the host library
            y = _to(handoff(src.name).move_within(x, src.native_device(want), src), HOST, None, None, op)
        out = target.adopt_host(y)
    elif target.uploads and here.kind == "cpu":
        out = target.upload(x if src.name == HOST else _to(x, HOST, None, None, op), want.index)
    else:
        mid = x if src is dst else _to(x, dst.name, None, None, op)
        out = target.move_within(mid, dst.native_device(want), dst)
    return count_copy(handoff(src.name), x, out)


# -- device changes (device=): the target device read and checked; nothing moves between devices unless asked
def _as_device(device: Any, dst: Any, op: str) -> Any:
    if isinstance(device, Device):
        return device
    try:
        d = parse_device(device)
    except UnarrayError as e:
        raise with_op(e, op) from None
    if d is None:
        # A native device object (torch.device, jax.Device): ask the library that owns it.
        try:
            probe = dst.asarray([0], device=device)
            return one(probe, op).placement_of(probe)
        except Exception as e:
            raise DeviceNotAvailableError(f"device {device!r} is not available ({type(e).__name__}: {e}); "
                                          f"available: {_listed(dst)}", op=op, backend=dst.name) from None
    return d


def _reachable(dst: Any, want: Any, op: str) -> None:
    # Note: a library may place an array elsewhere silently or fail deep inside: a device is reachable where the
    # library lists it, or where a one-element array made there lands there.
    try:
        if want in dst.devices():
            return
        if getattr(want, "mesh", None):  # a ShardedDevice: reachable where its mesh can be rebuilt
            dst.native_device(want)
            return
        probe = dst.asarray([0], device=dst.native_device(want))
        if dst.device_of(probe) == want:
            return
    except Exception:  # the library cannot make an array there: not reachable
        pass
    raise DeviceNotAvailableError(f"device {want} is not available to {dst.name} here; available: {_listed(dst)} "
                                  "(pass one of those, or install a build of the library for that device)",
                                  op=op, backend=dst.name)


def _listed(dst: Any) -> str:
    try:
        return ", ".join(str(d) for d in dst.devices()) or "none"
    except Exception as e:
        return f"unknown ({type(e).__name__})"


def _handoff(x: Any, r: Any, copy: bool | None, op: str) -> Any:
    if r.cached:
        out = _cache.hit(x, r)
        if out is not None:
            r.counts[1] += 1
            return out
    return convert(x, r, copy, op, r.cached and (id(x) in _cache.CACHE or _cache.admit(id(x))))


def _checked(fast: Callable[[Any, str], Any], s: str, d: str) -> Callable[[Any, str], Any]:
    # A promise route while the read-only check is on: the last promise verified, this one recorded.
    def checked(x: Any, op: str) -> Any:
        out = fast(x, op)
        _promise.record(x, s, d, op)
        return out

    return checked


_FLAGS = {
    "copy": "copy must be True, False or None, got {!r}; pass copy=True to always copy, copy=False to never copy, "
            "or leave it out (copy only where needed)",
    "readonly": "readonly must be True or False, got {!r}; pass readonly=True to promise that nothing writes "
                "through the result, or leave it out",
}


def _as_bool(value: Any, backend: Any, op: str, flag: str) -> bool:
    # A NumPy bool is a bool; anything else ("yes", 1) is refused rather than read as truthy.
    np = sys.modules.get(HOST)
    if np is not None and isinstance(value, np.bool_):
        return bool(value)
    name = backend if isinstance(backend, str) else getattr(backend, "__name__", None)
    raise ArgumentError(_FLAGS[flag].format(value), op=op, backend=name)


def copy_reason(x: Any, backend: str, op: str) -> str | None:
    """Why handing ``x`` to ``backend`` where it lives would make one copy, or None where it is zero-copy.

    What ua.explain reports for a mixed call: the converter runs as the call's handoff would (a
    zero-copy view is made and dropped, nothing is counted or stored) and a refused layout,
    alignment or dtype is the reason; errors the call would raise are raised.
    """
    src, dst = one(x, op), backend_named(backend, op)
    if src is dst:
        return None
    if src.lazy or dst.lazy:  # wrapping an eager array copies nothing; computing a dask array to join is refused
        if src.lazy and not dst.lazy:
            raise _dask.never_joined(src, dst, op)
        return None
    if src.is_tracer(x):
        raise traced_error(src.name, dst.name, op)
    r = route(src, dst.name)
    check_source(r.s, x, dst.name, op)
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


def explain_to(x: Any, backend: Any, *, device: Any = None, copy: bool | None = None, chunks: Any = None,
               readonly: bool = False) -> Explanation:
    """What ``ua.to(x, backend, ...)`` would do (ua.explain("to", ...)): the path, and whether it copies and
    why; with ``readonly=True`` where it changes the handoff, the promise it rests on. Nothing is counted
    or stored: the converter runs as the handoff would, and its view is dropped."""
    op = "to"
    if readonly is not False and readonly is not True:
        readonly = _as_bool(readonly, backend, op, "readonly")
    src, dst = one(x, op), backend_named(backend, op)
    s, d = src.name, dst.name
    here = src.placement_of(x)
    if device is not None and not (src.lazy or dst.lazy):
        want = _as_device(device, dst, op)
        if want != here:
            _reachable(dst, want, op)
            if copy is False:
                raise ArgumentError(f"moving from {here} to {want} needs a copy, but copy=False", op=op, backend=d)
            return Explanation(op, d, want, "device move", None, (f"{s} -> {d}: one copy (a move from {here} to "
                                                                   f"{want})",), 1)
    if src is dst:
        copied = copy is True
        line = f"{s} -> {d}: one copy (copy=True)" if copied else f"{s} -> {d}: the array itself"
        return Explanation(op, d, here, "same library", None, (line,), int(copied))
    lazy = dst.name if dst.lazy else s
    kernel = route(src, d, readonly).name() if not (src.lazy or dst.lazy) else f"{lazy} (wrap, or compute)"
    if copy is True:
        return Explanation(op, d, here, kernel, None, (f"{s} -> {d}: one copy (copy=True)",), 1)
    if readonly and route(src, d).promises:
        line = (f"{s} -> {d} via {kernel}: zero-copy alias on the caller's readonly=True promise (nothing may "
                "write through it; ua.checking_readonly() or UNARRAY_CHECK_READONLY=1 checks it)")
        return Explanation(op, d, here, kernel, None, (line,), 0)
    why = copy_reason(x, d, op)
    if why is None:
        return Explanation(op, d, here, kernel, None, (f"{s} -> {d} via {kernel}: zero-copy",), 0)
    if copy is False:
        raise ArgumentError(f"{d} cannot alias this {s} array ({why}), so ua.to would refuse copy=False",
                            op=op, backend=d)
    hint = ""
    if route(src, d).promises:
        with contextlib.suppress(*REFUSALS):
            route(src, d, True).conv(x)  # whether the promise route's converter takes x (the view is dropped)
            hint = "; readonly=True would alias it"
    return Explanation(op, d, here, kernel, None, (f"{s} -> {d}: one copy ({why}){hint}",), 1)


def handoff_name(x: Any, lead: Any, op: str) -> str:
    """What a mixed call hands ``x`` to its leader ``lead`` with (ua.explain): the route's converter, or
    for a lazy leader its join."""
    src = one(x, op)
    if lead.lazy:
        return str(lead.handoff_path(src, x))
    return route(src, lead.name).name()  # the route the call takes, made as the call makes it


def _same(x: Any, op: str) -> Any:
    # A handoff to x's own library: x itself.
    STATS["zero_copy"] += 1
    return x


def _traced_to(x: Array, backend: Any, *, device: DeviceLike | None = None, copy: bool | None = None,
               chunks: Any = None, readonly: bool = False, _op: str = "to") -> Array:
    # What torch.compile traces in place of the C ua.to (torch.compiler.substitute_in_graph, registered
    # by the torch backend): the Python path, which runs the handoff eagerly (a graph break).
    return _to(x, backend, device, copy, _op, chunks, readonly)


if speedups is not None:
    # ua.to becomes the C function; the Python one above stays its documentation and its slow path.
    to = speedups.install(to, _FAST, _cache.CACHE, REFUSALS)

    # A tracer learns ua.to's traceable polyfill when it is imported (not here: it costs seconds).
    _compile_watch.install(to, _traced_to)
