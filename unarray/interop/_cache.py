"""The weak cache of ``ua.to``: an array handed over again, unchanged, gets the view made before.

An entry is re-validated on every hit by the source's signature (pointer, shape, strides, dtype as the
library can change them in place) and the view's; the C hot path reads the same signatures
(SIGNATURE_READS, CHECKED_READS). Entries are admitted on second sight (admit), die with their source,
and are swept when only their own views keep the source alive."""

from __future__ import annotations

import functools
import importlib
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from unarray.interop._common import LazyNumpy, mod
from unarray.interop._cpu import UNCACHEABLE, np_ptr

if TYPE_CHECKING:
    import numpy as np

    from unarray.interop._routes import Route
else:
    np = LazyNumpy(globals())


# -- the weak cache --------------------------------------------------------------------------
# id(source) -> [weakref to source, signature, {target: (out, out signature[, source device])},
# internal refs]; the device only for a stream-ordered pair (store).
# The cached view aliases the source's memory and usually holds the source alive, so a weak
# key alone would never expire: store() records how many references the conversion added
# (internal refs), and sweep() drops entries whose source has no reference besides those
# (the caller let go of it). Entries also die with their source (weakref callback), and the
# table holds at most MAX entries.

MAX = 256
CACHE: dict[int, list[Any]] = {}
_stores = [0]


def _sig_torch(x: Any) -> Any:
    # Note: resize_()/set_() change the pointer, shape or strides in place: all are checked (a
    # move to another device through set_() changes the pointer too, so the device is not read).
    # requires_grad: a tensor that gains it must meet the refusal a fresh handoff gives (store keeps none
    # that has it).
    return (x.data_ptr(), x.shape, x.stride(), x.dtype, x.requires_grad)


def sig_numpy(x: Any) -> Any:
    # Note: shape, strides and dtype are assignable in place, and __setstate__ (pickle's) replaces the
    # buffer whoever holds a view: all are checked. A NumPy scalar is immutable: its pointer reads 0.
    return (np_ptr(x) if isinstance(x, np.ndarray) else 0, x.shape, x.strides, x.dtype)


def _sig_jax(x: Any) -> Any:
    # JAX arrays are immutable; a deleted (donated) one must miss.
    return (x.is_deleted(),)


def _sig_cupy(x: Any) -> Any:
    # Note: of a CuPy array's pointer, shape, strides and dtype only the shape can be assigned in
    # place (a reshape, which also sets the strides); the others are read-only attributes.
    return (x.shape,)


# None: nothing about the array can change in place (EagerTensors are immutable and a
# tf.Variable's assign keeps its buffer; a Numba device array's pointer, shape and strides are
# fixed at construction).
SIGNATURES: dict[str, Callable[[Any], Any] | None] = {
    "torch": _sig_torch, "numpy": sig_numpy, "jax": _sig_jax, "cupy": _sig_cupy, "numba": None,
    "tensorflow": None, "mlx": None,
}


# The same signatures as the reads the C route makes on a cache hit: (attribute, call it?) per item,
# compared as read (tests/test_speedups.py holds them equal to the functions above); call None reads
# an ndarray's data pointer (0 for anything else), where the C module was built with NumPy's headers.
SIGNATURE_READS: dict[str, tuple[tuple[str, bool | None], ...]] = {
    "torch": (("data_ptr", True), ("shape", False), ("stride", True), ("dtype", False), ("requires_grad", False)),
    "numpy": (("data", None), ("shape", False), ("strides", False), ("dtype", False)),
    "jax": (("is_deleted", True),),
    "cupy": (("shape", False),),
}


