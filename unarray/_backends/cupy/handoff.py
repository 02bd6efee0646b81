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
from typing import Any

from unarray._backends._handoff import FastPath, Handoff, OtherDevice, ml_dtype, mod
from unarray._errors import DTypeError


def current_stream() -> int:
    """CuPy's current stream on the current device: the raw stream a consumer of CuPy's reads on by default."""
    if not _CUPY_STREAM:
        _CUPY_STREAM.append(mod("cupy").cuda.get_current_stream)
    return int(_CUPY_STREAM[0]().ptr)


_CUPY_STREAM: list[Any] = []


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


# -- the fast paths with torch and JAX (each made from the other library's side: Handoff) ---------------------

def _from_torch(torch: Handoff) -> FastPath:
    plain, np_dtype_of, wait = torch.plain, torch.np_dtype, torch.stream_wait

    def torch_to_cupy(x: Any) -> Any:
        # cupy.asarray queries the pointer's attributes, slow on a tensor a kernel is still writing, so the
        # view is built from the pointer with the device given (no pointer-attribute query). torch's
        # interface names no stream, so the consumer's stream is ordered after torch's here.
        x = plain(x)
        if not x.is_cuda:
            raise OtherDevice("CuPy arrays live on the GPU")  # cupy.asarray would copy
        wait(x, HANDOFF)
        np_dtype = np_dtype_of(x.dtype)
        if np_dtype is None and x.dtype == mod("torch").bfloat16:
            # Note: torch's CUDA array interface names bfloat16 "<V2", so cupy.asarray of it gives a raw void
            # array (no arithmetic, no astype: CuPy's kernels fail to compile for it); ml_dtypes' bfloat16 is the
            # dtype CuPy computes with.
            with contextlib.suppress(DTypeError):  # no ml_dtypes: the interface's view, as before
                np_dtype = ml_dtype("bfloat16", "numpy")
        if np_dtype is not None:
            return _cupy_view(x, np_dtype)
        return mod("cupy").asarray(x)

    return FastPath(torch_to_cupy, order=lambda dst: torch.order_for(HANDOFF),
                    order_reads=lambda dst, sp: torch.order_reads_for(HANDOFF, sp))


def _cupy_view(x: Any, np_dtype: Any) -> Any:
    cp = mod("cupy")
    item = np_dtype.itemsize
    shape, strides = tuple(x.shape), x.stride()
    span = 0 if x.numel() == 0 else (sum((n - 1) * st for n, st in zip(shape, strides, strict=True)) + 1) * item
    mem = cp.cuda.UnownedMemory(x.data_ptr(), span, x, x.device.index)  # owner x: the tensor outlives the view
    return cp.ndarray(shape, np_dtype, cp.cuda.MemoryPointer(mem, 0), tuple(st * item for st in strides))


def _to_torch(torch: Handoff) -> FastPath:
    adopt, adopt_capsule, stream_of = torch.adopt, torch.adopt_capsule, torch.consumer_stream

    def cupy_to_torch(x: Any) -> Any:
        # torch._C._from_dlpack(x.__dlpack__()): faster than torch.as_tensor and torch.from_dlpack. The bare
        # capsule names no stream, so it is taken only when both libraries are on the same stream;
        # otherwise torch.from_dlpack's stream exchange makes torch's stream wait on CuPy's.
        if current_stream() == stream_of(x.device.id):
            return adopt_capsule(x.__dlpack__())
        return adopt(x)

    return FastPath(cupy_to_torch)


def _from_jax(jax: Handoff) -> FastPath:
    one_device, dlpack_device, export_capsule = jax.one_device, jax.dlpack_device, jax.export_capsule

    def jax_to_cupy(x: Any) -> Any:
        # cupy.from_dlpack(jax) goes through JAX's Python __dlpack__; here CuPy gets the
        # export JAX's wrapper ends in, still naming CuPy's stream for JAX to order.
        x, platform = one_device(x)
        if platform == "cpu":
            raise OtherDevice("CuPy arrays live on the GPU")
        return mod("cupy").from_dlpack(_JaxExport(x, dlpack_device, export_capsule))

    return FastPath(jax_to_cupy)


class _JaxExport:
    # A DLPack producer for CuPy: JAX's direct export, with the stream CuPy asks for.
    __slots__ = ("device", "export", "x")

    def __init__(self, x: Any, device: Callable[[Any], tuple[int, int]], export: Callable[..., Any]):
        self.x, self.device, self.export = x, device, export

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device(self.x)

    def __dlpack__(self, stream: Any = None, **kw: Any) -> Any:
        cap = self.export(self.x, stream)
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
    fast_to = {"torch": _to_torch}
    fast_from = {"torch": _from_torch, "jax": _from_jax}
    waits_on_events = True

    def adopt(self, producer: Any) -> Any:
        return mod("cupy").from_dlpack(producer)

    def owned_copy(self, alias: Any) -> Any:
        return alias.copy()

    def compact_copy(self, x: Any, backend: Any) -> Any:
        if not x.flags.c_contiguous:
            return backend.ascontiguousarray(x)  # ua.ascontiguousarray's route (its tiled transpose where it wins)
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
        return current_stream()

    def current_stream(self, index: int) -> int:
        # CuPy's current stream on the tensor's device: named, it spares CuPy asking for the current one.
        return int(mod("cupy").cuda.get_current_stream(index).ptr)

    def stream_reads(self, speedups: Any) -> tuple[Any, Any] | None:
        reader = cupy_stream_reader(speedups)
        return (reader, None) if reader is not None else (mod("cupy").cuda.get_current_stream, "ptr")

    def wait_event(self, stream: int, event: int) -> None:
        mod("cupy").cuda.runtime.streamWaitEvent(stream, event, 0)


HANDOFF = CupyHandoff()
