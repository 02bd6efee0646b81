"""The handoff machinery behind ua.to: the per-pair path table, the weak cache and the routes.

Path table: (source, target) -> converter chosen from measurements (unarray/_convert.py on the CPU,
unarray/_convert_cuda.py on CUDA, each converter with its figures). Frameworks are reached through
sys.modules (the source's library is already imported; the target was named by the caller)."""

from __future__ import annotations

import functools
import importlib
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from unarray._convert import (
    _TF_ON_CPU,
    TF_ALIGN,
    UNCACHEABLE,
    Immutable,
    LazyNumpy,
    NeedsCopy,
    aligned_copy,
    jax_to_np,
    jax_to_tf,
    jax_to_torch,
    mod,
    np_ptr,
    np_to_jax,
    np_to_tf,
    np_to_torch,
    np_to_torch_first,
    tf_to_jax,
    tf_to_np,
    tf_to_torch,
    to_jax,
    to_tf,
    torch_to_jax,
    torch_to_np,
    torch_to_tf,
)
from unarray._convert_cuda import (
    STREAM_ORDERED,
    cupy_to_numba,
    cupy_to_torch,
    jax_to_cupy,
    jax_to_numba,
    numba_to_cupy,
    numba_to_jax,
    numba_to_torch,
    to_numba,
    torch_to_cupy,
)
from unarray._entry import tf_from_export

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyNumpy(globals())


def generic(dst: str) -> Callable[[Any], Any]:
    def conv(x: Any) -> Any:
        if dst == "numpy":
            return np.from_dlpack(x)
        if dst == "torch":
            return mod("torch").from_dlpack(x)
        if dst == "cupy":
            return mod("cupy").from_dlpack(x)
        if dst == "jax":
            return to_jax(x)
        if dst == "tensorflow":
            return to_tf(x)
        if dst == "numba":
            return to_numba(x)
        raise NeedsCopy(f"no path to {dst}")

    return conv


PATHS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("numpy", "torch"): np_to_torch,
    ("torch", "numpy"): torch_to_np,
    ("numpy", "jax"): np_to_jax,
    ("torch", "jax"): torch_to_jax,
    ("cupy", "jax"): to_jax,
    ("jax", "numpy"): jax_to_np,
    ("jax", "torch"): jax_to_torch,
    ("numpy", "tensorflow"): np_to_tf,
    ("torch", "tensorflow"): torch_to_tf,
    ("jax", "tensorflow"): jax_to_tf,
    ("tensorflow", "numpy"): tf_to_np,
    ("tensorflow", "torch"): tf_to_torch,
    ("tensorflow", "jax"): tf_to_jax,
    ("torch", "cupy"): torch_to_cupy,
    ("cupy", "torch"): cupy_to_torch,
    ("torch", "numba"): to_numba,
    ("cupy", "numba"): cupy_to_numba,
    ("jax", "numba"): jax_to_numba,
    ("numba", "cupy"): numba_to_cupy,
    ("jax", "cupy"): jax_to_cupy,
    ("numba", "torch"): numba_to_torch,
    ("numba", "jax"): numba_to_jax,
}


def path(src: str, dst: str) -> Callable[[Any], Any]:
    fn = PATHS.get((src, dst))
    if fn is None:
        fn = PATHS[(src, dst)] = generic(dst)
    return fn


# -- immutable sources, targets without read-only arrays -------------------------------------
# JAX arrays and TensorFlow tensors are immutable; torch tensors, CuPy and Numba arrays cannot be
# read-only. DLPack gives such a target a writable alias, and a write through it would change the
# source behind its owner's back (an EagerTensor's cached constant, a JAX array a jitted function
# closed over). So such a handoff is one copy on the target's side (counted, never cached), or a
# refusal under copy=False, as for a read-only NumPy array handed to torch.
IMMUTABLE_SOURCES = frozenset({"jax", "tensorflow"})
WRITABLE_ONLY = frozenset({"torch", "cupy", "numba"})


_NOUNS = {"jax": "JAX arrays", "tensorflow": "TensorFlow tensors", "torch": "torch tensors", "cupy": "CuPy arrays",
          "numba": "Numba device arrays"}


def owned(src: str, dst: str) -> bool:
    """Whether a handoff from ``src`` to ``dst`` must be a copy that the target owns."""
    return src in IMMUTABLE_SOURCES and dst in WRITABLE_ONLY


