# Handoff machinery behind ua.to: the per-pair path table, the weak cache, the
# stream rule and copy accounting. Frameworks are reached through sys.modules
# (the source's library is already imported; the target was named by the caller).
#
# Path table: (source, target) -> converter chosen from measurements. CPU figures
# are medians on the 2-core dev VM (1024x1024 float32, loaded machine; see
# benchmarks/results/handoff_cpu.md); CUDA figures are from the H100 issue report
# and are re-measured by benchmarks/gpu/handoff_gpu.py.
#
# Streams (CUDA): DLPack consumers (torch/cupy/jax from_dlpack) pass their current
# stream to __dlpack__, and the producer makes that stream wait on an event: no
# host or device-wide synchronize. __cuda_array_interface__ consumers (cupy.asarray,
# numba.cuda.as_cuda_array) read the interface's "stream" and wait on that one
# stream only; unarray counts such a wait in stats()["syncs"].
from __future__ import annotations

import ctypes
import functools
import importlib
import sys
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from unarray._entry import (
    jax_capsule,
    jax_from_dlpack,
    tf_capsule,
    tf_from_capsule,
    tf_from_export,
    torch_from_capsule,
)

if TYPE_CHECKING:
    import numpy as np
else:

    class _LazyNumpy:
        # Note: importing unarray imports no array library, NumPy included; the first handoff does,
        # and then replaces this stand-in with the module itself.
        def __getattr__(self, name: str) -> Any:
            import numpy

            globals()["np"] = numpy
            return getattr(numpy, name)

    np = _LazyNumpy()

# Note: torch has no read-only tensors; a view of a read-only array aliases it as torch.from_numpy
# does, so its warning is silenced for calls made from the handoff modules only (torch warns from
# C, where the module is the caller's file path rather than its dotted name).
warnings.filterwarnings("ignore", message="The given NumPy array is not writable", category=UserWarning,
                        module=r"(.*[/\\])?unarray[./\\](_handoff|interop)")

STATS = {"handoffs": 0, "zero_copy": 0, "copies": 0, "bytes_copied": 0, "syncs": 0, "cache_hits": 0}
lock = threading.Lock()


class NeedsCopy(Exception):
    """The target cannot alias this source (layout, alignment, read-only, dtype)."""


class OtherDevice(NeedsCopy):
    """The target cannot hold arrays on the source's device: a move the caller asks for (device=)."""


def mod(name: str) -> Any:
    m = sys.modules.get(name)
    return m if m is not None else importlib.import_module(name)


# -- source-side views ----------------------------------------------------------------------

def _np_writable(x: Any) -> Any:
    # Note: JAX's DLPack import refuses read-only exports; JAX never writes into an imported
    # buffer, so a writable alias of the same memory (keeping x alive) is safe to hand it.
    if x.flags.writeable:
        return x
    import ctypes

    nbytes = max(1, x.nbytes)
    lo = x.__array_interface__["data"][0]
    buf = (ctypes.c_char * nbytes).from_address(lo)
    buf._keep = x  # type: ignore[attr-defined]
    return np.ndarray(x.shape, x.dtype, buffer=buf, strides=x.strides)


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
    # An ndarray's data pointer: 0.54 us through __array_struct__ vs 1.0 us for __array_interface__ (a dict).
    return _read_pointer(_capsule_pointer(x.__array_struct__, None) + _DATA_AT).value or 0


def _torch_plain(x: Any) -> Any:
    # Note: autograd-tracked, conjugate-view and negative-view tensors refuse DLPack/numpy export.
    if x.requires_grad:
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


_BF16_NP: Any = None


def _ml_bf16() -> Any:
    global _BF16_NP
    if _BF16_NP is None:
        import ml_dtypes

        _BF16_NP = np.dtype(ml_dtypes.bfloat16)
    return _BF16_NP


# -- zero-copy converters, per pair ----------------------------------------------------------
# Each takes the source and returns the target's array aliasing it, or raises NeedsCopy.

