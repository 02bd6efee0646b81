"""The routes of ``ua.to``: one per (source library, target library), built on its first handoff (what a route
holds: docs/layout.md). Its handoff function is the C hot path where built, else the same steps in Python
(fast); a refused native call or a cache miss goes on in its slow path (the converter, or one counted copy)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from unarray import _native
from unarray._backends import _handoff, handoff
from unarray._backends._handoff import STATS, FastPath, Handoff, Immutable, NeedsCopy, OtherDevice, Snapshot, lock
from unarray._errors import DTypeError, HandoffError, TracerHandoffError, UnarrayError
from unarray.interop import _cache

# ua.to's hot path in C (unarray/interop/_speedups.c); without it (or with UNARRAY_PURE_PYTHON=1) the
# same steps run in Python (fast).
speedups = _native.load("interop._speedups")


@functools.cache
def pair(src: str, dst: str) -> FastPath:
    """The pair's path as the two libraries declare it (made once per pair)."""
    return _handoff.pair(handoff(src), handoff(dst))


def _first_refused() -> Callable[[Any], Any]:
    # The C route's first call for an owned pair: a refusal, without making the alias twice (the
    # Python path makes it once and copies it).
    def first(x: Any) -> Any:
        raise NeedsCopy("an immutable source: copied on the Python path")

    return first


# -- immutable sources, targets without read-only arrays -------------------------------------
# A write through DLPack's writable alias would change an immutable source behind its owner's back: one
# copy on the target's side (counted, never cached), or a refusal under copy=False; readonly=True makes
# the alias the result instead.

def refusing_alias(conv: Callable[[Any], Any], s: Handoff, d: Handoff) -> Callable[[Any], Any]:
    reason = (f"{s.noun} are immutable and {d.noun} cannot be read-only: a write through an alias "
              f"would change the {s.name} array")

    def refuse(x: Any) -> Any:
        try:
            alias = conv(x)
        except Snapshot as e:  # a value changing in place: its current value, the target's copy all the same
            alias = e.value
        raise Immutable(reason, alias)

    refuse.__name__ = conv.__name__  # what ua.explain names (name)
    refuse.__module__ = conv.__module__
    return refuse


class Route:
    """What ua.to does for one (source library, target library): the two handoffs, converter, cache keys,
    stream order."""

    __slots__ = ("b", "cached", "compiling", "conv", "counts", "d", "dst", "fast", "first", "order", "osig", "owned",
                 "path", "promise", "promises", "s", "sig", "src")

    def __init__(self, src: Any, dst: str, promise: bool = False):
        # src: the source's backend. promise: the route of ua.to(..., readonly=True) for a pair where the promise
        # makes the alias the result (promises); cached like any pair whose converter costs more than a lookup.
        s, d = self.s, self.d = handoff(src.name), handoff(dst)
        p = self.path = pair(src.name, dst)  # what the two libraries declare for the pair
        self.b, self.src, self.dst, self.promise = src, src.name, dst, promise
        owned = self.owned = _handoff.owned(s, d)  # a copy the target owns (an immutable source)
        self.promises = owned or p.promised is not None  # readonly=True changes the handoff (a copy becomes the alias)
        self.conv = (p.promised or p.convert) if promise else refusing_alias(p.convert, s, d) if owned else p.convert
        self.cached = promise or (p.cached and not owned)
        first = None if promise else _first_refused if owned else None if p.cached else p.first
        self.first = self.conv if first is None else first()
        self.sig, self.osig = s.signature, d.signature
        self.order = None if p.order is None else p.order(dst)
        # For a library whose traced values share the concrete type (torch.compile): is a trace running?
        self.compiling = src.compiling
        self.counts = [0, 0]  # zero-copy conversions, cache hits (read by ua.stats)
        self.fast: Any = None  # the route's handoff function, set by route()

    def name(self) -> str:
        """What ``ua.explain`` names for the route's converter."""
        fn = self.conv
        if fn.__name__ == "dlpack":
            return f"DLPack ({self.src}'s export, {self.dst}'s adopt)"
        return f"{fn.__module__}.{fn.__name__}"


# (source name, target name) -> its route, made once (ua.stats reads their counters).
# A promise route (readonly=True) is keyed (source name, target name, True).
BY_NAMES: dict[tuple[Any, ...], Route] = {}
_refs = sys.getrefcount