def _immutable(conv: Callable[[Any], Any], src: str, dst: str) -> Callable[[Any], Any]:
    reason = (f"{_NOUNS[src]} are immutable and {_NOUNS[dst]} cannot be read-only: a write through an alias "
              f"would change the {src} array")

    def refuse(x: Any) -> Any:
        raise Immutable(reason, conv(x))

    refuse.__name__ = conv.__name__  # what ua.explain names (path_name)
    refuse.__module__ = conv.__module__
    return refuse


def owned_copy(dst: str, alias: Any) -> Any:
    """The target's own copy of ``alias`` (made on the target's current stream, which the alias's
    export ordered after the source's work)."""
    if dst == "torch":
        return alias.clone()
    if dst == "cupy":
        return alias.copy()
    if dst == "numba":
        from numba import cuda

        out = cuda.device_array(alias.shape, dtype=alias.dtype)
        out.copy_to_device(alias)
        return out
    raise NeedsCopy(f"no copy path to {dst}")


def _first_refused() -> Callable[[Any], Any]:
    # The C route's first call for an owned pair: a refusal, without making the alias twice (the
    # Python path makes it once and copies it).
    def first(x: Any) -> Any:
        raise NeedsCopy("an immutable source: copied on the Python path")

    return first


def path_name(src: str, dst: str) -> str:
    """The converter ``ua.to`` takes for this pair, for ``ua.explain``."""
    fn = path(src, dst)
    return f"DLPack ({dst}'s from_dlpack)" if fn.__name__ == "conv" else f"{fn.__module__}.{fn.__name__}"


# -- source-side compact copies (one copy, then a zero-copy path) ----------------------------

def compact_copy(src: str, x: Any) -> Any:
    if src == "numpy":
        return aligned_copy(x)
    if src == "torch":
        x = x.detach().resolve_conj().resolve_neg()
        if x.is_cuda and not x.is_contiguous():
            return _permuted_copy(x)
        return x.clone(memory_format=mod("torch").contiguous_format)
    if src == "cupy":
        if not x.flags.c_contiguous:
            return _permuted_copy(x)
        return mod("cupy").array(x, copy=True, order="C")
    if src == "jax":
        return mod("jax.numpy").array(x, copy=True)
    if src == "tensorflow":
        return aligned_copy(np.asarray(x))
    if src == "numba":
        return mod("cupy").array(mod("cupy").asarray(x), copy=True)
    raise NeedsCopy(f"no copy path from {src}")


def _permuted_copy(x: Any) -> Any:
    """A compact copy of a strided GPU view, by ua.ascontiguousarray's route (its tiled transpose where
    that beats the library's own strided copy: a large permuted view)."""
    from unarray.layout import ascontiguousarray

    return ascontiguousarray(x)


def copy_for(src: str, dst: str, x: Any) -> tuple[Any, str]:
    """The one copy a handoff to ``dst`` makes of ``x`` when ``dst`` cannot alias it, and the library
    holding that copy.

    Note: a torch CPU tensor bound for JAX or TensorFlow is copied through NumPy onto a 64-byte
    boundary (one memcpy) up to 1 MiB, or larger where torch runs on at most 2 threads; above that
    Tensor.clone spreads the copy over torch's threads. Measured (benchmarks/handoff_copy.py, first
    handoff to JAX): 256 KiB, 37 us through NumPy against 94 us by clone on the H100 host; 4 MiB, 518
    against 96 us there (16 threads), 1137 against 1656 us on the 2-core VM. A dtype NumPy lacks
    (bfloat16) takes the clone."""
    torch = mod("torch") if src == "torch" else None
    if (torch is not None and dst in ("jax", "tensorflow") and x.device.type == "cpu"
            and (x.numel() * x.element_size() <= 1 << 20 or torch.get_num_threads() <= 2)):
        try:
            view = x.detach().resolve_conj().resolve_neg().numpy()
        except (RuntimeError, TypeError):
            pass
        else:
            return aligned_copy(view), "numpy"
    return compact_copy(src, x), kind_after_copy(src)


def move_within(kind: str, x: Any, native_device: Any, backend: Any) -> Any:
    if kind == "torch":
        return x.to(native_device)
    if kind == "jax":
        return mod("jax").device_put(x, native_device)
    return backend.to_device(x, native_device)