def np_to_torch(x: Any) -> Any:
    # torch.from_numpy 0.64 us vs torch.from_dlpack 1.50 us vs torch.as_tensor 1.58 us.
    # It refuses (TypeError/ValueError) exactly the cases handled below, so it is tried first.
    try:
        return mod("torch").from_numpy(x)
    except (TypeError, ValueError):
        pass
    torch = mod("torch")
    bf16 = _bf16_or_none()  # Note: not `x.dtype == None`, which NumPy reads as float64
    if x.dtype.kind == "V" or (bf16 is not None and x.dtype == bf16):
        return torch.from_numpy(x.view(np.uint16)).view(torch.bfloat16)
    if any(s < 0 for s in x.strides):
        raise NeedsCopy("torch tensors cannot have negative strides")
    if not x.dtype.isnative:
        raise NeedsCopy("torch has no byte-swapped dtypes")
    raise NeedsCopy(f"torch.from_numpy refuses dtype {x.dtype}")


def _bf16_or_none() -> Any:
    return _BF16_NP if _BF16_NP is not None else (_ml_bf16() if "ml_dtypes" in sys.modules else None)


def torch_to_np(x: Any) -> Any:
    # Tensor.numpy() 0.81 us vs np.asarray 1.28 us vs np.from_dlpack 2.45 us. It refuses
    # (RuntimeError/TypeError) the grad, conj/neg-bit, GPU and bfloat16 cases handled below.
    try:
        return x.numpy()
    except (RuntimeError, TypeError):
        pass
    x = _torch_plain(x)
    if x.device.type != "cpu":
        raise OtherDevice("NumPy arrays live on the CPU")
    if x.dtype is mod("torch").bfloat16:
        return x.view(mod("torch").uint16).numpy().view(_ml_bf16())
    return x.numpy()


def np_to_jax(x: Any) -> Any:
    # jnp.from_dlpack 24.4 us (CPU), the import it ends in 3.3 us (see unarray/_entry.py); zero-copy
    # where the buffer is 64-byte aligned, else JAX refuses (copy=False) and ua.to copies once.
    # jax.device_put always copies (29 us+).
    _check_x64(x)
    f = x.flags
    if not (f.c_contiguous or x.size <= 1) and not _is_permutation(x):
        raise NeedsCopy("JAX imports only compact buffers")
    if x.dtype.kind == "V":
        raise NeedsCopy("NumPy's bfloat16 (ml_dtypes) has no DLPack code")
    return jax_from_dlpack(x if f.writeable else _np_writable(x))


def torch_to_jax(x: Any) -> Any:
    # jnp.from_dlpack: CPU 30.1 us, the import 5.9 us; H100 93 us (issue report). On CUDA, JAX's
    # stream for external events is passed to __dlpack__, so torch orders its pending work before it.
    _check_x64(x)
    return jax_from_dlpack(_torch_plain(x))


def to_jax(x: Any) -> Any:
    # CuPy and other DLPack producers (jnp.from_dlpack(cupy) 50 us on the H100, issue report).
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
    return str(x.platform())


def jax_to_np(x: Any) -> Any:
    # np.asarray(jax) 0.80 us (a read-only view; JAX arrays are immutable) vs np.from_dlpack 2.65 us.
    # On an accelerator np.asarray would copy to the host: that is a device change (ua.to device="cpu").
    if _jax_platform(x) != "cpu":
        raise OtherDevice("NumPy arrays live on the CPU")
    return np.asarray(x)


def jax_to_torch(x: Any) -> Any:
    # torch.from_dlpack 4.9 us CPU vs JAX's export + torch._C._from_dlpack 1.0 us. On CUDA the export
    # names torch's current stream, as torch.from_dlpack does, so JAX orders its work before it.
    # Note: torch gets a writable alias of an immutable JAX buffer (as with torch.from_dlpack
    # itself); writing into it changes the JAX array.
    if _jax_platform(x) == "cpu":
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
    # tf.experimental.dlpack.from_dlpack(x.__dlpack__()) 0.95 us, TFE_FromDlpackCapsule 0.75 us
    # (zero-copy) vs tf.convert_to_tensor 265 us (a copy). TF refuses strided buffers and needs
    # aligned ones (the pointer read, 0.5 us, is the price of not aborting).
    f = x.flags
    if not (f.c_contiguous or x.size <= 1):
        raise NeedsCopy("TensorFlow imports only C-contiguous buffers")
    if x.size and np_ptr(x) % TF_ALIGN:
        raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
    return tf_from_capsule((x if f.writeable else _np_writable(x)).__dlpack__())