def route(src: Any, d: str, readonly: bool = False) -> Route:
    """The route from backend ``src`` to library ``d``; with ``readonly``, the promise's route where the promise
    changes the pair's handoff (Route.promises)."""
    r = BY_NAMES.get((src.name, d))
    if r is None:
        r = _made(Route(src, d), (src.name, d))
    if readonly and r.promises:
        return BY_NAMES.get((src.name, d, True)) or _made(Route(src, d, True), (src.name, d, True))
    return r


def _made(r: Route, key: tuple[Any, ...]) -> Route:
    r.fast = fast(r)
    with lock:
        BY_NAMES[key] = r
    return r


def fast(r: Route) -> Callable[[Any, str], Any]:
    # One function per route, so that ua.to is a dict lookup and one call (with the C extension, a
    # speedups.Handoff doing the same steps): the weak cache first, or the native call first where
    # uncached; a miss or a refusal goes on in _slow.
    counts, compiling, dst, slow, traced = r.counts, r.compiling, r.dst, _slow(r), _outside(r)
    if speedups is not None:
        make = None if r.promise else r.path.guard
        guarded = None if make is None else make(speedups)
        guard, first = (None, r.first) if guarded is None else guarded
        seen = _cache.SEEN if r.cached and guarded is not None else None  # a first sight: guard + first in C
        data = hasattr(speedups, "buffer_array")  # built with NumPy's headers: reads an ndarray's pointer
        r.sig, sig = _cache.c_signature(r.s, r.sig, data)  # what store() keeps, what the hit reads in C
        r.osig, osig = _cache.c_signature(r.d, r.osig, data)
        reads = r.path.order_reads
        order = r.order if reads is None else (reads(dst, speedups) or r.order)
        readonly = guarded is not None and r.path.read_only_result
        handoff: Callable[[Any, str], Any] = speedups.Handoff(r.cached, first, slow, sig, osig, order, dst, guard,
                                                                seen, _cache.MAX_SEEN, readonly)
        return handoff
    if not r.cached:
        first = r.first

        def uncached(x: Any, op: str) -> Any:
            if compiling is not None and compiling():
                return traced(x, op)  # a torch.compile trace: out of it
            try:
                out = first(x)
            except REFUSALS:
                return slow(x, op)
            counts[0] += 1
            return out

        return uncached
    cache, sig, osig, order = _cache.CACHE, r.sig, r.osig, r.order

    def cached(x: Any, op: str) -> Any:
        if compiling is not None and compiling():  # before the cache: a trace cannot compare pointers
            return traced(x, op)
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


def _outside(r: Route) -> Callable[[Any, str], Any]:
    # Under a trace of a library whose traced values share the concrete type (torch.compile): the route's
    # handoff run eagerly on the real array (a graph break, as for any call the tracer cannot follow).
    def eager(x: Any, dst: str, device: Any, copy: bool | None, op: str) -> Any:
        return r.fast(x, op)

    return lambda x, op: r.b.outside_trace(eager, x, r.dst, None, None, op)


def _slow(r: Route) -> Callable[..., Any]:
    # A route's rest: a refused native call (uncached route) or a cache miss (cached route). The C route asks
    # no tracer first: a tracer runs ua.to's polyfill (_traced_to), and a traced value's own type has no route.
    compiling, traced, cached = r.compiling, _outside(r), r.cached

    def rest(x: Any, op: str, had_entry: bool = False) -> Any:
        if compiling is not None and compiling():
            return traced(x, op)
        return convert(x, r, None, op, cached and (had_entry or _cache.admit(id(x))))

    return rest


def convert(x: Any, r: Route, copy: bool | None, op: str, keep: bool) -> Any:
    # The route's converter: zero-copy, or a refusal (layout, alignment, dtype) that becomes one copy.
    # keep: store the view in the cache (the array was handed over before: _cache.admit).
    before = _refs(x) if keep else 0
    try:
        check_source(r.s, x, r.dst, op)
        out = r.conv(x)
    except UnarrayError as e:
        raise with_op(e, op) from None
    except REFUSALS as e:
        return _refused(x, r, e, copy, op)
    except Exception as e:
        raise failed(r, x, e, op) from e
    r.counts[0] += 1
    if keep:
        _cache.store(x, r, out, _refs(x) - before)
    return out


