"""What ``ua.to`` refuses before any converter runs, and why: one place for every source library.

A handoff that would lose information (the autograd graph), reinterpret bytes (a
structured dtype read as another) or end in a framework's own error (a sparse layout, a dtype the
target has no code for) raises a typed error naming the fix instead. These checks run on the slow
paths only (a first handoff of a pair, a cache miss, a refusal of the native call); a cache hit or
an accepted native call never reaches them.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Any

from unarray._errors import DTypeError, HandoffError

__all__ = ["capsule_data", "check_source", "check_torch", "ml_dtype_name"]


# -- NumPy sources ----------------------------------------------------------------------------

_NP_KINDS = {"O": "Python objects", "S": "bytes", "U": "str", "M": "datetime64", "m": "timedelta64"}


def _numpy(x: Any, dst: str) -> None:
    dt = x.dtype
    what = _NP_KINDS.get(dt.kind)
    if what is None and dt.kind == "V" and ml_dtype_name(dt) is None:
        what = "a structured record" if dt.fields is not None else "raw bytes (void)"
    if what is not None:
        raise DTypeError(
            f"a NumPy array of dtype {dt} ({what}) has no counterpart in {dst}; convert it to a numeric dtype "
            "first (x.astype(...)), or pass one field of a structured array (x['name'])", backend=dst)


_ML_NAMES = frozenset({"bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                       "float8_e8m0fnu"})


def ml_dtype_name(dt: Any) -> str | None:
    """The name of an ml_dtypes dtype that torch also has (bfloat16, float8_*), else None."""
    t = getattr(dt, "type", None)
    if t is None or not getattr(t, "__module__", "").startswith("ml_dtypes"):
        return None
    return dt.name if dt.name in _ML_NAMES else None


# -- torch sources ----------------------------------------------------------------------------

def _torch(x: Any, dst: str) -> None:
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
        # Note: as torch's own .numpy(): a writable alias outside autograd lets a write corrupt a later
        # backward(). Under torch.no_grad() or torch.inference_mode() the tensor goes over detached.
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


# -- TensorFlow sources -----------------------------------------------------------------------

def _tensorflow(x: Any, dst: str) -> None:
    dt = x.dtype
    if getattr(dt, "name", "") in ("string", "resource", "variant"):
        raise DTypeError(f"a TensorFlow tensor of dtype {dt.name} has no counterpart in {dst}; convert it "
                         "with TensorFlow's own ops first", backend=dst)


check_torch = _torch
_CHECKS: dict[str, Callable[[Any, str], None]] = {"numpy": _numpy, "torch": _torch, "tensorflow": _tensorflow}


def check_source(src: str, x: Any, dst: str, op: str) -> None:
    """Raise the typed error ``ua.to`` gives for a source it refuses to hand to ``dst`` (nothing else).

    A handoff within one library (a device move, a copy) keeps what the library keeps: nothing is
    checked there. (A NumPy masked array never gets this far: the dispatcher refuses its type,
    NumpyBackend.plain_view, for ua.to as for every op.)"""
    check = _CHECKS.get(src) if src != dst else None
    if check is not None:
        try:
            check(x, dst)
        except (DTypeError, HandoffError) as e:
            raise type(e)(str(e), op=op, backend=dst) from None  # the checks name no op


# -- DLPack capsules --------------------------------------------------------------------------
# A capsule's DLTensor, read without consuming the capsule: where a consumer cannot take a buffer
# (TensorFlow aborts on an unaligned one), the capsule is dropped unconsumed and its deleter runs.

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
# Where DLTensor starts: DLManagedTensor begins with it; DLManagedTensorVersioned (DLPack 1.x) has
# version (8 bytes), manager_ctx, deleter and flags before it. In DLTensor, data is first and
# byte_offset follows data, device, ndim, dtype, shape and strides (40 bytes in).
_DL_TENSOR_AT = {b"dltensor": 0, b"dltensor_versioned": 32}
_BYTE_OFFSET_AT = 40
_FLAGS_AT = 24
READ_ONLY_FLAG = 1


def capsule_data(cap: Any) -> tuple[int, bool]:
    """(address of the first element, read-only flag) of an unconsumed DLPack capsule."""
    name = _get_name(cap)
    at = _DL_TENSOR_AT.get(name)
    if at is None:
        raise HandoffError(f"not an unconsumed DLPack capsule (named {name!r})")
    base = _get_pointer(cap, name) or 0
    data = ctypes.c_void_p.from_address(base + at).value or 0
    offset = ctypes.c_uint64.from_address(base + at + _BYTE_OFFSET_AT).value
    read_only = bool(at and ctypes.c_uint64.from_address(base + _FLAGS_AT).value & READ_ONLY_FLAG)
    return data + offset, read_only