def torch_to_tf(x: Any) -> Any:
    # Tensor.__dlpack__ 2.1 us (Python) vs torch.utils.dlpack.to_dlpack 0.3 us on the CPU.
    x = _torch_plain(x)
    if not x.is_contiguous():
        raise NeedsCopy("TensorFlow imports only C-contiguous buffers")
    if x.data_ptr() % TF_ALIGN and x.numel():
        raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
    return tf_from_capsule(x.__dlpack__() if x.is_cuda else mod("torch").utils.dlpack.to_dlpack(x))


def jax_to_tf(x: Any) -> Any:
    cpu = _jax_platform(x) == "cpu"
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
    return tf_from_capsule(x.__dlpack__())


_TF_ON_CPU: dict[str, bool] = {}


def tf_to_np(x: Any) -> Any:
    # np.asarray(tf_cpu_tensor) 0.66 us, EagerTensor._numpy() 0.45 us, both zero-copy on the CPU;
    # Tensor.numpy() 92 us (a copy).
    dev = x.device
    cpu = _TF_ON_CPU.get(dev)
    if cpu is None:
        cpu = _TF_ON_CPU[dev] = "CPU" in (dev or "CPU").upper()
    if not cpu:
        raise OtherDevice("NumPy arrays live on the CPU")
    try:
        return x._numpy()
    except AttributeError:  # not an EagerTensor (a tf.Variable)
        return np.asarray(x)


def tf_to_torch(x: Any) -> Any:
    # torch.utils.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(t)) 1.08 us; the calls they end
    # in 0.86 us.
    return torch_from_capsule(tf_capsule(x))


def tf_to_jax(x: Any) -> Any:
    # jnp.from_dlpack(t) 15.4 us, the import 4.1 us (TF >= 2.16 exports __dlpack__, without a
    # stream argument); older TF gives only a capsule, wrapped as a producer object. Both zero-copy.
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


def torch_to_cupy(x: Any) -> Any:
    # cupy.asarray via __cuda_array_interface__ 13 us vs cupy.from_dlpack 28 us (H100); but on a
    # tensor a kernel is still writing (a fresh attention output) cupy.asarray took ~350 us, so the
    # view is built from the pointer with the device given (no pointer-attribute query). torch's
    # interface names no stream, so the consumer's stream is ordered after torch's here.
    x = _torch_plain(x)
    if not x.is_cuda:
        raise OtherDevice("CuPy arrays live on the GPU")  # cupy.asarray would copy
    torch_stream_wait(x, "cupy")
    np_dtype = _torch_np_dtype(x.dtype)
    if np_dtype is not None:
        return _cupy_view(x, np_dtype)
    return mod("cupy").asarray(x)


_TORCH_TO_NP: dict[Any, Any] = {}


def _torch_np_dtype(dtype: Any) -> Any:
    # The NumPy dtype of a torch dtype that CUDA array interfaces can name, else None (bfloat16).
    if not _TORCH_TO_NP:
        torch = mod("torch")
        for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
                     "complex64", "complex128"):
            _TORCH_TO_NP[getattr(torch, name)] = np.dtype(name)
    return _TORCH_TO_NP.get(dtype)


def _cupy_view(x: Any, np_dtype: Any) -> Any:
    cp = mod("cupy")
    item = np_dtype.itemsize
    shape, strides = tuple(x.shape), x.stride()
    span = 0 if x.numel() == 0 else (sum((n - 1) * st for n, st in zip(shape, strides, strict=True)) + 1) * item
    mem = cp.cuda.UnownedMemory(x.data_ptr(), span, x, x.device.index)  # owner x: the tensor outlives the view
    return cp.ndarray(shape, np_dtype, cp.cuda.MemoryPointer(mem, 0), tuple(st * item for st in strides))


