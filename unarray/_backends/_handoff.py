"""The handoff contract: what a backend package declares about moving its arrays to another library.

Each library's ``handoff`` module (``unarray/_backends/<lib>/handoff.py``) holds one :class:`Handoff`
named ``HANDOFF``: how its arrays are exported and adopted (DLPack, the CUDA array interface, the
library's own entry point), its copies, its signatures for the weak cache, its refusals, and its
fast paths to or from named libraries (:class:`FastPath`, declared by one of the two).
A handoff goes through the hub: the source exports once, the target adopts once (:func:`pair`),
unless one of the two declares a faster path for the pair.

Also here, because converters raise and count them: the refusals a converter raises (NeedsCopy and
its kinds), the counters and their lock, module lookup through sys.modules and NumPy on first use.
The library-agnostic steps (the cache, counters read by ``ua.stats``, copy policy, stream order of
cache hits, argument checks) are in ``unarray/interop``, which reads what the backends declare.
Nothing here imports a framework or anything above the registry.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from unarray._errors import DTypeError, HandoffError


class LazyNumpy:
    """A module's ``np`` until its first use, which puts NumPy itself in its place.

    Note: importing unarray imports no array library, NumPy included; the first handoff does."""

    def __init__(self, namespace: dict[str, Any]):
        self._namespace = namespace

    def __getattr__(self, name: str) -> Any:
        import numpy

        self._namespace["np"] = numpy
        return getattr(numpy, name)


np = LazyNumpy(globals())

STATS = {"handoffs": 0, "zero_copy": 0, "copies": 0, "bytes_copied": 0, "syncs": 0, "cache_hits": 0,
         "computes": 0}
lock = threading.Lock()


def count_sync() -> None:
    """One stream wait a converter ordered (stats()["syncs"])."""
    with lock:
        STATS["syncs"] += 1


class NeedsCopy(Exception):
    """The target cannot alias this source (layout, alignment, read-only, dtype)."""


class Immutable(NeedsCopy):
    """The source is immutable and the target has no read-only arrays: its alias, made and held in
    ``alias``, would let a write change the source. The handoff copies it on the target's side (one
    counted copy), or refuses under copy=False."""

    def __init__(self, reason: str, alias: Any):
        super().__init__(reason)
        self.alias = alias


class Snapshot(NeedsCopy):
    """The source's value changes in place: what is handed over, made and held in ``value``, is its
    current value, which a later write does not reach. A snapshot is a copy: counted, or refused under
    copy=False."""

    def __init__(self, reason: str, value: Any):
        super().__init__(reason)
        self.value = value


class Gather(NeedsCopy):
    """The source is one array spread over several devices: another library gets it gathered into one
    buffer, a copy (counted, or refused under copy=False)."""


class OtherDevice(NeedsCopy):
    """The target cannot hold arrays on the source's device: a move the caller asks for (device=)."""


def mod(name: str) -> Any:
    m = sys.modules.get(name)
    return m if m is not None else importlib.import_module(name)


# The library every other reads host memory through (device moves to the CPU, foreign host producers).
HOST = "numpy"

# Types whose handoffs the weak cache must not keep (their value changes in place).
UNCACHEABLE: set[type] = set()

# The guards of unarray/interop/_speedups.c (guard_passes): (GUARD_ATTR, type or None, attribute, call it?,
# {value: True}), (GUARD_BUFFER, alignment) and (GUARD_WRITABLE, 0).
GUARD_ATTR, GUARD_BUFFER, GUARD_WRITABLE = 1, 2, 3

Converter = Callable[[Any], Any]