class CheckedSig(tuple[Any, ...]):
    """A torch tensor's signature for the C route: (data_ptr, metadata guard, shape, strides, dtype,
    requires_grad).

    The guard is torch's own tensor-metadata check (torch._C._dynamo.guards.TensorGuards, the check
    torch.compile runs before reusing a compiled graph): one C++ call compares sizes, strides, dtype,
    device, dispatch keys and requires_grad, in place of three reads and three compares. The C route
    reads data_ptr() and calls
    guard.check(x) (CHECKED_READS); where the guard says no, which it also does when only the
    thread's autograd state differs from the store's (inference_mode, no_grad on a tensor that
    requires grad), shape, strides, dtype and requires_grad are read and compared as without it. Python
    compares pointer, shape, strides, dtype and requires_grad."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CheckedSig) and self[0] == other[0] and self[2:] == other[2:]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


def _torch_checked() -> Callable[[Any], Any] | None:
    # The checked signature function, where this torch's guard exists and checks what a signature must
    # (probed on tensors whose pointer stays while shape, strides or dtype change); else None.
    try:
        torch = mod("torch")
        # (its type stub omits the tensors, which are positional)
        TensorGuards: Any = importlib.import_module("torch._C._dynamo.guards").TensorGuards
        x = torch.zeros(4, 4)
        g = TensorGuards(x, dynamic_dims_sizes=None, dynamic_dims_strides=None)
        if g.check(x) is not True or any(g.check(y) is not False for y in (x.t(), x[:2], x.view(torch.int32))):
            return None
    except Exception:
        return None

    def sig(x: Any) -> Any:
        try:
            guard = TensorGuards(x, dynamic_dims_sizes=None, dynamic_dims_strides=None)
        except Exception:  # a layout the guard does not take (sparse): None, the reads decide
            guard = None
        ptr, *meta = _sig_torch(x)
        return CheckedSig((ptr, guard, *meta))

    return sig


# Sources whose C route may check a stored guard (read kind Ellipsis: where want[i].name(x) is True,
# the reads after it are skipped) before reading: the reads, and the signature function store()
# keeps then.
CHECKED_READS: dict[str, tuple[tuple[str, Any], ...]] = {
    "torch": (SIGNATURE_READS["torch"][0], ("check", Ellipsis), *SIGNATURE_READS["torch"][1:]),
}
CHECKED: dict[str, Callable[[], Callable[[Any], Any] | None]] = {"torch": _torch_checked}
_CHECKED: dict[str, Callable[[Any], Any] | None] = {}


def checked(lib: str) -> Callable[[Any], Any] | None:
    """The checked signature function for a library's arrays (C route), or None."""
    if lib not in _CHECKED:
        make = CHECKED.get(lib)
        _CHECKED[lib] = None if make is None else make()
    return _CHECKED[lib]


def c_signature(lib: str, fn: Callable[[Any], Any] | None, reads_data: bool = True) -> tuple[Any, Any]:
    """For the C route: (the signature function store() keeps, what a hit reads in C) of a library's
    arrays, from its signature function fn (None: nothing can change, nothing is read). reads_data:
    whether the C module reads an ndarray's data pointer (else such signatures call fn)."""
    if fn is None:
        return None, None
    chk = checked(lib)
    if chk is not None:
        return chk, CHECKED_READS[lib]
    reads = SIGNATURE_READS.get(lib, fn)
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


def sweep() -> int:
    """Drop entries whose source only their cached views keep alive; the number dropped."""
    dropped = 0
    for key, entry in list(CACHE.items()):
        x = entry[0]()
        # getrefcount(x) counts the local x and its own argument: 2 beyond everyone else's.
        if x is None or sys.getrefcount(x) - 2 <= entry[3]:
            CACHE.pop(key, None)
            dropped += 1
        del x
    return dropped


def clear() -> None:
    CACHE.clear()
    SEEN.clear()


# Cache admission on second sight: the first handoff of an array only converts (most arrays are
# handed over once, and a store costs about a conversion on the cheap pairs); the second converts
# and stores; from the third on, the cache serves it. SEEN holds ids only (a reused id just admits
# a new array one handoff early) and is emptied when full.
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