def cupy_to_torch(x: Any) -> Any:
    # On the H100 (one run, a slow host): torch._C._from_dlpack(x.__dlpack__()) 3.5 us vs
    # torch.as_tensor (the CUDA array interface) 10.9 us vs torch.from_dlpack 17.8 us. The bare
    # capsule names no stream, so it is taken only when both libraries are on the same stream;
    # otherwise torch.from_dlpack's stream exchange makes torch's stream wait on CuPy's.
    if _consumer_stream("cupy") == torch_raw_stream(x.device.id):
        return torch_from_capsule(x.__dlpack__())
    return mod("torch").from_dlpack(x)


def to_numba(x: Any) -> Any:
    # numba.cuda.as_cuda_array 13-22 us (H100) from torch/cupy through __cuda_array_interface__.
    if type(x).__module__.startswith("torch"):
        x = _torch_plain(x)
        torch_stream_wait(x, "numba")
        np_dtype = _torch_np_dtype(x.dtype)
        if x.is_cuda and np_dtype is not None:
            # The interface torch's property would build (a Python property, with checks unarray has
            # made), without a stream: the wait above ordered it.
            # strides None for a C-contiguous tensor, as torch's own interface gives: Numba then
            # skips its strided-layout checks.
            item = np_dtype.itemsize
            strides = None if x.is_contiguous() else tuple(st * item for st in x.stride())
            return numba_array(x.data_ptr(), tuple(x.shape), strides, np_dtype, x, x.get_device())
    elif not hasattr(x, "__cuda_array_interface__"):
        # A DLPack-only producer: through CuPy's DLPack import (still zero-copy).
        x = mod("cupy").from_dlpack(x)
    count_cai_wait(x)
    return mod("numba.cuda").as_cuda_array(x)


def jax_to_numba(x: Any) -> Any:
    # Note: JAX's __cuda_array_interface__ (what numba.cuda.as_cuda_array reads) names no stream and
    # does not wait for the array's pending work (xla/python/py_array.cc, CudaArrayInterface): on the
    # H100, under load from another process, Numba read the memory before JAX had written it
    # (benchmarks/gpu/jax_numba_diag.py). JAX's DLPack export with Numba's stream makes that stream
    # wait for the array instead (no host synchronize), and its capsule, the view's owner, holds the
    # buffer for as long as the view lives; the interface then only describes the memory.
    if _jax_platform(x) == "cpu":
        raise OtherDevice("Numba device arrays live on the GPU")
    stream = _consumer_stream("numba") or 1  # DLPack's 1: the legacy default stream
    cap = jax_capsule(x, stream)
    if cap is None:
        cap = x.__dlpack__(stream=stream)
    try:
        cai = x.__cuda_array_interface__
    except AttributeError as e:  # a dtype Numba has no type for (bfloat16), or a sharded array
        from unarray._errors import DTypeError

        raise DTypeError(f"Numba cannot take this JAX array: {e}", backend="numba") from None
    index = jax_dlpack_device(x)[1]
    return numba_array(cai["data"][0], cai["shape"], None, np.dtype(cai["typestr"]), _Held(cap, x), index)


class _Held:
    # The owner of a Numba view of a JAX array: the DLPack export (its deleter lets JAX free the
    # buffer) and the array.
    __slots__ = ("cap", "x")

    def __init__(self, cap: Any, x: Any):
        self.cap, self.x = cap, x


def cupy_to_numba(x: Any) -> Any:
    # cuda.as_cuda_array(cupy) reads CuPy's interface, whose stream it then synchronizes from the
    # host. Here Numba's stream waits on an event recorded on CuPy's current stream (only where the
    # two differ), and the interface is built from the array's own fields.
    cp = mod("cupy")
    consumer = _consumer_stream("numba")
    if _consumer_stream("cupy") != consumer:
        ev = cp.cuda.Event(block=False, disable_timing=True)
        ev.record()
        cp.cuda.runtime.streamWaitEvent(consumer, ev.ptr, 0)
        with lock:
            STATS["syncs"] += 1
    return numba_array(x.data.ptr, x.shape, x.strides, x.dtype, x, x.device.id)


