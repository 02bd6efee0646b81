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

from unarray import _convert as _cv
from unarray import _convert_cuda as _cc
from unarray import _handoff as _h
from unarray import _native as _ext
from unarray._dispatch import backend_named as _backend_named
from unarray._dispatch import one as _one
from unarray._errors import ArgumentError, DeviceNotAvailableError, HandoffError, TracerHandoffError, UnarrayError
from unarray._refusals import check_source as _check_source
from unarray._typing import Array, DeviceLike

__all__ = ["from_dlpack", "stats", "to"]


# ua.to's hot path in C (unarray/_speedups.c); without it (or with UNARRAY_PURE_PYTHON=1) the same
# steps run in Python (_fast).
_speedups = _ext.load("_speedups")

_lock = _cv.lock
_STATS = _cv.STATS
_DST: dict[str, Any] = {}
# (source type, target name) -> the route's handoff function (_fast): after the first handoff of a
# pair, a call with neither device nor copy given is a dict lookup and that one function.
_FAST: dict[tuple[type, str], Callable[[Any, str], Any]] = {}
_BY_NAMES: dict[tuple[str, str], _h.Route] = {}
_refs = sys.getrefcount


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
    with _lock:
        out = dict(_STATS)
        for r in _BY_NAMES.values():
            made, hits = r.counts
            if _speedups is not None:  # what the C route counted
                c_made, c_hits = r.fast.counters(reset)
                made, hits = made + c_made, hits + c_hits
            out["zero_copy"] += made + hits
            out["cache_hits"] += hits
            if reset:
                r.counts[0] = r.counts[1] = 0
        out["handoffs"] = out["zero_copy"] + out["copies"]
        if reset:
            for k in _STATS:
                _STATS[k] = 0
    return out