@dataclass(frozen=True)
class FastPath:
    """A pair's fast path, declared by the source (``fast_to``) or the target (``fast_from``).

    convert: the zero-copy converter (raises NeedsCopy where the target cannot alias).
    cached: whether the weak cache serves the pair (False where the converter costs about a lookup).
    first: for an uncached pair, a factory of the one native call tried before the converter.
    guard: for the C route, ``guard(speedups)`` gives (guard or None, call) where one guarded call does
        the converter's work on a first sight, or None where this build has no such path.
    read_only_result: the C route marks the guarded call's ndarray read-only (as the converter does).
    promised: the converter under the caller's readonly=True promise (an alias of read-only memory).
    order: ``order(target)`` gives the stream order a cache hit repeats (the converter orders streams
        itself); order_reads: ``order_reads(target, speedups)`` the same as the C route's reads, or None.
    """

    convert: Converter
    cached: bool = True
    first: Callable[[], Converter] | None = None
    guard: Callable[[Any], tuple[Any, Converter] | None] | None = None
    read_only_result: bool = False
    promised: Converter | None = None
    order: Callable[[str], Callable[[Any, str], None]] | None = None
    order_reads: Callable[[str, Any], tuple[Any, ...] | None] | None = None


class Handoff:
    """One library's side of a handoff; each method is a step the library-agnostic hub asks for.

    The defaults are the generic DLPack path: a library overrides what it does otherwise."""

    name = ""
    # Its arrays are immutable (an alias a target could write through must be the target's copy).
    immutable = False
    # Its arrays cannot be read-only (an alias of immutable or read-only memory would be writable).
    writable_only = False
    # What its arrays are called in refusals ("JAX arrays").
    noun = ""
    # The weak cache may serve its generic (DLPack) routes: False where an array can change buffer in place.
    cacheable = True
    # The library that holds this one's compact copy, where not itself.
    copies_into: str | None = None
    # Pair fast paths, by the other library's name: to a target, from a source. A pair's fast path is
    # declared by one of the two, as a FastPath or as what makes one from the other library's Handoff (its
    # capsule import, its stream, its plain view: the steps it offers below), so that no library's package
    # imports another's; the hub composes them (pair).
    fast_to: dict[str, FastPath | Callable[[Handoff], FastPath]] = {}
    fast_from: dict[str, FastPath | Callable[[Handoff], FastPath]] = {}
    # The weak cache's signature of an array (None: nothing about it can change in place), the same as
    # the C route's reads ((attribute, call it?) per item; call None reads an ndarray's data pointer),
    # and a checked signature's factory and reads (a guard checked before the reads: _cache.CheckedSig).
    signature: Callable[[Any], Any] | None = None
    signature_reads: tuple[tuple[str, Any], ...] | None = None
    checked_signature: Callable[[], Callable[[Any], Any] | None] | None = None
    checked_reads: tuple[tuple[str, Any], ...] | None = None
    # Foreign DLPack producers it imports zero-copy (ua.from_dlpack): from host memory, from a device.
    imports_host = False
    imports_device = False
    # A device move to the CPU ends in this library's adopt_host of the host array; a move from the CPU
    # to a device, in its upload of the host array (a library whose arrays live on accelerators only).
    lands_on_host = False
    uploads = False

    def adopt(self, producer: Any) -> Any:
        """This library's array aliasing any DLPack producer (the generic route's second half)."""
        raise NeedsCopy(f"no path to {self.name}")

    def export(self, x: Any) -> Any:
        """What :meth:`adopt` of another library takes for ``x`` (the generic route's first half)."""
        return x

    def adopt_foreign(self, producer: Any) -> Any | None:
        """This library's array of an unknown DLPack producer where its own import does better than
        ``from_dlpack`` (ua.from_dlpack), else None."""
        return None

    def check_source(self, x: Any, dst: str) -> None:
        """Raise the typed error ``ua.to`` gives for an array of this library it refuses to hand over."""

    def owned_copy(self, alias: Any) -> Any:
        """This library's own copy of ``alias`` (made on its current stream)."""
        raise NeedsCopy(f"no copy path to {self.name}")

    def compact_copy(self, x: Any, backend: Any) -> Any:
        """One compact copy of ``x`` (of the library :attr:`copies_into`, or this one); ``backend``: this
        library's backend (ua.ascontiguousarray's route for a strided view)."""
        raise NeedsCopy(f"no copy path from {self.name}")

    def copy_for(self, x: Any, dst: str, backend: Any) -> tuple[Any, str]:
        """The one copy a handoff to ``dst`` makes of ``x`` when ``dst`` cannot alias it, and its library."""
        return self.compact_copy(x, backend), self.copies_into or self.name

    def adopt_capsule(self, cap: Any) -> Any:
        """This library's array aliasing a bare DLPack capsule."""
        raise NeedsCopy(f"{self.name} takes no bare capsule")

    def adopt_unordered(self, producer: Any) -> Any:
        """:meth:`adopt` of a producer whose ``__dlpack__`` takes no stream argument."""
        return self.adopt(producer)

    # -- what a library offers the other side of a pair's fast path ---------------------------------

    def plain(self, x: Any) -> Any:
        """``x`` as it can be exported (what the library must resolve or refuse first), else ``x``."""
        return x

    def export_capsule(self, x: Any, stream: int | None = None) -> Any:
        """A bare DLPack capsule of ``x`` for a consumer on CUDA stream ``stream`` (1: the legacy default), where
        this library exports one more cheaply than ``x.__dlpack__``; None where only that will do."""
        return None

    def dlpack_device(self, x: Any) -> tuple[int, int]:
        """``x.__dlpack_device__()``, as (device type, index)."""
        kind, index = x.__dlpack_device__()
        return int(kind), int(index)

    def np_dtype(self, dtype: Any) -> Any:
        """The NumPy dtype a CUDA array interface names for this library's ``dtype``, else None."""
        return None

    def current_stream(self, index: int) -> int:
        """The raw CUDA stream this library's current work on GPU ``index`` runs on (a consumer's, for stream
        order): by default :meth:`consumer_stream`."""
        return self.consumer_stream(index)

    def stream_reads(self, speedups: Any) -> tuple[Any, Any] | None:
        """:meth:`current_stream` as the C route reads it (_speedups.c, order_streams): (the stream, or what
        gives it for a device; the attribute holding its handle, or None), or None where the C route cannot."""
        return None

    # It makes its raw stream wait on a producer's raw CUDA event with its own call (wait_event).
    waits_on_events = False

    def wait_event(self, stream: int, event: int) -> None:
        """Make this library's raw ``stream`` wait on the raw CUDA ``event`` (waits_on_events)."""

    def stream_wait(self, x: Any, consumer: Handoff) -> None:
        """Order ``x``'s pending work (on this library's current stream) before ``consumer``'s stream, for a
        consumer that builds its view itself (no DLPack stream exchange)."""

    def order_for(self, consumer: Handoff) -> Callable[[Any, str], None]:
        """:meth:`stream_wait` as a cache hit of a pair to ``consumer`` repeats it (FastPath.order)."""
        return lambda x, dst: self.stream_wait(x, consumer)

    def order_reads_for(self, consumer: Handoff, speedups: Any) -> tuple[Any, ...] | None:
        """:meth:`order_for`'s check as the C route's reads (FastPath.order_reads), or None."""
        return None

    def one_device(self, x: Any) -> tuple[Any, str]:
        """(``x`` held on one device, that device's platform): a library whose arrays can span devices gives one
        device's copy of a replicated array, and refuses a sharded one (Gather)."""
        return x, "cpu"

    def adopt_host(self, y: Any) -> Any:
        """This library's array of the host ndarray ``y`` (lands_on_host)."""
        raise NeedsCopy(f"{self.name} adopts no host array")

    def upload(self, y: Any, index: int) -> Any:
        """A copy of the host ndarray ``y`` on GPU ``index`` (uploads)."""
        raise NeedsCopy(f"{self.name} uploads no host array")

    def chunk_library(self, device_kind: str) -> str:
        """For a lazy library: the eager library an array joins its graph through, for ``device_kind``."""
        return HOST

    def consumer_stream(self, index: int) -> int:
        """The raw CUDA stream this library reads on by default on GPU ``index``."""
        return 0

    def move_within(self, x: Any, device: Any, backend: Any) -> Any:
        """``x`` moved to the native ``device`` within this library (one copy)."""
        return backend.to_device(x, device)

    def data_ptr(self, x: Any) -> int | None:
        """The address of ``x``'s first element (the zero-copy proof), or None."""
        return None

    def nbytes(self, x: Any) -> int:
        n = getattr(x, "nbytes", None)
        if n is not None:
            return int(n)
        return int(np.prod(x.shape) * np.dtype(x.dtype).itemsize)

    def host(self, x: Any) -> Any:
        """``x``'s memory as NumPy reads it (read back from a device): the promise check's checksum."""
        return np.asarray(x)


