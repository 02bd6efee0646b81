"""Numba's side of a handoff: device arrays built directly over another library's memory (the CUDA
array interface's fields, without Numba's slower public path), its copies, and the fast paths with
torch, CuPy and JAX. Imports Numba through sys.modules on first use."""

from __future__ import annotations

import functools
from typing import Any

from unarray._backends._handoff import FastPath, Handoff, LazyNumpy, OtherDevice, count_sync, mod
from unarray._errors import DTypeError

np = LazyNumpy(globals())

def count_cai_wait(x: Any) -> None:
    # The consumer of a __cuda_array_interface__ synchronizes the stream it names. A Numba array
    # names its own stream (0: none); reading the attribute spares building the interface twice.
    try:
        stream = x.stream if type(x).__module__.startswith("numba") else x.__cuda_array_interface__.get("stream")
    except Exception:
        return
    if stream not in (None, 0):
        count_sync()


@functools.cache
def numba_stream() -> int:
    """The raw stream Numba launches on: its default stream, legacy (0) or per-thread, fixed for the process."""
    try:
        return int(mod("numba.cuda").default_stream().handle.value or 0)
    except Exception:
        return 0


def to_numba(x: Any) -> Any:
    # A Numba device array over any producer's memory (its CUDA array interface, else CuPy's DLPack import,
    # still zero-copy).
    if not hasattr(x, "__cuda_array_interface__"):
        x = mod("cupy").from_dlpack(x)
    count_cai_wait(x)
    return mod("numba.cuda").as_cuda_array(x)


def _from_torch(torch: Handoff) -> FastPath:
    plain, np_dtype_of, wait = torch.plain, torch.np_dtype, torch.stream_wait

    def to_numba(x: Any) -> Any:
        # A Numba device array built directly (_numba_maker), not numba.cuda.as_cuda_array's slower path.
        x = plain(x)
        wait(x, HANDOFF)
        np_dtype = np_dtype_of(x.dtype)
        if x.is_cuda and np_dtype is not None:
            # The interface torch's property would build (a Python property, with checks unarray has
            # made), without a stream: the wait above ordered it.
            # strides None for a C-contiguous tensor, as torch's own interface gives: Numba then
            # skips its strided-layout checks.
            item = np_dtype.itemsize
            strides = None if x.is_contiguous() else tuple(st * item for st in x.stride())
            return numba_array(x.data_ptr(), tuple(x.shape), strides, np_dtype, x, x.get_device())
        count_cai_wait(x)
        return mod("numba.cuda").as_cuda_array(x)

    return FastPath(to_numba, order=lambda dst: torch.order_for(HANDOFF),
                    order_reads=lambda dst, sp: torch.order_reads_for(HANDOFF, sp))


def _from_jax(jax: Handoff) -> FastPath:
    one_device, dlpack_device, export_capsule = jax.one_device, jax.dlpack_device, jax.export_capsule

    def jax_to_numba(x: Any) -> Any:
        return _jax_to_numba(x, one_device, dlpack_device, export_capsule)

    return FastPath(jax_to_numba)


def _jax_to_numba(x: Any, one_device: Any, dlpack_device: Any, export_capsule: Any) -> Any:
    # Note: JAX's __cuda_array_interface__ (what numba.cuda.as_cuda_array reads) names no stream and
    # does not wait for the array's pending work (xla/python/py_array.cc, CudaArrayInterface), so Numba
    # could read the memory before JAX had written it (docs/design-notes.md). JAX's DLPack export with
    # Numba's stream makes that stream wait for the array instead (no host synchronize), and its capsule,
    # held with the array as the view's owner, keeps the buffer while the view lives; the interface describes it.
    x, platform = one_device(x)
    if platform == "cpu":
        raise OtherDevice("Numba device arrays live on the GPU")
    stream = numba_stream() or 1  # DLPack's 1: the legacy default stream
    cap = export_capsule(x, stream)
    if cap is None:
        cap = x.__dlpack__(stream=stream)
    try:
        cai = x.__cuda_array_interface__
    except AttributeError as e:  # a dtype Numba has no type for (bfloat16), or a sharded array
        raise DTypeError(f"Numba cannot take this JAX array: {e}", backend="numba") from None
    index = dlpack_device(x)[1]
    return numba_array(cai["data"][0], cai["shape"], None, np.dtype(cai["typestr"]), (cap, x), index)


def _from_cupy(cupy: Handoff) -> FastPath:
    cupy_stream = cupy.consumer_stream

    def cupy_to_numba(x: Any) -> Any:
        # cuda.as_cuda_array(cupy) reads CuPy's interface, whose stream it then synchronizes from the
        # host. Here Numba's stream waits on an event recorded on CuPy's current stream (only where the
        # two differ), and the interface is built from the array's own fields.
        cp = mod("cupy")
        consumer = numba_stream()
        if cupy_stream(0) != consumer:
            ev = cp.cuda.Event(block=False, disable_timing=True)
            ev.record()
            cp.cuda.runtime.streamWaitEvent(consumer, ev.ptr, 0)
            count_sync()
        return numba_array(x.data.ptr, x.shape, x.strides, x.dtype, x, x.device.id)

    return FastPath(cupy_to_numba)