def kind_after_copy(src: str) -> str:
    return {"tensorflow": "numpy", "numba": "cupy"}.get(src, src)


# -- data pointers (zero-copy proof) --------------------------------------------------------

def data_ptr(kind: str, x: Any) -> int | None:
    try:
        if kind == "numpy":
            return int(x.__array_interface__["data"][0])
        if kind == "torch":
            return int(x.data_ptr())
        if kind == "jax":
            return int(x.unsafe_buffer_pointer())
        if kind == "cupy":
            return int(x.data.ptr)
        if kind == "numba":
            return int(x.__cuda_array_interface__["data"][0])
        if kind == "tensorflow":
            if "CPU" in (x.device or "CPU").upper():
                return int(np.asarray(x).__array_interface__["data"][0])
            return int(mod("torch").utils.dlpack.from_dlpack(mod("tensorflow").experimental.dlpack.to_dlpack(x))
                       .data_ptr())
    except Exception:
        return None
    return None


def nbytes(kind: str, x: Any) -> int:
    try:
        if kind == "torch":
            return int(x.numel() * x.element_size())
        if kind == "tensorflow":
            return int(x.shape.num_elements() * x.dtype.size)
        n = getattr(x, "nbytes", None)
        if n is not None:
            return int(n)
        return int(np.prod(x.shape) * np.dtype(x.dtype).itemsize)
    except Exception:
        return 0


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
    return (x.data_ptr(), x.shape, x.stride(), x.dtype)


def _sig_numpy(x: Any) -> Any:
    # Note: shape, strides and dtype are assignable in place, and __setstate__ (pickle's) replaces the
    # buffer whoever holds a view: all are checked. A NumPy scalar is immutable: its pointer reads 0.
    return (np_ptr(x) if isinstance(x, np.ndarray) else 0, x.shape, x.strides, x.dtype)


def _sig_jax(x: Any) -> Any:
    # JAX arrays are immutable; a deleted (donated) one must miss.
    return (x.is_deleted(),)


def _sig_cupy(x: Any) -> Any:
    # Note: of a CuPy array's pointer, shape, strides and dtype only the shape can be assigned in
    # place (a reshape, which also sets the strides); the others are read-only attributes (checked
    # on the H100, benchmarks/results/h100/handoff_gpu.md, "cupy_assignable").
    return (x.shape,)


# None: nothing about the array can change in place (EagerTensors are immutable and a
# tf.Variable's assign keeps its buffer; a Numba device array's pointer, shape and strides are
# fixed at construction).
SIGNATURES: dict[str, Callable[[Any], Any] | None] = {
    "torch": _sig_torch, "numpy": _sig_numpy, "jax": _sig_jax, "cupy": _sig_cupy, "numba": None,
    "tensorflow": None,
}


# The same signatures as the reads the C route makes on a cache hit: (attribute, call it?) per item,
# compared as read (tests/test_speedups.py holds them equal to the functions above); call None reads
# an ndarray's data pointer (0 for anything else), where the C module was built with NumPy's headers.
SIGNATURE_READS: dict[str, tuple[tuple[str, bool | None], ...]] = {
    "torch": (("data_ptr", True), ("shape", False), ("stride", True), ("dtype", False)),
    "numpy": (("data", None), ("shape", False), ("strides", False), ("dtype", False)),
    "jax": (("is_deleted", True),),
    "cupy": (("shape", False),),
}


class CheckedSig(tuple[Any, ...]):
    """A torch tensor's signature for the C route: (data_ptr, metadata guard, shape, strides, dtype).

    The guard is torch's own tensor-metadata check (torch._C._dynamo.guards.TensorGuards, the check
    torch.compile runs before reusing a compiled graph): one C++ call compares sizes, strides, dtype,
    device, dispatch keys and requires_grad, in place of three reads and three compares (on the dev
    VM 180 against 290 ns per torch signature, in C). The C route reads data_ptr() and calls
    guard.check(x) (CHECKED_READS); where the guard says no, which it also does when only the
    thread's autograd state differs from the store's (inference_mode, no_grad on a tensor that
    requires grad), shape, strides and dtype are read and compared as without it. Python compares
    pointer, shape, strides and dtype."""

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