def numba_array(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...] | None, dtype: Any, owner: Any,
                device: int) -> Any:
    """``numba.cuda.from_cuda_array_interface`` of these fields with ``sync=False`` (the caller ordered
    the streams): a Numba device array over ``owner``'s memory on GPU ``device``, holding ``owner``.

    The public call took 11.8 us on the H100, of which 3.9 us went to finding the current context
    and 1.6 us to asking the driver for the pointer it already has; built here from the context of
    the array's own device (found once) and Numba's pointer type, 2.9 us (benchmarks/gpu/handoff_gpu.py,
    "entry"). Where a probe of that build fails (another Numba), the public call is made."""
    make = _NUMBA_MAKERS.get(device, _UNSET)
    if make is _UNSET:
        make = _NUMBA_MAKERS[device] = _numba_maker(device)
    if make is not None:
        return make(ptr, shape, strides, dtype, owner)
    desc = {"shape": shape, "strides": strides, "typestr": dtype.str, "data": (ptr, False), "version": 2}
    return mod("numba.cuda").from_cuda_array_interface(desc, owner=owner, sync=False)


_UNSET = object()
_NUMBA_MAKERS: dict[int, Any] = {}


def _numba_maker(device: int) -> Any:
    # The direct build for one device, or None where its probe fails. What from_cuda_array_interface
    # does with a stream-less interface, with its context and pointer found once:
    # MemoryPointer (numba.cuda's class for memory it does not own; public for external memory
    # managers) and DeviceNDArray, with C-order strides filled in as prepare_shape_strides_dtype does.
    try:
        nc = mod("numba.cuda")
        from numba.cuda.cudadrv import devicearray, driver

        ctx = nc.gpus[device].get_primary_context()
        size_of = driver.memory_size_from_info
        MemoryPointer, DeviceNDArray = driver.MemoryPointer, devicearray.DeviceNDArray
        host = np.arange(12, dtype=np.float32).reshape(3, 4)
        with nc.gpus[device]:
            probe = nc.to_device(host)
        ptr = probe.device_ctypes_pointer.value
        pointer = type(driver.get_devptr_for_active_ctx(ptr))  # Numba's pointer type (a handle or c_void_p)

        def make(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...] | None, dtype: Any, owner: Any) -> Any:
            if strides is None:
                strides = _c_strides(shape, dtype.itemsize)
            mem = MemoryPointer(ctx, pointer(ptr), size=size_of(shape, strides, dtype.itemsize), owner=owner)
            return DeviceNDArray(shape=shape, strides=strides, dtype=dtype, gpu_data=mem, stream=0)

        got = make(ptr, (3, 2), (16, 8), host.dtype, probe)
        ok = (got.device_ctypes_pointer.value == ptr and got.shape == (3, 2) and got.strides == (16, 8)
              and got.copy_to_host().tolist() == host[:, ::2].tolist()
              and make(ptr, (3, 4), None, host.dtype, probe).strides == host.strides)
        return make if ok else None
    except Exception:
        return None


def _c_strides(shape: tuple[int, ...], item: int) -> tuple[int, ...]:
    # C-order strides as Numba fills them in (_fill_stride_by_order; a zero extent gives zeros).
    out, step = [], item
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def numba_to_cupy(x: Any) -> Any:
    # cupy.asarray(numba) 5.6 us (H100) reads Numba's interface, a Python property that also tests
    # contiguity. On Numba's default stream (nothing to order) the view is built from the array's
    # own fields, as for torch (_cupy_view); an array bound to a stream takes cupy.asarray, which
    # synchronizes that stream (counted).
    if x.stream == 0:
        ptr = x.device_ctypes_pointer.value
        if ptr is not None:
            cp = mod("cupy")
            mem = cp.cuda.UnownedMemory(ptr, x.alloc_size, x, _numba_device_id(x))
            return cp.ndarray(x.shape, x.dtype, cp.cuda.MemoryPointer(mem, 0), x.strides)
    count_cai_wait(x)
    return mod("cupy").asarray(x)


def _numba_device_id(x: Any) -> int:
    try:
        return int(x.gpu_data.context.device.id)
    except AttributeError:
        return int(mod("numba.cuda").get_current_device().id)


