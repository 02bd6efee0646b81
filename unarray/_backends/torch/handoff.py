"""torch's side of a handoff: its refusals, its exports (Tensor.numpy, the DLPack capsule) and imports
(torch.from_numpy, the capsule import), its copies and signatures, and the fast paths with NumPy.
Imports torch through sys.modules (the caller's tensor, or the caller naming torch, loaded it)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from unarray._backends._handoff import GUARD_WRITABLE as _GUARD_WRITABLE
from unarray._backends._handoff import (
    ML_NAMES,
    FastPath,
    Handoff,
    LazyNumpy,
    NeedsCopy,
    OtherDevice,
    count_sync,
    ml_dtype,
    ml_dtype_name,
    mod,
)
from unarray._backends._host import aligned_copy, writable_view
from unarray._errors import DTypeError, HandoffError

np = LazyNumpy(globals())

_TORCH_RAW_STREAM: list[Any] = []


def torch_raw_stream(index: int) -> int:
    # (torch._C._cuda_getCurrentRawStream builds no Stream object, unlike torch.cuda.current_stream())
    if not _TORCH_RAW_STREAM:
        torch = mod("torch")
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _TORCH_RAW_STREAM.append(raw or (lambda i: torch.cuda.current_stream(i).cuda_stream))
    return int(_TORCH_RAW_STREAM[0](index))


_TORCH: list[Any] = []


def torch_from_capsule(cap: Any) -> Any:
    """``torch.utils.dlpack.from_dlpack`` of a bare capsule (the call torch's wrapper ends in)."""
    if not _TORCH:
        torch = sys.modules["torch"]
        _TORCH.append(getattr(torch._C, "_from_dlpack", None) or torch.utils.dlpack.from_dlpack)
    return _TORCH[0](cap)


def check_torch(x: Any, dst: str) -> None:
    """The typed refusals of a torch tensor handed to ``dst``."""
    dtensor = sys.modules.get("torch.distributed.tensor")
    if dtensor is not None and isinstance(x, dtensor.DTensor):
        # Note: a DTensor's data is spread over processes; no handoff gathers it behind the caller's back.
        raise HandoffError(
            f"this torch DTensor is distributed over a DeviceMesh {tuple(x.device_mesh.shape)} with placements "
            f"{tuple(x.placements)}, so handing it to {dst} would need a gather or would drop the other shards; "
            "pass x.full_tensor() (gathers the whole array on every rank) or x.to_local() (this rank's shard)",
            backend=dst)
    torch = sys.modules["torch"]
    if x.requires_grad and torch.is_grad_enabled():
        # Note: as torch's own .numpy(): a writable alias outside autograd could corrupt a later backward().
        raise HandoffError(
            f"this torch tensor requires grad, so handing it to {dst} would escape autograd (torch's .numpy() "
            "refuses it too); pass x.detach() (or x.detach().clone() for an independent copy), or hand it over "
            "under torch.no_grad()", backend=dst)
    if x.layout is not torch.strided:
        raise HandoffError(
            f"a torch tensor with layout {x.layout} has no dense buffer to share with {dst}; pass x.to_dense()",
            backend=dst)
    if x.is_quantized:
        raise DTypeError(
            f"a quantized torch tensor ({x.dtype}) has no counterpart in {dst}; pass x.dequantize() for its "
            "values, or x.int_repr() for the stored integers", backend=dst)
    name = str(x.dtype).rpartition(".")[2]
    if name == "complex32":
        raise DTypeError(f"torch.complex32 has no DLPack code, so {dst} cannot hold it; pass "
                         "x.to(torch.complex64)", backend=dst)
    if name.startswith("float8") and dst not in ("numpy", "jax"):
        raise DTypeError(f"{dst} has no {name} dtype; pass x.to(torch.float16) or x.view(torch.uint8)",
                         backend=dst)


def torch_plain(x: Any) -> Any:
    """``x`` as it can be exported: detached (refused while grad mode is on), no lazy conj/neg bit."""
    # Note: conjugate-view and negative-view tensors refuse DLPack/numpy export (a copy resolves the bit).
    if x.requires_grad:
        check_torch(x, "another library")
        x = x.detach()
    if x.is_conj() or x.is_neg():
        raise NeedsCopy("torch tensor carries a lazy conjugate/negation bit")
    return x


# -- the fast paths with NumPy ------------------------------------------------------------------

def np_to_torch(x: Any) -> Any:
    # torch.from_numpy, the fastest import, refuses exactly the cases handled below: it is tried first.
    if not x.flags.writeable:
        raise NeedsCopy(_READ_ONLY)
    torch = mod("torch")
    try:
        return torch.from_numpy(x)
    except (TypeError, ValueError):
        pass
    if min(x.strides, default=0) < 0:
        raise NeedsCopy("torch tensors cannot have negative strides")
    ml = ml_dtype_name(x.dtype)  # bfloat16 and float8 (ml_dtypes): the same bits, viewed
    if ml is not None:
        bits = np.uint16 if x.dtype.itemsize == 2 else np.uint8
        return torch.from_numpy(x.view(bits)).view(getattr(torch, ml))
    if not x.dtype.isnative:
        raise NeedsCopy("torch has no byte-swapped dtypes")
    raise NeedsCopy(f"torch.from_numpy refuses dtype {x.dtype}")


# Note: torch has no read-only tensors, and writing through an alias of read-only memory (a mode='r'
# memmap) kills the process: a read-only array is copied (counted), or refused under copy=False.
_READ_ONLY = ("torch tensors cannot be read-only, and this NumPy array is (a write would crash or change the "
              "owner's data)")


def np_to_torch_promised(x: Any) -> Any:
    # ua.to(..., readonly=True): the caller promised not to write, so a read-only array is aliased too.
    return np_to_torch(writable_view(x))


def np_to_torch_first() -> Callable[[Any], Any]:
    # The route's first call on the Python path (the C route guards torch.from_numpy the same way).
    from_numpy = mod("torch").from_numpy

    def first(x: Any) -> Any:
        if not x.flags.writeable:
            raise NeedsCopy(_READ_ONLY)
        return from_numpy(x)

    return first


def torch_to_np(x: Any) -> Any:
    # Tensor.numpy(), the fastest export, refuses exactly the cases handled below: it is tried first.
    try:
        return x.numpy()
    except (RuntimeError, TypeError):
        pass
    x = torch_plain(x)
    if x.device.type != "cpu":
        raise OtherDevice("NumPy arrays live on the CPU")
    name = str(x.dtype).rpartition(".")[2]
    if name in ML_NAMES:  # bfloat16 and float8: ml_dtypes' NumPy dtype of the same bits
        torch = mod("torch")
        return x.view(torch.uint16 if x.element_size() == 2 else torch.uint8).numpy().view(ml_dtype(name, "numpy"))
    return x.numpy()


# -- the weak cache's signatures ----------------------------------------------------------------

def sig_torch(x: Any) -> Any:
    # resize_()/set_() change pointer, shape or strides in place (a device move changes the pointer); a tensor
    # that gains requires_grad must meet a fresh handoff's refusal.
    return (x.data_ptr(), x.shape, x.stride(), x.dtype, x.requires_grad)


class CheckedSig(tuple[Any, ...]):
    # (data_ptr, guard, shape, strides, dtype, requires_grad): the guard is torch.compile's own metadata check
    # (TensorGuards), one C++ call in place of the reads; where it says no (also where only the thread's autograd
    # state differs) the C route compares the reads as without it. Python compares all but the guard.

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CheckedSig) and self[0] == other[0] and self[2:] == other[2:]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