def to(x: Array, backend: Any, *, device: DeviceLike | None = None, copy: bool | None = None,
       chunks: Any = None, _op: str = "to") -> Array:
    """Hand ``x`` to another library (and, on request, another device).

    The fastest measured path per pair of libraries is used (DLPack,
    ``__cuda_array_interface__`` or the library's own entry point; see
    ``unarray/_handoff.py``). An array handed over a second time gets a weak
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


def _to(x: Any, backend: Any, device: Any, copy: bool | None, op: str, chunks: Any = None) -> Any:
    if copy is not None and copy is not True and copy is not False:
        copy = _as_copy(copy, backend, op)
    src = _one(x, op)
    dst = _DST.get(backend) if isinstance(backend, str) else None
    if dst is None:
        dst = _backend_named(backend, op)
        if isinstance(backend, str):
            _DST[backend] = dst
    s, d = src.name, dst.name
    if src.lazy or dst.lazy or chunks is not None:  # dask: wrapped lazily, or computed (counted); no route
        from unarray import _dask_handoff

        return _dask_handoff.to(x, src, dst, device, copy, chunks, op)
    if src is dst and device is None and copy is not True:
        if src.compiling is None or not src.compiling():  # Note: a torch.compile trace cannot take a lock
            with _lock:
                _STATS["zero_copy"] += 1
        if copy is None and type(backend) is str:
            _FAST[(type(x), backend)] = _same
        return x
    if src.compiling is not None and src.compiling():
        # A torch.compile trace: the handoff runs eagerly on the real tensor (a graph break, as for
        # any call the tracer cannot follow; under fullgraph=True, torch names the break).
        return src.outside_trace(x, backend, device, copy, op)
    if src.is_tracer(x):
        raise _traced(s, d, op)
    _check_source(s, x, d, op)
    if device is not None:
        here = src.placement_of(x)  # a sharded JAX array: its mesh and spec (ShardedDevice)
        want = _as_device(device, dst, op)
        if want != here:
            _reachable(dst, want, op)
            return _move(x, src, dst, here, want, copy, op)
    if src is dst:
        return _count_copy(s, x, _h.compact_copy(s, x))
    r = _route(src, d)
    if copy is None and type(backend) is str:
        _FAST[(type(x), backend)] = r.fast
    if copy is True:
        return _copy_then_convert(x, s, d, op)
    if r.cached:
        out = _h.hit(x, r)
        if out is not None:
            r.counts[1] += 1
            return out
    return _convert(x, r, copy, op, r.cached and (id(x) in _h.CACHE or _h.admit(id(x))))


def _as_copy(copy: Any, backend: Any, op: str) -> bool:
    # A NumPy bool is a bool; anything else ("yes", 1) is refused rather than read as truthy.
    np = sys.modules.get("numpy")
    if np is not None and isinstance(copy, np.bool_):
        return bool(copy)
    name = backend if isinstance(backend, str) else getattr(backend, "__name__", None)
    raise ArgumentError(f"copy must be True, False or None, got {copy!r}; pass copy=True to always copy, "
                        "copy=False to never copy, or leave it out (copy only where needed)", op=op, backend=name)


def _route(src: Any, d: str) -> _h.Route:
    r = _BY_NAMES.get((src.name, d))
    if r is None:
        r = _h.Route(src.name, d, src.compiling)
        r.fast = _fast(r)
        with _lock:
            _BY_NAMES[(src.name, d)] = r
    return r


def copy_reason(x: Any, backend: str, op: str) -> str | None:
    """Why handing ``x`` to ``backend`` where it lives would make one copy, or None where it is zero-copy.

    What ua.explain reports for a mixed call: the converter runs as the call's handoff would (a
    zero-copy view is made and dropped, nothing is counted or stored) and a refused layout,
    alignment or dtype is the reason; errors the call would raise are raised.
    """
    src, dst = _one(x, op), _backend_named(backend, op)
    if src is dst:
        return None
    if src.lazy or dst.lazy:
        from unarray import _dask_handoff

        return _dask_handoff.copy_reason(x, src, dst, op)
    if src.is_tracer(x):
        raise _traced(src.name, dst.name, op)
    _check_source(src.name, x, dst.name, op)
    r = _route(src, dst.name)
    if r.cached and _h.hit(x, r) is not None:
        return None
    try:
        r.conv(x)
    except UnarrayError as e:
        raise _with_op(e, op) from None
    except _REFUSALS as e:
        if isinstance(e, _cv.OtherDevice):
            raise _elsewhere(r.src, r.dst, e, op) from None
        return _why(e)
    return None


def _same(x: Any, op: str) -> Any:
    # A handoff to x's own library: x itself.
    _STATS["zero_copy"] += 1
    return x


def _fast(r: _h.Route) -> Callable[[Any, str], Any]:
    # One function per route, so that ua.to is a dict lookup and one call. A cached route checks
    # the weak cache first (_h.hit written out); an uncached one tries the native call first
    # (torch.from_numpy, Tensor.numpy, ...), and anything it refuses takes the converter's full path.
    # Counters: r.counts = [zero-copy conversions, cache hits], summed by stats().
    # A miss or a refusal goes on in _slow (one definition for both paths). With the C extension,
    # the route is a _speedups.Handoff doing the steps below.
    counts, compiling, dst, slow = r.counts, r.compiling, r.dst, _slow(r)
    if _speedups is not None:
        make = _h.GUARDED.get((r.src, dst))
        guarded = None if make is None else make(_speedups)
        guard, first = (None, r.first) if guarded is None else guarded
        seen = _h.SEEN if r.cached and guarded is not None else None  # a first sight: guard + first in C
        data = hasattr(_speedups, "buffer_array")  # built with NumPy's headers: reads an ndarray's pointer
        r.sig, sig = _h.c_signature(r.src, r.sig, data)  # what store() keeps, what the hit reads in C
        r.osig, osig = _h.c_signature(dst, r.osig, data)
        reads = _cc.ORDER_READS.get((r.src, dst))
        order = r.order if reads is None else (reads(dst, _speedups) or r.order)
        readonly = guarded is not None and (r.src, dst) in _h.READ_ONLY_RESULTS
        handoff: Callable[[Any, str], Any] = _speedups.Handoff(r.cached, first, slow, sig, osig, order, dst, guard,
                                                                seen, _h.MAX_SEEN, readonly)
        return handoff
    if not r.cached:
        first = r.first

        def uncached(x: Any, op: str) -> Any:
            if compiling is not None and compiling():
                return _to(x, dst, None, None, op)  # a torch.compile trace: refused there
            try:
                out = first(x)
            except _REFUSALS:
                return slow(x, op)
            counts[0] += 1
            return out

        return uncached
    cache, sig, osig, order = _h.CACHE, r.sig, r.osig, r.order

    def cached(x: Any, op: str) -> Any:
        e = cache.get(id(x))
        if e is not None and e[0]() is x and (sig is None or e[1] == sig(x)):
            h = e[2].get(dst)
            if h is not None and (osig is None or h[1] == osig(h[0])):
                if order is not None:
                    order(x, dst)
                counts[1] += 1
                return h[0]
        return slow(x, op, e is not None)

    return cached


def _slow(r: _h.Route) -> Callable[..., Any]:
    # A route's rest: a refused native call (uncached route) or a cache miss (cached route).
    # Note: the C route calls the native entry point before asking whether torch.compile is tracing.
    # Dynamo never runs a C function on traced values: it runs ua.to's polyfill (_traced_to)
    # instead, and only an exact torch.Tensor type has a route (a FakeTensor takes the Python path).
    compiling, dst = r.compiling, r.dst
    if not r.cached:

        def refused(x: Any, op: str) -> Any:
            if compiling is not None and compiling():
                return _to(x, dst, None, None, op)
            return _convert(x, r, None, op, False)

        return refused

    def missed(x: Any, op: str, had_entry: bool) -> Any:
        if compiling is not None and compiling():
            return _to(x, dst, None, None, op)
        return _convert(x, r, None, op, had_entry or _h.admit(id(x)))

    return missed


def _convert(x: Any, r: _h.Route, copy: bool | None, op: str, keep: bool) -> Any:
    # The route's converter: zero-copy, or a refusal (layout, alignment, dtype) that becomes one copy.
    # keep: store the view in the cache (the array was handed over before: _h.admit).
    before = _refs(x) if keep else 0
    try:
        _check_source(r.src, x, r.dst, op)
        out = r.conv(x)
    except UnarrayError as e:
        raise _with_op(e, op) from None
    except _REFUSALS as e:
        return _refused(x, r, e, copy, op)
    except Exception as e:
        raise _failed(r.src, r.dst, x, e, op) from e
    r.counts[0] += 1
    if keep:
        _h.store(x, r, out, _refs(x) - before)
    return out


def _with_op(e: UnarrayError, op: str) -> UnarrayError:
    # A converter's error names no op: the caller gets it with the function it called (ua.to, ua.matmul...).
    return e if e.op is not None else type(e)(str(e), op=op, backend=e.backend)


def _refused(x: Any, r: _h.Route, e: BaseException, copy: bool | None, op: str) -> Any:
    # A consumer refusing the layout, alignment or dtype is a copy case; anything else propagates.
    if isinstance(e, _cv.OtherDevice):
        raise _elsewhere(r.src, r.dst, e, op) from None
    if copy is False:
        raise HandoffError(f"{r.dst} cannot alias this {r.src} array ({_why(e)}), so a copy is needed but "
                           "copy=False; pass copy=None to allow one copy", op=op, backend=r.dst) from None
    if isinstance(e, _cv.Immutable):
        return _count_copy(r.src, x, _h.owned_copy(r.dst, e.alias))
    return _copy_then_convert(x, r.src, r.dst, op)


def _traced(s: str, d: str, op: str) -> TracerHandoffError:
    return TracerHandoffError(
        f"cannot hand a traced {s} value (inside jit/tf.function/compile) to {d}; "
        "do the handoff outside the traced function, or compute with the traced library's own ops",
        op=op, backend=s,
    )


def _elsewhere(src: str, dst: str, e: BaseException, op: str) -> HandoffError:
    return HandoffError(f"{dst} cannot hold this {src} array where it lives ({e}); moving it is a copy "
                        f"the caller asks for: ua.to(x, {dst!r}, device=...)", op=op, backend=dst)


def _copy_then_convert(x: Any, s: str, d: str, op: str) -> Any:
    # One compact (aligned) copy on the source side, then the zero-copy path from it; for an immutable
    # source and a target without read-only arrays, the alias copied on the target's side instead.
    if _h.owned(s, d):
        try:
            return _count_copy(s, x, _h.owned_copy(d, _h.path(s, d)(x)))
        except UnarrayError as e:
            raise _with_op(e, op) from None
        except _cv.OtherDevice as e:
            raise _elsewhere(s, d, e, op) from None
        except _REFUSALS:
            pass  # a layout or dtype the target refuses: the source-side copy below
    mid, kind = _h.copy_for(s, d, x)
    try:
        out = _h.path(kind, d)(mid)
    except UnarrayError as e:
        raise _with_op(e, op) from None
    except _REFUSALS as e:
        raise HandoffError(f"{d} cannot import this {s} array even after a compact copy ({_why(e)})",
                           op=op, backend=d) from None
    except Exception as e:
        raise _failed(s, d, x, e, op) from e
    return _count_copy(s, x, out)


def _failed(s: str, d: str, x: Any, e: Exception, op: str) -> HandoffError:
    # A framework's own error (not a refusal of the layout): typed, naming what was handed over.
    dtype = getattr(x, "dtype", "?")
    return HandoffError(f"{d} could not import this {s} array of dtype {dtype} ({type(e).__name__}: {e}); "
                        f"convert it to a dtype and layout both libraries have (e.g. a compact float32 array) "
                        "first", op=op, backend=d)


_REFUSALS = (_cv.NeedsCopy, BufferError, TypeError, ValueError, RuntimeError, NotImplementedError)


def _why(e: BaseException) -> str:
    return str(e) if isinstance(e, _cv.NeedsCopy) else f"{type(e).__name__}: {e}"


def _count_copy(s: str, x: Any, out: Any) -> Any:
    with _lock:
        _STATS["copies"] += 1
        _STATS["bytes_copied"] += _h.nbytes(s, x)
    return out


def _as_device(device: Any, dst: Any, op: str) -> Any:
    from unarray._devices import Device, parse_device

    if isinstance(device, Device):
        return device
    try:
        d = parse_device(device)
    except UnarrayError as e:
        raise _with_op(e, op) from None
    if d is None:
        # A native device object (torch.device, jax.Device): ask the library that owns it.
        try:
            probe = dst.asarray([0], device=device)
            return _one(probe, op).placement_of(probe)
        except Exception as e:
            raise DeviceNotAvailableError(f"device {device!r} is not available ({type(e).__name__}: {e}); "
                                          f"available: {_listed(dst)}", op=op, backend=dst.name) from None
    return d


def _reachable(dst: Any, want: Any, op: str) -> None:
    # Note: a library may place an array elsewhere without a word (TF's soft placement puts "/GPU:0" on
    # the CPU) or fail deep inside (torch's AssertionError on a CPU-only build): a device is reachable
    # where the library lists it, or where a one-element array made there lands there.
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


def _move(x: Any, src: Any, dst: Any, here: Any, want: Any, copy: bool | None, op: str) -> Any:
    # A device change is always one copy (counted); copy=False refuses it.
    if copy is False:
        raise HandoffError(f"moving from {here} to {want} needs a copy, but copy=False; pass copy=None",
                           op=op, backend=dst.name)
    n = _h.nbytes(src.name, x)
    if want.kind == "cpu" and dst.name in ("numpy", "tensorflow"):
        if hasattr(type(src), "to_numpy"):
            y = src.to_numpy(x)
        else:  # Note: first to the host within the source's library, then its usual handoff to NumPy
            y = to(_h.move_within(src.name, x, src.native_device(want), src), "numpy", _op=op)
        out = y if dst.name == "numpy" else _cv.to_tf(_cv.aligned_copy(y) if not y.flags.c_contiguous else y)
    elif dst.name in ("cupy", "numba") and here.kind == "cpu":
        host = x if src.name == "numpy" else to(x, "numpy", _op=op)
        cp = _cv.mod("cupy")
        with cp.cuda.Device(want.index):
            out = cp.asarray(host)
        out = out if dst.name == "cupy" else _cv.mod("numba.cuda").as_cuda_array(out)
    else:
        mid = x if src is dst else to(x, dst.name, _op=op)
        out = _h.move_within(dst.name, mid, dst.native_device(want), dst)
    with _lock:
        _STATS["copies"] += 1
        _STATS["bytes_copied"] += n
    return out


def from_dlpack(x: Any, /, *, backend: Any = None, device: DeviceLike | None = None,
                copy: bool | None = None) -> Array:
    """An array of ``backend`` (the default backend if omitted) from any DLPack producer.

    Arrays of a supported library take the same path as :func:`to` (fastest
    pair path, cache, copy accounting); any other object with ``__dlpack__``
    goes to the backend's own ``from_dlpack``.

    Parameters
    ----------
    x : object
        an array of a supported library, or any object with ``__dlpack__``
        and ``__dlpack_device__``.
    backend : str or module, optional
        the target library; the default backend (``ua.use``) if omitted.
    device : device, optional
        the target device; by default ``x``'s own.
    copy : bool, optional
        as in :func:`to`.

    Returns
    -------
    out : array
        An array of ``backend``.

    Raises
    ------
    BackendNotAvailableError
        ``backend`` is unknown or not installed.
    HandoffError
        ``copy=False`` but the target cannot alias ``x``.
    DTypeError
        A dtype the target has no counterpart for.
    DeviceNotAvailableError
        ``device`` names a device the target cannot reach here.

    Examples
    --------
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
    mid = _foreign_view(x, copy)
    if mid is not None:
        return to(mid, b.name, device=device, copy=copy, _op="from_dlpack")
    if b.name == "tensorflow" and copy is not True:
        out = _foreign_to_tf(x, copy)
    else:
        out = b.from_dlpack(x, device=None if device is None else _native(b, device), copy=copy)
        device = None
    with _lock:
        _STATS["copies" if copy else "zero_copy"] += 1
    return out if device is None else to(out, b.name, device=device, _op="from_dlpack")


