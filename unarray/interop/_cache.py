"""The weak cache of ``ua.to``: an array handed over again, unchanged, gets the view made before.

An entry is re-validated on every hit by the source's signature (pointer, shape, strides, dtype as the
library can change them in place) and the view's, each as its library declares it (its handoff's
signature); the C hot path reads the same signatures (signature_reads, checked_reads). Entries are
admitted on second sight (admit), die with their source, and are swept when only their own views keep
the source alive."""

from __future__ import annotations

import functools
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from unarray._backends._handoff import UNCACHEABLE, Handoff

if TYPE_CHECKING:
    from unarray.interop._routes import Route


# id(source) -> [weakref to source, signature, {target: (out, out signature[, source device])},
# internal refs]; the device only for a stream-ordered pair (store). The view usually holds the source
# alive: store() records the references it added, sweep() drops entries with none besides those.

MAX = 256
CACHE: dict[int, list[Any]] = {}
_stores = [0]


@functools.cache
def checked(h: Handoff) -> Callable[[Any], Any] | None:
    """The checked signature function for a library's arrays (C route), or None."""
    make = h.checked_signature
    return None if make is None else make()


def c_signature(h: Handoff, fn: Callable[[Any], Any] | None, reads_data: bool = True) -> tuple[Any, Any]:
    """For the C route: (the signature function store() keeps, what a hit reads in C) of a library's
    arrays (``h``: its handoff), from its signature function fn (None: nothing can change, nothing is read). The
    reads are what the library declares (its handoff's signature_reads: (attribute, call it?) per item, compared as
    read; call None reads an ndarray's data pointer, where the C module was built with NumPy's headers;
    checked_reads: a stored guard checked first, read kind Ellipsis). reads_data: whether the C module
    reads an ndarray's data pointer (else such signatures call fn)."""
    if fn is None:
        return None, None
    chk = checked(h)
    if chk is not None and h.checked_reads is not None:
        return chk, h.checked_reads
    reads: Any = h.signature_reads or fn
    if not reads_data and isinstance(reads, tuple) and any(call is None for _, call in reads):
        return fn, fn
    return fn, reads


def hit(x: Any, r: Route) -> Any:
    """The cached view of ``x`` for route ``r`` if still valid, else None."""
    entry = CACHE.get(id(x))
    if entry is None or entry[0]() is not x or entry[1] != (None if r.sig is None else r.sig(x)):
        return None
    h = entry[2].get(r.dst)
    if h is None or (r.osig is not None and h[1] != r.osig(h[0])):
        return None
    if r.order is not None:
        r.order(x, r.dst)
    return h[0]


def store(x: Any, r: Route, out: Any, added_refs: int) -> None:
    # Note: a tensor requiring grad went over detached under no_grad; under grad mode it is refused, so
    # its view is never served from here.
    if type(x) in UNCACHEABLE or getattr(x, "requires_grad", False):
        return
    key = id(x)
    sig = None if r.sig is None else r.sig(x)
    osig = None if r.osig is None else r.osig(out)
    # A stream-ordered pair (a torch source) keeps the source's device with the view: the C route's
    # hit orders streams there without asking x again (the signature's pointer pins the device).
    held = (out, osig) if r.order is None else (out, osig, x.get_device())
    entry = CACHE.get(key)
    if entry is not None and entry[0]() is x and entry[1] == sig:
        entry[2][r.dst] = held
        entry[3] += added_refs
        return
    try:
        # The callback binds _drop and CACHE now: at interpreter exit the module globals are gone.
        ref = weakref.ref(x, functools.partial(_drop, key))
    except TypeError:
        return
    _stores[0] += 1
    if len(CACHE) >= MAX or _stores[0] % 16 == 0:
        sweep()
        while len(CACHE) >= MAX:
            CACHE.pop(next(iter(CACHE)))
    CACHE[key] = [ref, sig, {r.dst: held}, added_refs]


def _drop(key: int, ref: Any, cache: dict[int, list[Any]] = CACHE) -> None:
    entry = cache.get(key)
    if entry is not None and entry[0] is ref:
        del cache[key]


def sweep() -> None:
    """Drop entries whose source only their cached views keep alive."""
    for key, entry in list(CACHE.items()):
        x = entry[0]()
        # getrefcount(x) counts the local x and its own argument: 2 beyond everyone else's.
        if x is None or sys.getrefcount(x) - 2 <= entry[3]:
            CACHE.pop(key, None)
        del x


def clear() -> None:
    CACHE.clear()
    SEEN.clear()


# Admission on second sight (most arrays are handed over once): the second handoff stores, the third on hit.
# SEEN holds ids only (a reused id admits a new array one handoff early) and is emptied when full.
SEEN: set[int] = set()
MAX_SEEN = 4096


def admit(key: int) -> bool:
    """Whether the array with this id was handed over before (and so is worth a cache entry)."""
    if key in SEEN:
        return True
    if len(SEEN) >= MAX_SEEN:
        SEEN.clear()
    SEEN.add(key)
    return False