def numba_array(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...] | None, dtype: Any, owner: Any,
                device: int) -> Any:
    """``numba.cuda.from_cuda_array_interface`` of these fields with ``sync=False`` (the caller ordered
    the streams): a Numba device array over ``owner``'s memory on GPU ``device``, holding ``owner``.

    The public call spends most of its time finding the current context and asking the driver for
    the pointer it already has; built here from the context of the array's own device (found once)
    and Numba's pointer type (docs/design-notes.md). Where a probe of that build fails (another
    Numba), the public call is made."""
    if device not in _NUMBA_MAKERS:
        _NUMBA_MAKERS[device] = _numba_maker(device)
    make = _NUMBA_MAKERS[device]
    if make is not None:
        return make(ptr, shape, strides, dtype, owner)
    desc = {"shape": shape, "strides": strides, "typestr": dtype.str, "data": (ptr, False), "version": 2}
    return mod("numba.cuda").from_cuda_array_interface(desc, owner=owner, sync=False)


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
        size_of: Any = driver.memory_size_from_info  # numba's driver is untyped
        MemoryPointer: Any = driver.MemoryPointer
        DeviceNDArray: Any = devicearray.DeviceNDArray
        host = np.arange(12, dtype=np.float32).reshape(3, 4)
        with nc.gpus[device]:
            probe = nc.to_device(host)
        ptr = probe.device_ctypes_pointer.value
        # Numba's pointer type (a handle or c_void_p)
        pointer = type(driver.get_devptr_for_active_ctx(ptr))  # type: ignore[no-untyped-call]

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
    # cupy.asarray(numba) reads Numba's interface, a Python property that also tests
    # contiguity. On Numba's default stream (nothing to order) the view is built from the array's
    # own fields, as for torch (_cupy_view); an array bound to a stream takes cupy.asarray, which
    # synchronizes that stream (counted).
    if x.stream == 0:
        ptr = x.device_ctypes_pointer.value
        if ptr is not None:
            cp = mod("cupy")
            try:
                device = int(x.gpu_data.context.device.id)
            except AttributeError:
                device = int(mod("numba.cuda").get_current_device().id)
            mem = cp.cuda.UnownedMemory(ptr, x.alloc_size, x, device)
            return cp.ndarray(x.shape, x.dtype, cp.cuda.MemoryPointer(mem, 0), x.strides)
    count_cai_wait(x)
    return mod("cupy").asarray(x)


def _to_torch(torch: Handoff) -> FastPath:
    adopt_capsule = torch.adopt_capsule

    def numba_to_torch(x: Any) -> Any:
        # torch.as_tensor(numba) reads Numba's interface property. On Numba's
        # default stream, the CuPy view of it (numba_to_cupy) goes to torch as a bare DLPack capsule;
        # as with the interface, nothing is ordered (Numba names no stream).
        if x.stream == 0 and x.device_ctypes_pointer.value is not None:
            return adopt_capsule(numba_to_cupy(x).__dlpack__())
        count_cai_wait(x)
        return mod("torch").as_tensor(x)  # the interface's pointer names the device

    return FastPath(numba_to_torch)


def _to_jax(jax: Handoff) -> FastPath:
    adopt = jax.adopt

    def numba_to_jax(x: Any) -> Any:
        # JAX reads DLPack only: hand it a CuPy view (zero-copy) of the Numba array.
        return adopt(numba_to_cupy(x))

    return FastPath(numba_to_jax)


class NumbaHandoff(Handoff):
    name = "numba"
    writable_only = True
    uploads = True
    noun = "Numba device arrays"
    copies_into = "cupy"
    # (signature None: a Numba device array's pointer, shape and strides are fixed at construction)
    fast_to = {"cupy": FastPath(numba_to_cupy), "torch": _to_torch, "jax": _to_jax}
    fast_from = {"torch": _from_torch, "cupy": _from_cupy, "jax": _from_jax}

    def adopt(self, producer: Any) -> Any:
        return to_numba(producer)

    def owned_copy(self, alias: Any) -> Any:
        cuda = mod("numba.cuda")
        out = cuda.device_array(alias.shape, dtype=alias.dtype)
        out.copy_to_device(alias)
        return out

    def compact_copy(self, x: Any, backend: Any) -> Any:
        cp = mod("cupy")
        return cp.array(cp.asarray(x), copy=True)

    def data_ptr(self, x: Any) -> int | None:
        return int(x.__cuda_array_interface__["data"][0])

    def host(self, x: Any) -> Any:
        return x.copy_to_host()

    def upload(self, y: Any, index: int) -> Any:
        cp = mod("cupy")
        with cp.cuda.Device(index):
            return mod("numba.cuda").as_cuda_array(cp.asarray(y))

    def consumer_stream(self, index: int) -> int:
        return numba_stream()

    def stream_reads(self, speedups: Any) -> tuple[Any, Any] | None:
        return (numba_stream(), None)


HANDOFF = NumbaHandoff()