def pair(src: Handoff, dst: Handoff) -> FastPath:
    """The path from ``src`` to ``dst``: a fast path one of the two declares, else export, then adopt."""
    for made, other in ((src.fast_to.get(dst.name), dst), (dst.fast_from.get(src.name), src)):
        if made is not None:
            return made if isinstance(made, FastPath) else made(other)
    export, adopt = src.export, dst.adopt

    def dlpack(x: Any) -> Any:
        return adopt(export(x))

    return FastPath(dlpack, cached=src.cacheable and dst.cacheable)


def owned(src: Handoff, dst: Handoff) -> bool:
    """Whether a handoff from ``src`` to ``dst`` must be a copy that the target owns: an immutable source, a target
    without read-only arrays."""
    return src.immutable and dst.writable_only


# -- DLPack capsules --------------------------------------------------------------------------
# A capsule's DLTensor, read without consuming the capsule: where a consumer cannot take a buffer
# (a consumer that aborts on an unaligned one), the capsule is dropped unconsumed and its deleter runs.

# Where DLTensor starts: DLManagedTensor begins with it; DLManagedTensorVersioned (DLPack 1.x) has
# version (8 bytes), manager_ctx, deleter and flags before it. In DLTensor, data is first and
# byte_offset follows data, device, ndim, dtype, shape and strides (40 bytes in).
_DL_TENSOR_AT = {b"dltensor": 0, b"dltensor_versioned": 32}
_BYTE_OFFSET_AT = 40
_FLAGS_AT = 24
READ_ONLY_FLAG = 1