_HOST = frozenset({1, 3})  # DLPack CPU and CUDA pinned host memory


def _foreign_view(x: Any, copy: bool | None) -> Any:
    # Note: another library's DLPack producer enters through an array of a library unarray knows, made
    # zero-copy (NumPy on the host; torch or CuPy, where loaded, on a GPU); ua.to's route then applies its
    # guards: TF's and JAX's alignment, torch's read-only copy, the counters. None: no such import.
    try:
        dev = int(x.__dlpack_device__()[0])
    except Exception as e:
        raise HandoffError(f"this DLPack producer's __dlpack_device__() failed ({type(e).__name__}: {e})",
                           op="from_dlpack") from None
    names = ("numpy",) if dev in _HOST else ("torch", "cupy")
    for name in names:
        lib = sys.modules.get(name)
        if lib is None:
            continue
        try:
            return lib.from_dlpack(x)
        except (BufferError, TypeError, ValueError, RuntimeError):
            continue
    return None


def _foreign_to_tf(x: Any, copy: bool | None) -> Any:
    # A producer no known library imports (a dtype NumPy lacks, a GPU without torch or CuPy): TF takes its
    # capsule where the buffer is aligned; an unaligned one has no library here to copy it.
    try:
        return _cv.capsule_to_tf(x.__dlpack__())
    except _cv.NeedsCopy as e:
        raise HandoffError(f"tensorflow cannot alias this buffer ({e}) and no library here can copy it; pass an "
                           "aligned buffer, or import it with NumPy, torch or CuPy first", op="from_dlpack",
                           backend="tensorflow") from None


def _native(b: Any, device: Any) -> Any:
    try:
        return b.native_device(device)
    except UnarrayError as e:
        raise _with_op(e, "from_dlpack") from None


def _traced_to(x: Array, backend: Any, *, device: DeviceLike | None = None, copy: bool | None = None,
               chunks: Any = None, _op: str = "to") -> Array:
    # What torch.compile traces in place of the C ua.to (torch.compiler.substitute_in_graph, registered
    # by the torch backend): the Python path, which runs the handoff eagerly (a graph break).
    return _to(x, backend, device, copy, _op, chunks)


if _speedups is not None:
    # ua.to becomes the C function; the Python one above stays its documentation and its slow path.
    to = _speedups.install(to, _FAST, _h.CACHE, _REFUSALS)

    # Note: torch.compile learns ua.to's traceable polyfill when it imports torch._dynamo (not before:
    # importing it here would cost about 2 s), so a compiled function may call ua.to in a cold process.
    from unarray import _dynamo_watch

    _dynamo_watch.install()