def numba_to_torch(x: Any) -> Any:
    # torch.as_tensor(numba) 12.4 us (H100, a slow host) reads Numba's interface property. On Numba's
    # default stream, the CuPy view of it (numba_to_cupy) goes to torch as a bare DLPack capsule;
    # as with the interface, nothing is ordered (Numba names no stream).
    if x.stream == 0 and x.device_ctypes_pointer.value is not None:
        return torch_from_capsule(numba_to_cupy(x).__dlpack__())
    count_cai_wait(x)
    return mod("torch").as_tensor(x)  # the interface's pointer names the device


def jax_to_cupy(x: Any) -> Any:
    # cupy.from_dlpack(jax) 8.4 us (H100) goes through JAX's Python __dlpack__; here CuPy gets the
    # export JAX's wrapper ends in (unarray/_entry.py), still naming CuPy's stream for JAX to order.
    if _jax_platform(x) == "cpu":
        raise OtherDevice("CuPy arrays live on the GPU")
    return mod("cupy").from_dlpack(_JaxExport(x))


_JAX_DL_DEVICE: dict[Any, Any] = {}


def jax_dlpack_device(x: Any) -> tuple[int, int]:
    # x.__dlpack_device__() 4.4 us (H100 host): read once per JAX device and memory kind (an array in
    # pinned host memory exports as host memory). A single-device sharding names its device:
    # sharding._device and memory_kind 0.19 us on the dev VM, against x.device's 0.53.
    s = x.sharding
    try:
        key = (s._device, s.memory_kind)
    except AttributeError:
        key = (x.device, s.memory_kind)
    out = _JAX_DL_DEVICE.get(key)
    if out is None:
        out = _JAX_DL_DEVICE[key] = tuple(x.__dlpack_device__())
    return out


class _JaxExport:
    # A DLPack producer for CuPy: JAX's direct export, with the stream CuPy asks for.
    __slots__ = ("x",)

    def __init__(self, x: Any):
        self.x = x

    def __dlpack_device__(self) -> tuple[int, int]:
        return jax_dlpack_device(self.x)

    def __dlpack__(self, stream: Any = None, **kw: Any) -> Any:
        cap = jax_capsule(self.x, stream)
        return self.x.__dlpack__(stream=stream, **kw) if cap is None else cap


def numba_to_jax(x: Any) -> Any:
    # JAX reads DLPack only: hand it a CuPy view (zero-copy) of the Numba array.
    return to_jax(numba_to_cupy(x))


def _consumer_stream(dst: str) -> int:
    # The raw stream a consumer reads on by default: CuPy's current stream, Numba's default stream.
    if dst == "cupy":
        if not _CUPY_STREAM:
            _CUPY_STREAM.append(mod("cupy").cuda.get_current_stream)
        return int(_CUPY_STREAM[0]().ptr)
    if not _NUMBA_STREAM:
        # Numba launches on its default stream: legacy (0) or per-thread, fixed for the process.
        try:
            _NUMBA_STREAM.append(int(mod("numba.cuda").default_stream().handle.value or 0))
        except Exception:
            _NUMBA_STREAM.append(0)
    return _NUMBA_STREAM[0]


_NUMBA_STREAM: list[int] = []
_CUPY_STREAM: list[Any] = []
_TORCH_RAW_STREAM: list[Any] = []


def torch_raw_stream(index: int) -> int:
    # torch's current CUDA stream as a handle: torch._C._cuda_getCurrentRawStream (what compiled
    # kernels launch on) builds no Stream object, unlike torch.cuda.current_stream().
    if not _TORCH_RAW_STREAM:
        torch = mod("torch")
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _TORCH_RAW_STREAM.append(raw or (lambda i: torch.cuda.current_stream(i).cuda_stream))
    return int(_TORCH_RAW_STREAM[0](index))


