"""The stream order of CUDA handoffs: a consumer never reads before the producer's pending work.

Streams: DLPack consumers (torch/cupy/jax from_dlpack) pass their current stream to __dlpack__, and
the producer makes that stream wait on an event: no host or device-wide synchronize.
__cuda_array_interface__ consumers (cupy.asarray, numba.cuda.as_cuda_array) read the interface's
"stream" and wait on that one stream only; unarray counts such a wait in stats()["syncs"]. Where a
converter builds the view itself (torch -> CuPy, torch -> Numba), it orders the streams itself, and
so does every cache hit of those pairs (STREAM_ORDERED)."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

from unarray.interop._common import STATS, lock, mod, torch_raw_stream


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
        # Note: torch.cuda.ExternalStream(0) is not the legacy default stream (a wait there is lost);
        # default_stream() is stream 0.
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
    # _torch_order's check as the reads the C route makes (_speedups.c, order_streams):
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