def torch_checked() -> Callable[[Any], Any] | None:
    # None where this torch's guard is missing or misses what a signature must catch (probed on views).
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
        ptr, *meta = sig_torch(x)
        return CheckedSig((ptr, guard, *meta))

    return sig


# -- stream order for a consumer that builds its view of a CUDA tensor itself (CuPy, Numba) -----------------
# Such a view names no stream: the consumer's stream waits on an event of torch's current one where they differ,
# checked on every cache hit too (the producer may have written since), so through raw handles.

def torch_stream_wait(x: Any, consumer: Handoff) -> None:
    if not x.is_cuda:
        return
    stream = consumer.consumer_stream(x.get_device())
    if torch_raw_stream(x.get_device()) == stream:
        return
    torch = mod("torch")
    producer = torch.cuda.current_stream(x.device)
    if consumer.waits_on_events:
        ev = producer.record_event()  # held until the wait is queued: a dropped event is destroyed at once
        consumer.wait_event(stream, ev.cuda_event)
        del ev
    elif stream == 0:
        # Note: torch.cuda.ExternalStream(0) is not the legacy default stream (a wait there is lost).
        torch.cuda.default_stream(x.device).wait_stream(producer)
    else:
        torch.cuda.ExternalStream(stream, device=x.device).wait_stream(producer)
    count_sync()