def torch_stream_wait(x: Any, dst: str) -> None:
    # Stream order without a synchronize: the consumer's stream waits on an event recorded on torch's
    # current stream (the producer's pending work), only where the two streams differ. The check
    # runs on every cache hit too (the producer may have written since), so it reads raw handles.
    if not x.is_cuda:
        return
    consumer = _consumer_stream(dst)
    if torch_raw_stream(x.get_device()) == consumer:
        return
    torch = mod("torch")
    producer = torch.cuda.current_stream(x.device)
    if dst == "cupy":
        ev = producer.record_event()  # held until the wait is queued: a dropped event is destroyed at once
        mod("cupy").cuda.runtime.streamWaitEvent(consumer, ev.cuda_event, 0)
        del ev
    elif consumer == 0:
        # Note: torch.cuda.ExternalStream(0) is not the legacy default stream (torch 2.11 gave another
        # handle, and the wait went there: stale reads on the H100); default_stream() is stream 0.
        torch.cuda.default_stream(x.device).wait_stream(producer)
    else:
        torch.cuda.ExternalStream(consumer, device=x.device).wait_stream(producer)
    with lock:
        STATS["syncs"] += 1


# (source, target) pairs whose handoff orders streams itself (no DLPack stream exchange): a cache
# hit must order them again, since the producer may have written since.
def _torch_order(dst: str) -> Callable[[Any, str], None]:
    # torch_stream_wait's check written out for a cache hit: one raw-handle compare when the two
    # streams already agree (the common case), the event wait otherwise.
    raw = getattr(mod("torch")._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        return torch_stream_wait
    if dst == "cupy":
        # CuPy's current stream on the tensor's device: named, it spares CuPy asking for the current one.
        current = mod("cupy").cuda.get_current_stream

        def order(x: Any, dst: str) -> None:
            if x.is_cuda:
                dev = x.get_device()
                if raw(dev) != current(dev).ptr:
                    torch_stream_wait(x, dst)

        return order
    numba_stream = _consumer_stream("numba")

    def order_numba(x: Any, dst: str) -> None:
        if x.is_cuda and raw(x.get_device()) != numba_stream:
            torch_stream_wait(x, dst)

    return order_numba


def _torch_order_reads(dst: str, speedups: Any) -> tuple[Any, ...] | None:
    # _torch_order's check as the reads the C route makes (unarray/_speedups.c, order_streams):
    # (torch's raw stream of a device, the consumer's stream or what gives it for a device, the
    # attribute holding its handle, the wait).
    raw = getattr(mod("torch")._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        return None
    if dst == "cupy":
        reader = cupy_stream_reader(speedups)
        if reader is not None:
            return (raw, reader, None, torch_stream_wait)
        return (raw, mod("cupy").cuda.get_current_stream, "ptr", torch_stream_wait)
    return (raw, _consumer_stream("numba"), None, torch_stream_wait)


def cupy_stream_reader(speedups: Any) -> Any:
    """CuPy's exported C function giving its current stream on a device (a capsule the C route calls,
    about 60 ns less per torch->CuPy hit than get_current_stream(device).ptr on the dev VM), or None.

    Probed before use: on the current device it must give what get_current_stream gives, on the
    default stream and inside a new stream's scope; else (another CuPy, no GPU) the C route reads
    get_current_stream(device).ptr, as before."""
    try:
        cuda = mod("cupy").cuda
        reader = importlib.import_module("cupy_backends.cuda.stream").__pyx_capi__["get_stream_ptr"]
        dev = cuda.runtime.getDevice()
        with cuda.Device(dev):
            if speedups.stream_of(reader, dev) != cuda.get_current_stream(dev).ptr:
                return None
            side = cuda.Stream(non_blocking=True)
            with side:
                if not speedups.stream_of(reader, dev) == side.ptr == cuda.get_current_stream(dev).ptr != 0:
                    return None
            if speedups.stream_of(reader, dev) != cuda.get_current_stream(dev).ptr:
                return None
    except Exception:
        return None
    return reader


STREAM_ORDERED = {("torch", "cupy"): _torch_order, ("torch", "numba"): _torch_order}
ORDER_READS = {("torch", "cupy"): _torch_order_reads, ("torch", "numba"): _torch_order_reads}


def count_cai_wait(x: Any) -> None:
    # The consumer of a __cuda_array_interface__ synchronizes the stream it names. A Numba array
    # names its own stream (0: none); reading the attribute spares building the interface twice.
    try:
        stream = x.stream if type(x).__module__.startswith("numba") else x.__cuda_array_interface__.get("stream")
    except Exception:
        return
    if stream not in (None, 0):
        with lock:
            STATS["syncs"] += 1


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


def path_name(src: str, dst: str) -> str:
    """The converter ``ua.to`` takes for this pair, for ``ua.explain``."""
    fn = path(src, dst)
    return f"DLPack ({dst}'s from_dlpack)" if fn.__name__ == "conv" else f"unarray._handoff.{fn.__name__}"


# -- source-side compact copies (one copy, then a zero-copy path) ----------------------------

def compact_copy(src: str, x: Any) -> Any:
    if src == "numpy":
        return aligned_copy(x)
    if src == "torch":
        x = x.detach().resolve_conj().resolve_neg()
        return x.clone(memory_format=mod("torch").contiguous_format)
    if src == "cupy":
        return mod("cupy").array(x, copy=True, order="C")
    if src == "jax":
        return mod("jax.numpy").array(x, copy=True)
    if src == "tensorflow":
        return aligned_copy(np.asarray(x))
    if src == "numba":
        return mod("cupy").array(mod("cupy").asarray(x), copy=True)
    raise NeedsCopy(f"no copy path from {src}")


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
    # Note: an ndarray's pointer moves only through resize(), which changes the shape and is
    # refused while a view (ours) holds the array; shape, strides and dtype are assignable in place.
    return (x.shape, x.strides, x.dtype)


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
# compared as read (tests/test_speedups.py holds them equal to the functions above).
SIGNATURE_READS: dict[str, tuple[tuple[str, bool], ...]] = {
    "torch": (("data_ptr", True), ("shape", False), ("stride", True), ("dtype", False)),
    "numpy": (("shape", False), ("strides", False), ("dtype", False)),
    "jax": (("is_deleted", True),),
    "cupy": (("shape", False),),
}


class CheckedSig(tuple):
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


def c_signature(lib: str, fn: Callable[[Any], Any] | None) -> tuple[Any, Any]:
    """For the C route: (the signature function store() keeps, what a hit reads in C) of a library's
    arrays, from its signature function fn (None: nothing can change, nothing is read)."""
    if fn is None:
        return None, None
    chk = checked(lib)
    if chk is not None:
        return chk, CHECKED_READS[lib]
    return fn, SIGNATURE_READS.get(lib, fn)


# Pairs whose converter is always zero-copy and costs about a microsecond or less: a cache
# lookup would cost as much, so they are not cached (measured on the dev VM, see each converter).
UNCACHED = frozenset({
    ("numpy", "torch"), ("torch", "numpy"), ("jax", "numpy"), ("tensorflow", "numpy"), ("tensorflow", "torch"),
})


# Uncached pairs whose converter starts with one native call: the route calls it directly, and
# only what it refuses goes through the converter.
FIRST: dict[tuple[str, str], Callable[[], Callable[[Any], Any]]] = {
    ("numpy", "torch"): lambda: mod("torch").from_numpy,
    ("torch", "numpy"): lambda: mod("torch").Tensor.numpy,
}


# The guards of unarray/_speedups.c (guard_passes): (GUARD_ATTR, type or None, attribute, call it?,
# {value: True}) and (GUARD_BUFFER, alignment).
GUARD_ATTR, GUARD_BUFFER = 1, 2


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
    ("tensorflow", "numpy"): lambda sp: ((GUARD_ATTR, _tf_eager(), "device", False, _TF_ON_CPU),
                                         _tf_eager()._numpy_internal),
    # np_to_tf: a writable, C-contiguous, TF_ALIGN-aligned buffer (cached route: a first sight only).
    ("numpy", "tensorflow"): lambda sp: ((GUARD_BUFFER, TF_ALIGN), tf_from_export),
}


class Route:
    """What ua.to does for one (source library, target library): converter, cache keys, stream order."""

    __slots__ = ("cached", "compiling", "conv", "counts", "dst", "fast", "first", "order", "osig", "sig", "src")

    def __init__(self, src: str, dst: str, compiling: Callable[[], bool] | None):
        self.src, self.dst, self.conv = src, dst, path(src, dst)
        self.cached = (src, dst) not in UNCACHED
        first = FIRST.get((src, dst))
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