def capsule_data(cap: Any) -> tuple[int, bool]:
    """(address of the first element, read-only flag) of an unconsumed DLPack capsule."""
    import ctypes  # (on first use: ctypes costs every import of unarray otherwise)

    get_name, get_pointer = ctypes.pythonapi.PyCapsule_GetName, ctypes.pythonapi.PyCapsule_GetPointer
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = get_name(cap)
    at = _DL_TENSOR_AT.get(name)
    if at is None:
        raise HandoffError(f"not an unconsumed DLPack capsule (named {name!r})")
    base = get_pointer(cap, name) or 0
    data = ctypes.c_void_p.from_address(base + at).value or 0
    offset = ctypes.c_uint64.from_address(base + at + _BYTE_OFFSET_AT).value
    read_only = bool(at and ctypes.c_uint64.from_address(base + _FLAGS_AT).value & READ_ONLY_FLAG)
    return data + offset, read_only


ML_NAMES = frozenset({"bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                      "float8_e8m0fnu"})


def ml_dtype_name(dt: Any) -> str | None:
    """The name of an ml_dtypes dtype (bfloat16, float8_*) that other libraries also have, else None."""
    t = getattr(dt, "type", None)
    if t is None or not getattr(t, "__module__", "").startswith("ml_dtypes"):
        return None
    return dt.name if dt.name in ML_NAMES else None


def ml_dtype(name: str, backend: str) -> Any:
    """NumPy's dtype (from ml_dtypes) of that name, or a DTypeError naming the package to install."""
    try:
        import ml_dtypes
    except ImportError:
        raise DTypeError(f"NumPy has no {name} dtype without the ml_dtypes package; pip install ml_dtypes, or "
                         "cast the tensor first", backend=backend) from None
    return np.dtype(getattr(ml_dtypes, name))
