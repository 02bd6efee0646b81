"""CuPy's side of a handoff: its import and copies, its signature, the CUDA stream order of handoffs
that build a view themselves (the consumer's stream waits on an event, no synchronize), and the fast
paths with torch and JAX. Imports CuPy through sys.modules on first use.

Streams: DLPack consumers (torch/cupy/jax from_dlpack) pass their current stream to __dlpack__, and
the producer makes that stream wait on an event. __cuda_array_interface__ consumers (cupy.asarray,
numba.cuda.as_cuda_array) read the interface's "stream" and wait on that one stream only (counted in
stats()["syncs"]). Where a converter builds the view itself (torch -> CuPy, torch -> Numba), it orders
the streams itself, and so does every cache hit of those pairs (FastPath.order)."""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from unarray._backends._handoff import FastPath, Handoff, LazyNumpy, OtherDevice, count_sync, ml_dtype, mod
from unarray._backends.jax.handoff import jax_capsule, jax_dlpack_device, jax_single
from unarray._backends.torch.handoff import torch_from_capsule, torch_plain, torch_raw_stream
from unarray._errors import DTypeError

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyNumpy(globals())


def consumer_stream(dst: str) -> int:
    """The raw stream a consumer reads on by default: CuPy's current stream, Numba's default stream."""
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


def torch_stream_wait(x: Any, dst: str) -> None:
    """Stream order without a synchronize: the consumer's stream waits on an event recorded on torch's
    current stream (the producer's pending work), only where the two streams differ. The check runs on
    every cache hit too (the producer may have written since), so it reads raw handles."""
    if not x.is_cuda:
        return
    consumer = consumer_stream(dst)
    if torch_raw_stream(x.get_device()) == consumer:
        return
    torch = mod("torch")
    producer = torch.cuda.current_stream(x.device)
    if dst == "cupy":
        ev = producer.record_event()  # held until the wait is queued: a dropped event is destroyed at once
        mod("cupy").cuda.runtime.streamWaitEvent(consumer, ev.cuda_event, 0)
        del ev
    elif consumer == 0:
        # Note: torch.cuda.ExternalStream(0) is not the legacy default stream (a wait there is lost);
        # default_stream() is stream 0.
        torch.cuda.default_stream(x.device).wait_stream(producer)
    else:
        torch.cuda.ExternalStream(consumer, device=x.device).wait_stream(producer)
    count_sync()


def torch_order(dst: str) -> Callable[[Any, str], None]:
    """torch_stream_wait's check written out for a cache hit: one raw-handle compare when the two streams
    already agree (the common case), the event wait otherwise."""
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
    numba_stream = consumer_stream(dst)

    def order_numba(x: Any, dst: str) -> None:
        if x.is_cuda and raw(x.get_device()) != numba_stream:
            torch_stream_wait(x, dst)

    return order_numba