def torch_order(consumer: Handoff) -> Callable[[Any, str], None]:
    # torch_stream_wait's check for a cache hit: one raw-handle compare where the streams agree (the common case).
    raw = getattr(mod("torch")._C, "_cuda_getCurrentRawStream", None)

    if raw is None:
        return _waiter(consumer)
    current = consumer.current_stream

    def order(x: Any, dst: str) -> None:
        if x.is_cuda:
            dev = x.get_device()
            if raw(dev) != current(dev):
                torch_stream_wait(x, consumer)

    return order


def torch_order_reads(consumer: Handoff, speedups: Any) -> tuple[Any, ...] | None:
    # torch_order's check as the C route's reads (_speedups.c, order_streams).
    raw = getattr(mod("torch")._C, "_cuda_getCurrentRawStream", None)
    reads = consumer.stream_reads(speedups)
    if raw is None or reads is None:
        return None
    return (raw, *reads, _waiter(consumer))


def _waiter(consumer: Handoff) -> Callable[[Any, str], None]:
    return lambda x, dst: torch_stream_wait(x, consumer)


_TORCH_TO_NP: dict[Any, Any] = {}


def torch_np_dtype(dtype: Any) -> Any:
    """The NumPy dtype of a torch dtype that CUDA array interfaces can name, else None (bfloat16)."""
    if not _TORCH_TO_NP:
        torch = mod("torch")
        for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
                     "complex64", "complex128"):
            _TORCH_TO_NP[getattr(torch, name)] = np.dtype(name)
    return _TORCH_TO_NP.get(dtype)


_READS = (("data_ptr", True), ("shape", False), ("stride", True), ("dtype", False), ("requires_grad", False))


class TorchHandoff(Handoff):
    name = "torch"
    writable_only = True
    noun = "torch tensors"
    signature = staticmethod(sig_torch)
    signature_reads = _READS
    checked_signature = staticmethod(torch_checked)
    # Read kind Ellipsis: where x.check(...) of the stored guard is True, the reads after it are skipped.
    checked_reads = (_READS[0], ("check", Ellipsis), *_READS[1:])
    imports_device = True
    fast_to = {
        # Tensor.numpy, uncached (a lookup would cost as much); the C route calls it first.
        "numpy": FastPath(torch_to_np, cached=False, first=lambda: mod("torch").Tensor.numpy),
    }
    fast_from = {
        "numpy": FastPath(np_to_torch, cached=False, first=np_to_torch_first,
                          # torch.from_numpy on a writable array only (a read-only one is copied)
                          guard=lambda sp: ((_GUARD_WRITABLE, 0), mod("torch").from_numpy),
                          promised=np_to_torch_promised),
    }

    def adopt(self, producer: Any) -> Any:
        return mod("torch").from_dlpack(producer)

    adopt_capsule = staticmethod(torch_from_capsule)
    plain = staticmethod(torch_plain)
    consumer_stream = staticmethod(torch_raw_stream)
    np_dtype = staticmethod(torch_np_dtype)
    stream_wait = staticmethod(torch_stream_wait)
    order_for = staticmethod(torch_order)
    order_reads_for = staticmethod(torch_order_reads)
    check_source = staticmethod(check_torch)

    def owned_copy(self, alias: Any) -> Any:
        return alias.clone()

    def compact_copy(self, x: Any, backend: Any) -> Any:
        x = x.detach().resolve_conj().resolve_neg()
        if x.is_cuda and not x.is_contiguous():
            # ua.ascontiguousarray's route: its tiled transpose where that beats torch's strided copy
            return backend.ascontiguousarray(x)
        return x.clone(memory_format=mod("torch").contiguous_format)

    def copy_for(self, x: Any, dst: str, backend: Any) -> tuple[Any, str]:
        # Note: to JAX or TensorFlow through NumPy onto a 64-byte boundary (one memcpy), but where Tensor.clone
        # spreads a large copy over torch's threads (docs/design-notes.md).
        torch = mod("torch")
        if (dst in ("jax", "tensorflow") and x.device.type == "cpu"
                and (x.numel() * x.element_size() <= 1 << 20 or torch.get_num_threads() <= 2)):
            try:
                view = x.detach().resolve_conj().resolve_neg().numpy()
            except (RuntimeError, TypeError):
                pass
            else:
                return aligned_copy(view), "numpy"
        return self.compact_copy(x, backend), self.name

    def move_within(self, x: Any, device: Any, backend: Any) -> Any:
        return x.to(device)

    def data_ptr(self, x: Any) -> int | None:
        return int(x.data_ptr())

    def nbytes(self, x: Any) -> int:
        return int(x.numel() * x.element_size())

    def host(self, x: Any) -> Any:
        return x.detach().cpu().resolve_conj().resolve_neg().numpy()


HANDOFF = TorchHandoff()