# Pairs whose converter is always zero-copy and costs about a microsecond or less: a cache
# lookup would cost as much, so they are not cached (measured on the dev VM, see each converter).
UNCACHED = frozenset({
    ("numpy", "torch"), ("torch", "numpy"), ("jax", "numpy"), ("tensorflow", "numpy"), ("tensorflow", "torch"),
})


# Uncached pairs whose converter starts with one native call: the route calls it directly, and
# only what it refuses goes through the converter.
FIRST: dict[tuple[str, str], Callable[[], Callable[[Any], Any]]] = {
    ("numpy", "torch"): np_to_torch_first,
    ("torch", "numpy"): lambda: mod("torch").Tensor.numpy,
}


# The guards of unarray/_speedups.c (guard_passes): (GUARD_ATTR, type or None, attribute, call it?,
# {value: True}), (GUARD_BUFFER, alignment) and (GUARD_WRITABLE, 0).
GUARD_ATTR, GUARD_BUFFER, GUARD_WRITABLE = 1, 2, 3


def _tf_eager() -> Any:
    from tensorflow.python.framework.ops import EagerTensor

    return EagerTensor


# Pairs whose first handoff the C route (unarray._speedups, given as sp) finishes itself: where the
# array passes a guard (the checks the converter makes, read in C), one call does the converter's
# work; anything that fails the guard or the call goes to the converter. The pure-Python routes run
# the converter. Each entry gives (guard or None, call), or None where this build has no such path.
GUARDED: dict[tuple[str, str], Callable[[Any], tuple[tuple[Any, ...] | None, Callable[[Any], Any]] | None]] = {
    # jax_to_np: on the CPU, np.asarray. sp.buffer_array makes the check by reading the buffer (a JAX
    # array on a GPU, or a deleted one, exports none: BufferError, a refusal). Without it the converter
    # runs (a guard reading x.platform() would crash the process on a deleted array: _jax_platform).
    ("jax", "numpy"): lambda sp: (None, sp.buffer_array) if hasattr(sp, "buffer_array") else None,
    # tf_to_np: a device the converter found on the CPU (_TF_ON_CPU), then _numpy(); on an EagerTensor
    # exactly (its status errors are the converter's to translate: the C route hands over any failure).
    # The result is marked read-only in C (READ_ONLY_RESULTS), which needs NumPy's headers.
    ("tensorflow", "numpy"): lambda sp: ((GUARD_ATTR, _tf_eager(), "device", False, _TF_ON_CPU),
                                         _tf_eager()._numpy_internal) if hasattr(sp, "buffer_array") else None,
    # np_to_tf: a writable, C-contiguous, TF_ALIGN-aligned buffer (cached route: a first sight only).
    ("numpy", "tensorflow"): lambda sp: ((GUARD_BUFFER, TF_ALIGN), tf_from_export),
    # np_to_torch: torch.from_numpy on a writable array only (a read-only one is copied: np_to_torch).
    ("numpy", "torch"): lambda sp: ((GUARD_WRITABLE, 0), mod("torch").from_numpy),
}

# Pairs whose result the C route marks read-only (an ndarray of an immutable source; the converter
# does the same), where the C module was built with NumPy's headers (else the converter runs).
READ_ONLY_RESULTS = frozenset({("tensorflow", "numpy")})


class Route:
    """What ua.to does for one (source library, target library): converter, cache keys, stream order."""

    __slots__ = ("cached", "compiling", "conv", "counts", "dst", "fast", "first", "order", "osig", "sig", "src")

    def __init__(self, src: str, dst: str, compiling: Callable[[], bool] | None):
        self.src, self.dst, self.conv = src, dst, path(src, dst)
        if owned(src, dst):
            self.conv = _immutable(self.conv, src, dst)
        self.cached = (src, dst) not in UNCACHED and not owned(src, dst)
        first = _first_refused if owned(src, dst) else FIRST.get((src, dst))
        self.first = self.conv if first is None else first()
        self.sig = SIGNATURES.get(src, _sig_numpy)
        self.osig = SIGNATURES.get(dst, _sig_numpy)
        order = STREAM_ORDERED.get((src, dst))
        self.order = None if order is None else order(dst)
        # For a library whose traced values share the concrete type (torch.compile): is a trace running?
        self.compiling = compiling
        self.counts = [0, 0]  # zero-copy conversions, cache hits (read by ua.stats)
        self.fast: Any = None  # the route's handoff function, set by interop._fast


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
    if type(x) in UNCACHEABLE:
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