def check_source(src: Handoff, x: Any, dst: str, op: str) -> None:
    """Raise the typed error ``ua.to`` gives for a source it refuses to hand to ``dst`` (nothing else), before any
    converter runs: each library declares its refusals (its handoff's ``check_source``: a handoff that would lose
    the autograd graph, reinterpret bytes, or end in a framework's own error), asked on the slow paths only.

    A handoff within one library (a device move, a copy) keeps what the library keeps: nothing is
    checked there. (A NumPy masked array never gets this far: the dispatcher refuses its type, for
    ua.to as for every op.)"""
    if src.name == dst:
        return
    try:
        src.check_source(x, dst)
    except (DTypeError, HandoffError) as e:
        raise type(e)(str(e), op=op, backend=dst) from None  # the checks name no op


def with_op(e: UnarrayError, op: str) -> UnarrayError:
    # A converter's error names no op: the caller gets it with the function it called (ua.to, ua.matmul...).
    return e if e.op is not None else type(e)(str(e), op=op, backend=e.backend)


def _refused(x: Any, r: Route, e: BaseException, copy: bool | None, op: str) -> Any:
    # A consumer refusing the layout, alignment or dtype is a copy case; anything else propagates.
    if isinstance(e, OtherDevice):
        raise elsewhere(r.src, r.dst, e, op) from None
    if copy is False:
        raise HandoffError(f"{r.dst} cannot alias this {r.src} array ({why(e)}), so a copy is needed but "
                           "copy=False; pass copy=None to allow one copy", op=op, backend=r.dst) from None
    if isinstance(e, Immutable):
        return count_copy(r.s, x, r.d.owned_copy(e.alias))
    if isinstance(e, Snapshot):  # a tf.Variable's current value
        return count_copy(r.s, x, e.value)
    return copy_then_convert(x, r, op)


def traced_error(s: str, d: str, op: str) -> TracerHandoffError:
    return TracerHandoffError(
        f"cannot hand a traced {s} value (inside jit/tf.function/compile) to {d}; "
        "do the handoff outside the traced function, or compute with the traced library's own ops",
        op=op, backend=s,
    )


def elsewhere(src: str, dst: str, e: BaseException, op: str) -> HandoffError:
    return HandoffError(f"{dst} cannot hold this {src} array where it lives ({e}); moving it is a copy "
                        f"the caller asks for: ua.to(x, {dst!r}, device=...)", op=op, backend=dst)


def copy_then_convert(x: Any, r: Route, op: str) -> Any:
    # One compact (aligned) copy on the source side, then the zero-copy path from it; for an immutable
    # source and a target without read-only arrays, the alias copied on the target's side instead.
    s, d = r.src, r.dst
    if r.owned:
        try:
            return count_copy(r.s, x, r.d.owned_copy(r.path.convert(x)))
        except UnarrayError as e:
            raise with_op(e, op) from None
        except OtherDevice as e:
            raise elsewhere(s, d, e, op) from None
        except REFUSALS:
            pass  # a layout or dtype the target refuses: the source-side copy below
    mid, kind = r.s.copy_for(x, d, r.b)
    try:
        out = mid if kind == d else (r.path if kind == s else pair(kind, d)).convert(mid)  # (the copy is the target's)
    except UnarrayError as e:
        raise with_op(e, op) from None
    except REFUSALS as e:
        raise HandoffError(f"{d} cannot import this {s} array even after a compact copy ({why(e)})",
                           op=op, backend=d) from None
    except Exception as e:
        raise failed(r, x, e, op) from e
    return count_copy(r.s, x, out)


def failed(r: Route, x: Any, e: Exception, op: str) -> HandoffError:
    # A framework's own error (not a refusal of the layout): typed, naming what was handed over.
    dtype = getattr(x, "dtype", "?")
    return HandoffError(f"{r.dst} could not import this {r.src} array of dtype {dtype} ({type(e).__name__}: {e}); "
                        f"convert it to a dtype and layout both libraries have (e.g. a compact float32 array) "
                        "first", op=op, backend=r.dst)


REFUSALS = (NeedsCopy, BufferError, TypeError, ValueError, RuntimeError, NotImplementedError)


def why(e: BaseException) -> str:
    return str(e) if isinstance(e, NeedsCopy) else f"{type(e).__name__}: {e}"


def count_copy(h: Handoff, x: Any, out: Any) -> Any:
    # h: the source's handoff (what x's bytes are; a size it cannot tell counts 0 bytes)
    try:
        n = h.nbytes(x)
    except Exception:
        n = 0
    with lock:
        STATS["copies"] += 1
        STATS["bytes_copied"] += n
    return out
