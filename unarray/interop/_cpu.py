"""Zero-copy converters between array libraries on the CPU.

Each converter takes the source array and returns the target library's array aliasing its memory,
or raises NeedsCopy (unarray/interop/_common.py). The CUDA converters are in _cuda.py, their stream
order in _streams.py; the per-pair path table in _paths.py, the weak cache in _cache.py, the routes
of ua.to in _routes.py. Each converter is the fastest entry point found for its pair
(docs/design-notes.md, "Handoff")."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from unarray.interop._common import (
    Gather,
    LazyNumpy,
    NeedsCopy,
    OtherDevice,
    Snapshot,
    jax_dlpack_device,
    mod,
    torch_raw_stream,
)
from unarray.interop._entry_points import jax_capsule, jax_from_dlpack, tf_capsule, tf_from_capsule, torch_from_capsule
from unarray.interop._refusals import capsule_data, check_torch, ml_dtype_name

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyNumpy(globals())

# -- source-side views ----------------------------------------------------------------------

def _np_writable(x: Any) -> Any:
    # Note: JAX's DLPack import refuses read-only exports; JAX never writes into an imported
    # buffer, so a writable alias of the same memory (keeping x alive) is safe to hand it.
    if x.flags.writeable:
        return x
    # The bytes the view spans (a strided or reversed view reaches beyond its nbytes either side).
    ends = [st * (n - 1) for st, n in zip(x.strides, x.shape, strict=True)] if x.size else []
    low = sum(e for e in ends if e < 0)
    span = max(1, sum(e for e in ends if e > 0) - low + x.itemsize) if x.size else 1
    buf: Any = (ctypes.c_char * span).from_address(x.__array_interface__["data"][0] + low)
    buf._keep = x
    return np.ndarray(x.shape, x.dtype, buffer=buf, offset=-low, strides=x.strides)


class _ArrayStruct(ctypes.Structure):
    # NumPy's PyArrayInterface (the __array_struct__ capsule), up to the data pointer.
    _fields_ = [("two", ctypes.c_int), ("nd", ctypes.c_int), ("typekind", ctypes.c_char), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_int), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("data", ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_read_pointer = ctypes.c_void_p.from_address
_DATA_AT = _ArrayStruct.data.offset


def np_ptr(x: Any) -> int:
    # An ndarray's data pointer through __array_struct__: half the cost of __array_interface__ (a dict).
    return _read_pointer(_capsule_pointer(x.__array_struct__, None) + _DATA_AT).value or 0


def _torch_plain(x: Any) -> Any:
    # Note: conjugate-view and negative-view tensors refuse DLPack/numpy export (a copy resolves the bit);
    # one that requires grad is refused while grad mode is on (refusals._torch), else exported detached.
    if x.requires_grad:
        check_torch(x, "another library")
        x = x.detach()
    if x.is_conj() or x.is_neg():
        raise NeedsCopy("torch tensor carries a lazy conjugate/negation bit")
    return x


def aligned_copy(x: Any) -> Any:
    # A C-contiguous copy on a 64-byte boundary (what JAX and TF alias without a second copy).
    nbytes = x.nbytes
    raw = np.empty(nbytes + 64, np.uint8)
    off = (-raw.__array_interface__["data"][0]) % 64
    out = raw[off:off + nbytes].view(x.dtype).reshape(x.shape)
    np.copyto(out, x)
    return out


_ML_TORCH = frozenset({"bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                       "float8_e8m0fnu"})


def _ml_dtype(name: str) -> Any:
    try:
        import ml_dtypes
    except ImportError:
        from unarray._errors import DTypeError

        raise DTypeError(f"NumPy has no {name} dtype without the ml_dtypes package; pip install ml_dtypes, or "
                         "cast the tensor first", backend="numpy") from None
    return np.dtype(getattr(ml_dtypes, name))


# -- zero-copy converters, per pair ----------------------------------------------------------
# Each takes the source and returns the target's array aliasing it, or raises NeedsCopy.

def np_to_torch(x: Any) -> Any:
    # torch.from_numpy: the fastest import of the three (from_dlpack, as_tensor). It refuses
    # (TypeError/ValueError) exactly the cases handled below, so it is tried first, on a writable array
    # only (np_to_torch_first).
    if not x.flags.writeable:
        raise NeedsCopy(_READ_ONLY)
    try:
        return mod("torch").from_numpy(x)
    except (TypeError, ValueError):
        pass
    torch = mod("torch")
    ml = ml_dtype_name(x.dtype)  # bfloat16 and float8 (ml_dtypes): the same bits, viewed
    if ml is not None:
        bits = np.uint16 if x.dtype.itemsize == 2 else np.uint8
        return torch.from_numpy(x.view(bits)).view(getattr(torch, ml))
    if any(s < 0 for s in x.strides):
        raise NeedsCopy("torch tensors cannot have negative strides")
    if not x.dtype.isnative:
        raise NeedsCopy("torch has no byte-swapped dtypes")
    raise NeedsCopy(f"torch.from_numpy refuses dtype {x.dtype}")


# Note: torch has no read-only tensors, and writing through an alias of read-only memory (a mode='r'
# memmap) kills the process: a read-only array is copied (counted), or refused under copy=False.
_READ_ONLY = ("torch tensors cannot be read-only, and this NumPy array is (a write would crash or change the "
              "owner's data)")


def np_to_torch_promised(x: Any) -> Any:
    # ua.to(..., readonly=True): the caller promised not to write, so a read-only array is aliased too
    # (a writable alias of the same memory: torch.from_numpy would warn on the read-only flag).
    return np_to_torch(x if x.flags.writeable else _np_writable(x))


def np_to_torch_first() -> Callable[[Any], Any]:
    # The route's first call on the Python path (the C route guards torch.from_numpy the same way).
    from_numpy = mod("torch").from_numpy

    def first(x: Any) -> Any:
        if not x.flags.writeable:
            raise NeedsCopy(_READ_ONLY)
        return from_numpy(x)

    return first


def torch_to_np(x: Any) -> Any:
    # Tensor.numpy(): faster than np.asarray and np.from_dlpack. It refuses
    # (RuntimeError/TypeError) the grad, conj/neg-bit, GPU and bfloat16 cases handled below.
    try:
        return x.numpy()
    except (RuntimeError, TypeError):
        pass
    x = _torch_plain(x)
    if x.device.type != "cpu":
        raise OtherDevice("NumPy arrays live on the CPU")
    name = str(x.dtype).rpartition(".")[2]
    if name in _ML_TORCH:  # bfloat16 and float8: ml_dtypes' NumPy dtype of the same bits
        torch = mod("torch")
        return x.view(torch.uint16 if x.element_size() == 2 else torch.uint8).numpy().view(_ml_dtype(name))
    return x.numpy()


# Note: JAX's CPU client views only 64-byte aligned host buffers (XLA's allocator alignment) and
# refuses others after an export and a failed import; checked first, so that a buffer that must be
# copied goes straight to the copy.
JAX_ALIGN = 64
_JAX_UNALIGNED = f"JAX views only {JAX_ALIGN}-byte aligned host buffers"


def np_to_jax(x: Any) -> Any:
    # The import jnp.from_dlpack ends in (_entry_points.py); zero-copy where the buffer is 64-byte
    # aligned, else JAX refuses (copy=False) and ua.to copies once (jax.device_put always copies).
    _check_x64(x)
    f = x.flags
    if not (f.c_contiguous or x.size <= 1) and not _is_permutation(x):
        raise NeedsCopy("JAX imports only compact buffers")
    if x.dtype.kind == "V":
        raise NeedsCopy("NumPy's bfloat16 (ml_dtypes) has no DLPack code")
    if x.size and np_ptr(x) % JAX_ALIGN:
        raise NeedsCopy(_JAX_UNALIGNED)
    return jax_from_dlpack(x if f.writeable else _np_writable(x))


def torch_to_jax(x: Any) -> Any:
    # The import jnp.from_dlpack ends in (_entry_points.py). On CUDA, JAX's
    # stream for external events is passed to __dlpack__, so torch orders its pending work before it.
    _check_x64(x)
    x = _torch_plain(x)
    if x.is_cpu and x.numel() and x.data_ptr() % JAX_ALIGN:
        raise NeedsCopy(_JAX_UNALIGNED)
    return jax_from_dlpack(x)


def to_jax(x: Any) -> Any:
    # CuPy and other DLPack producers.
    _check_x64(x)
    return jax_from_dlpack(x)


_WIDE = frozenset({"float64", "int64", "uint64", "complex128"})


_WIDE_BY_DTYPE: dict[Any, bool] = {}


def _check_x64(x: Any) -> None:
    # Note: without x64 mode JAX silently narrows 64-bit imports to 32 bits: refuse instead.
    dt = x.dtype
    wide = _WIDE_BY_DTYPE.get(dt)
    if wide is None:
        wide = _WIDE_BY_DTYPE[dt] = str(dt).rpartition(".")[2] in _WIDE
    if wide and not mod("jax").config.read("jax_enable_x64"):
        from unarray._errors import DTypeError

        raise DTypeError(f"a {x.dtype} array cannot enter JAX without x64 mode (JAX would narrow it to 32 bits); "
                         "call jax.config.update('jax_enable_x64', True) or cast first", backend="jax")


def _is_permutation(x: Any) -> bool:
    order = sorted(range(x.ndim), key=lambda i: x.strides[i], reverse=True)
    expect = x.itemsize
    for i in reversed(order):
        if x.shape[i] != 1 and x.strides[i] != expect:
            return False
        expect *= x.shape[i]
    return True


def _jax_platform(x: Any) -> str:
    # Note: jaxlib's Array.platform() crashes the process (a segfault, jax 0.10 on the CPU) on a deleted
    # (donated) array; is_deleted() answers.
    if x.is_deleted():
        from unarray._errors import HandoffError

        raise HandoffError("this JAX array has been deleted (donated to a jitted call, or .delete()): there is "
                           "no data to hand over; hand over the array before donating it", backend="jax")
    if len(getattr(x, "_arrays", ())) > 1:  # several devices hold it
        if not x.is_fully_replicated:
            raise Gather(f"this JAX array is sharded over {len(x._arrays)} devices ({x.sharding}); another "
                         "library gets it gathered into one buffer")
        raise _Replicated(x.addressable_data(0))
    return str(x.platform())


class _Replicated(Exception):
    # A JAX array every one of whose devices holds all of it: one device's copy is handed over instead.
    def __init__(self, one: Any):
        self.one = one


def jax_single(x: Any) -> tuple[Any, str]:
    """(x on one device, its platform): a replicated array's first device's copy (zero-copy); a sharded
    one raises Gather."""
    try:
        return x, _jax_platform(x)
    except _Replicated as r:
        return r.one, _jax_platform(r.one)


def gathered(x: Any) -> Any:
    """A sharded JAX array gathered into one host buffer (the copy Gather asks for), where it lives on the CPU."""
    if any(d.platform != "cpu" for d in x.sharding.device_set):
        from unarray._errors import HandoffError

        raise HandoffError(f"this JAX array is sharded over {len(x._arrays)} {x.sharding} devices; handing it to "
                           "another library would gather it across devices; gather it where it should live first "
                           "(jax.device_put(x, jax.devices()[0])), or pass device='cpu' to gather it on the host",
                           backend="jax")
    return aligned_copy(np.asarray(x))


def jax_to_np(x: Any) -> Any:
    # np.asarray(jax): a read-only view (JAX arrays are immutable), faster than np.from_dlpack.
    # On an accelerator np.asarray would copy to the host: that is a device change (ua.to device="cpu").
    x, platform = jax_single(x)
    if platform != "cpu":
        raise OtherDevice("NumPy arrays live on the CPU")
    return np.asarray(x)


def jax_to_torch(x: Any) -> Any:
    # JAX's export + torch._C._from_dlpack, skipping torch.from_dlpack's Python. On CUDA the export
    # names torch's current stream, as torch.from_dlpack does, so JAX orders its work before it.
    # Note: the result is a writable alias of an immutable JAX buffer (as torch.from_dlpack's is): the
    # route copies it (_paths.owned), so that no write through it can change the JAX array.
    x, platform = jax_single(x)
    if platform == "cpu":
        cap = jax_capsule(x)
    else:
        kind, index = jax_dlpack_device(x)
        cap = None
        if int(kind) == 2:  # CUDA: the stream torch.from_dlpack would name (1: the legacy default stream)
            stream = torch_raw_stream(int(index))
            cap = jax_capsule(x, stream or 1)
    return mod("torch").from_dlpack(x) if cap is None else torch_from_capsule(cap)


# Note: TensorFlow aliases a DLPack buffer at any address, but its kernels CHECK-fail (abort the
# process: "Check failed: IsAligned()") on tensors that are not EIGEN_MAX_ALIGN_BYTES-aligned.
TF_ALIGN = 64


def np_to_tf(x: Any) -> Any:
    # TFE_FromDlpackCapsule, zero-copy (tf.convert_to_tensor copies). TF refuses strided buffers and
    # needs aligned ones (the pointer read is the price of not aborting).
    f = x.flags
    if not (f.c_contiguous or x.size <= 1):
        raise NeedsCopy("TensorFlow imports only C-contiguous buffers")
    if x.size and np_ptr(x) % TF_ALIGN:
        raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
    return tf_from_capsule((x if f.writeable else _np_writable(x)).__dlpack__())


def torch_to_tf(x: Any) -> Any:
    # torch.utils.dlpack.to_dlpack: C, where Tensor.__dlpack__ is Python.
    x = _torch_plain(x)
    if not x.is_contiguous():
        raise NeedsCopy("TensorFlow imports only C-contiguous buffers")
    if x.data_ptr() % TF_ALIGN and x.numel():
        raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
    return tf_from_capsule(x.__dlpack__() if x.is_cuda else mod("torch").utils.dlpack.to_dlpack(x))


def jax_to_tf(x: Any) -> Any:
    x, platform = jax_single(x)
    cpu = platform == "cpu"
    if x.unsafe_buffer_pointer() % TF_ALIGN and x.size:
        raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
    cap = jax_capsule(x) if cpu else None
    return tf_from_capsule(x.__dlpack__() if cap is None else cap)


def to_tf(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np_to_tf(x)
    if type(x).__module__.startswith("torch"):
        return torch_to_tf(x)
    if type(x).__module__.startswith("jax"):
        return jax_to_tf(x)
    return capsule_to_tf(x.__dlpack__())


def capsule_to_tf(cap: Any) -> Any:
    # Any other producer (CuPy, Numba, a foreign object): the alignment read from the capsule itself,
    # which is dropped unconsumed where TF would abort on it.
    if capsule_data(cap)[0] % TF_ALIGN:
        raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
    return tf_from_capsule(cap)


_TF_ON_CPU: dict[str, bool] = {}


_EAGER: list[type] = []
# Types whose handoffs the weak cache must not keep (a tf.Variable: its value changes in place).
UNCACHEABLE: set[type] = set()


def _is_eager(x: Any) -> bool:
    if not _EAGER:
        from tensorflow.python.framework.ops import EagerTensor

        _EAGER.append(EagerTensor)
    return type(x) is _EAGER[0]


_VARIABLE = ("a tf.Variable changes in place, and what is handed over is its current value, which a later "
             "assign does not reach (TensorFlow copies the buffer on that write)")


def _snapshot(x: Any, conv: Callable[[Any], Any]) -> Snapshot:
    # Note: a tf.Variable hands over its current value: ReadVariableOp's tensor shares the variable's
    # buffer until the next write, which copies it: a copy deferred, counted as one (_routes._refused).
    UNCACHEABLE.add(type(x))
    return Snapshot(_VARIABLE, conv(mod("tensorflow").convert_to_tensor(x)))


def tf_to_np(x: Any) -> Any:
    # EagerTensor._numpy(): zero-copy on the CPU (Tensor.numpy() copies). Note: read-only, as
    # EagerTensors are immutable.
    if not _is_eager(x):
        raise _snapshot(x, tf_to_np)
    dev = x.device
    cpu = _TF_ON_CPU.get(dev)
    if cpu is None:
        cpu = _TF_ON_CPU[dev] = "CPU" in (dev or "CPU").upper()
    if not cpu:
        raise OtherDevice("NumPy arrays live on the CPU")
    out = x._numpy()
    if isinstance(out, np.ndarray):  # (a 0-d tensor gives a NumPy scalar: immutable already)
        out.flags.writeable = False
    return out


def tf_to_torch(x: Any) -> Any:
    # The calls torch's and TF's DLPack wrappers end in.
    if not _is_eager(x):
        raise _snapshot(x, tf_to_torch)
    return torch_from_capsule(tf_capsule(x))


def tf_to_jax(x: Any) -> Any:
    # The import jnp.from_dlpack ends in (TF >= 2.16 exports __dlpack__, without a
    # stream argument); older TF gives only a capsule, wrapped as a producer object. Both zero-copy.
    if not _is_eager(x):
        raise _snapshot(x, tf_to_jax)
    if hasattr(x, "__dlpack__"):
        return jax_from_dlpack(x, stream_ok=False)
    return jax_from_dlpack(_Capsule(tf_capsule(x), x.__dlpack_device__()), stream_ok=False)


class _Capsule:
    # TF's to_dlpack gives a bare capsule; JAX and NumPy want a producer object.
    __slots__ = ("cap", "dev")

    def __init__(self, cap: Any, dev: tuple[int, int]):
        self.cap, self.dev = cap, dev

    def __dlpack__(self, **kw: Any) -> Any:
        return self.cap

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.dev