def torch_order_reads(dst: str, speedups: Any) -> tuple[Any, ...] | None:
    """torch_order's check as the reads the C route makes (_speedups.c, order_streams): (torch's raw
    stream of a device, the consumer's stream or what gives it for a device, the attribute holding its
    handle, the wait)."""
    raw = getattr(mod("torch")._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        return None
    if dst == "cupy":
        reader = cupy_stream_reader(speedups)
        if reader is not None:
            return (raw, reader, None, torch_stream_wait)
        return (raw, mod("cupy").cuda.get_current_stream, "ptr", torch_stream_wait)
    return (raw, consumer_stream(dst), None, torch_stream_wait)


def cupy_stream_reader(speedups: Any) -> Any:
    """CuPy's exported C function giving its current stream on a device, for the C route's stream
    order (``speedups.stream_of(reader, device)``), or None where it does not read what
    ``cupy.cuda.get_current_stream(device).ptr`` reads (another CuPy, no GPU): the route then reads
    that, as before. Called directly, it spares finding the Stream object and reading its handle.

    Probed on the current device: on the current stream, and inside an external stream's scope (a
    handle nothing runs on: entering it creates no stream and calls no CUDA API, so a probe during a
    CUDA graph capture cannot break the capture)."""
    try:
        cuda = mod("cupy").cuda
        reader = importlib.import_module("cupy_backends.cuda.stream").__pyx_capi__["get_stream_ptr"]
        dev = cuda.runtime.getDevice()
        if speedups.stream_of(reader, dev) != cuda.get_current_stream(dev).ptr:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # CuPy 14 deprecates ExternalStream
            external = cuda.ExternalStream(_PROBE_HANDLE, dev)
        with external:
            if not speedups.stream_of(reader, dev) == _PROBE_HANDLE == cuda.get_current_stream(dev).ptr:
                return None
        if speedups.stream_of(reader, dev) != cuda.get_current_stream(dev).ptr:
            return None
    except Exception:
        return None
    return reader


_PROBE_HANDLE = 0x5EED0  # never a stream of the process: CUDA's handles are heap pointers, or 0 to 2


# -- the fast paths with torch and JAX ----------------------------------------------------------

def torch_to_cupy(x: Any) -> Any:
    # cupy.asarray queries the pointer's attributes, slow on a tensor a kernel is still writing, so the
    # view is built from the pointer with the device given (no pointer-attribute query). torch's
    # interface names no stream, so the consumer's stream is ordered after torch's here.
    x = torch_plain(x)
    if not x.is_cuda:
        raise OtherDevice("CuPy arrays live on the GPU")  # cupy.asarray would copy
    torch_stream_wait(x, "cupy")
    np_dtype = torch_np_dtype(x.dtype)
    if np_dtype is None and x.dtype == mod("torch").bfloat16:
        # Note: torch's CUDA array interface names bfloat16 "<V2", so cupy.asarray of it gives a raw void
        # array (no arithmetic, no astype: CuPy's kernels fail to compile for it); ml_dtypes' bfloat16 is the
        # dtype CuPy computes with.
        with contextlib.suppress(DTypeError):  # no ml_dtypes: the interface's view, as before
            np_dtype = ml_dtype("bfloat16", "numpy")
    if np_dtype is not None:
        return _cupy_view(x, np_dtype)
    return mod("cupy").asarray(x)


_TORCH_TO_NP: dict[Any, Any] = {}


def torch_np_dtype(dtype: Any) -> Any:
    """The NumPy dtype of a torch dtype that CUDA array interfaces can name, else None (bfloat16)."""
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
    # torch._C._from_dlpack(x.__dlpack__()): faster than torch.as_tensor and torch.from_dlpack. The bare
    # capsule names no stream, so it is taken only when both libraries are on the same stream;
    # otherwise torch.from_dlpack's stream exchange makes torch's stream wait on CuPy's.
    if consumer_stream("cupy") == torch_raw_stream(x.device.id):
        return torch_from_capsule(x.__dlpack__())
    return mod("torch").from_dlpack(x)


def jax_to_cupy(x: Any) -> Any:
    # cupy.from_dlpack(jax) goes through JAX's Python __dlpack__; here CuPy gets the
    # export JAX's wrapper ends in, still naming CuPy's stream for JAX to order.
    x, platform = jax_single(x)
    if platform == "cpu":
        raise OtherDevice("CuPy arrays live on the GPU")
    return mod("cupy").from_dlpack(_JaxExport(x))


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


def _sig_cupy(x: Any) -> Any:
    # Note: of a CuPy array's pointer, shape, strides and dtype only the shape can be assigned in
    # place (a reshape, which also sets the strides); the others are read-only attributes.
    return (x.shape,)


class CupyHandoff(Handoff):
    name = "cupy"
    writable_only = True
    uploads = True
    noun = "CuPy arrays"
    signature = staticmethod(_sig_cupy)
    signature_reads = (("shape", False),)
    imports_device = True
    fast_to = {"torch": FastPath(cupy_to_torch)}
    fast_from = {
        "torch": FastPath(torch_to_cupy, order=torch_order, order_reads=torch_order_reads),
        "jax": FastPath(jax_to_cupy),
    }

    def adopt(self, producer: Any) -> Any:
        return mod("cupy").from_dlpack(producer)

    def owned_copy(self, alias: Any) -> Any:
        return alias.copy()

    def compact_copy(self, x: Any, backend: Any) -> Any:
        if not x.flags.c_contiguous:
            from unarray._kernels.layout_route import contiguous

            return contiguous(backend, x)  # ua.ascontiguousarray's route (its tiled transpose where it wins)
        return mod("cupy").array(x, copy=True, order="C")

    def data_ptr(self, x: Any) -> int | None:
        return int(x.data.ptr)

    def upload(self, y: Any, index: int) -> Any:
        cp = mod("cupy")
        with cp.cuda.Device(index):
            return cp.asarray(y)

    def host(self, x: Any) -> Any:
        return x.get()

    def consumer_stream(self, index: int) -> int:
        return consumer_stream(self.name)


HANDOFF = CupyHandoff()
