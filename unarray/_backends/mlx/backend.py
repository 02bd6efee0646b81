# The MLX backend class: devices (MLX's arrays live in unified memory and run on MLX's default device),
# dtypes (no float64 on the GPU, no complex128 anywhere), handoff (MLX copies what it imports), ua.at and
# ua.apply_numpy, and the hot ops. The array-API namespace itself is xp.py's.
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mlx.core as mx
import numpy as np

from unarray._backends import updates
from unarray._backends._base import Backend, dtype_named
from unarray._backends._info import Info
from unarray._backends._nn import Plan
from unarray._backends.mlx import IMMUTABLE, NAME, attention, creation, dtypes, linalg, statistical
from unarray._backends.mlx.compile import MLXCompiler
from unarray._backends.mlx.xp import XP
from unarray._devices import Device, parse_device, register_native
from unarray._dtypes import SPEC_DTYPE_NAMES
from unarray._errors import ArgumentError, DTypeError, UnsupportedError


def _gpu_kind() -> str:
    # Note: MLX's GPU is Metal on Apple silicon and CUDA (mlx-cuda) elsewhere; both are "gpu" to MLX.
    return "cuda" if getattr(mx, "cuda", None) is not None and mx.cuda.is_available() else "mps"


def device_from_mlx(d: Any) -> Device:
    return Device("cpu") if d.type == mx.DeviceType.cpu else Device(_gpu_kind(), getattr(d, "index", 0))


register_native(mx.Device, device_from_mlx)


class MLXBackend(Backend):
    name = NAME
    xp = XP
    native = mx
    immutable = IMMUTABLE
    compiler = MLXCompiler()

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, mx.array)

    # Note: an MLX array has no device of its own (unified memory): it is computed on the default device.
    def device_of(self, x: Any) -> Device:
        return device_from_mlx(mx.default_device())

    def native_device(self, device: Any) -> Any:
        if device is None or isinstance(device, mx.Device):
            return device
        d = device if isinstance(device, Device) else parse_device(device)
        if d is None:
            raise ArgumentError(f"not a device: {device!r}", backend=self.name)
        if d.kind == "cpu":
            return mx.Device(mx.cpu)
        if d.kind in ("cuda", "mps", "gpu"):
            return mx.Device(mx.gpu, d.index)
        raise ArgumentError(f"MLX runs on its CPU and its GPU, not on {d}", backend=self.name)

    def devices(self) -> list[Device]:
        out = [Device("cpu")]
        if mx.is_available(mx.gpu):
            out.append(Device(_gpu_kind(), 0))
        return out

    def dtype(self, d: Any) -> Any:
        if d is None:
            return None
        return self._on_device(dtypes.native(d if isinstance(d, mx.Dtype) else dtype_named(d, self.name)), None)

    def _on_device(self, d: Any, device: Any) -> Any:
        # Note: MLX's GPU has no float64; refused here, before MLX fails at evaluation.
        dev = device_from_mlx(device) if isinstance(device, mx.Device) else \
            device_from_mlx(mx.default_device()) if device is None else device
        if d == mx.float64 and dev.kind != "cpu":
            raise DTypeError(f"MLX's GPU ({dev}) has no float64; use float32 there, or compute on the CPU "
                             "(ua.asarray(..., device='cpu'))", backend=self.name)
        return d

    def namespace_dtypes(self) -> dict[str, Any]:
        # Note: MLX's Dtype.__eq__ is False for anything but its own dtypes (and raises beside None), so generic code's
        # x.dtype == xp.float32 holds only with MLX's dtypes in the namespace: NamespaceDtype, which also takes None.
        return dict(dtypes.NAMESPACE_DT)

    def dtype_name(self, x: Any) -> str:
        return dtypes.name(x.dtype)

    def creation_device(self, x: Any) -> dict[str, Any]:
        return {}

    def default_dtypes(self, device: Any = None) -> dict[str, Any]:
        return {"real floating": dtypes.DEFAULT_FLOAT, "complex floating": dtypes.complex64,
                "integral": dtypes.DEFAULT_INT, "indexing": dtypes.INDEX}

    def dtype_names(self, device: Device) -> tuple[str, ...]:
        gone = ("complex128",) if device.kind == "cpu" else ("float64", "complex128")
        return tuple(n for n in SPEC_DTYPE_NAMES if n not in gone)

    # Note: MLX indexes with no boolean mask; nonzero and unique_* compute eagerly (refused inside mx.compile).
    def capabilities(self) -> dict[str, Any]:
        return {"boolean indexing": False, "data-dependent shapes": True, "max dimensions": None}

    # -- handoff --------------------------------------------------------------------------------
    def from_dlpack(self, x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
        return creation.from_dlpack(x, copy=copy)

    def asarray(self, obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Any:
        d, dev = dtypes.native(dtype), self.native_device(device)
        if d is not None:
            self._on_device(d, dev)
        out = creation.asarray(obj, dtype=d, device=dev, copy=copy)
        if device is not None:
            self._on_device(out.dtype, dev)
        return out

    def to_numpy(self, x: Any) -> Any:
        return np.array(x)

    def to_device(self, x: Any, device: Any) -> Any:
        self._on_device(x.dtype, self.native_device(device))
        return x

    # -- ua.at, ua.apply_numpy ---------------------------------------------------------------------
    def at_update(self, x: Any, idx: Any, op: str, v: Any, in_place: bool) -> Any:
        if in_place:
            raise UnsupportedError("MLX arrays are values (a write makes a new buffer): ua.at cannot write in "
                                   "place; leave copy unset", op=f"at.{op}", backend=self.name)
        v = dtypes.cast(dtypes.a(v), x.dtype)
        mask = updates.mask_of(idx, x.ndim)
        own = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
        if mask is None and isinstance(own, mx.array) and own.dtype == mx.bool_ and own.ndim == x.ndim:
            mask = own  # an MLX boolean mask (its dtype is not named "bool")
        if mask is not None:
            # Note: MLX indexes with no boolean mask: a full-shape mask is a where.
            return mx.where(dtypes.a(mask), v if op == "set" else updates.apply(mx, op, x, v), x)
        if op == "set":
            out = mx.array(x)
            out[idx] = v
            return out
        return getattr(x.at[idx], updates.UFUNC[op].__name__)(v)  # (MLX's ArrayAt applies every occurrence)

    def apply_numpy(self, call: Any, arrays: list[Any], shape: tuple[int, ...], dtype: Any) -> Any:
        out = call(*[np.array(a) for a in arrays])
        return creation.from_numpy(np.asarray(out), dtype)

    # -- explain, precision ------------------------------------------------------------------------
    def precision_used(self, policy: str, x: Any) -> str:
        return "float32 (MLX's matmul runs no reduced-precision passes on float32)"

    # -- hot ops ------------------------------------------------------------------------------------
    def matmul(self, x1: Any, x2: Any, policy: str) -> Any:
        # Fast path: the same float dtype, both at least 2-D: mx.matmul is the standard's matmul.
        if x1.dtype == x2.dtype and x1.dtype in dtypes.FLOATS and x1.ndim >= 2 and x2.ndim >= 2:
            return mx.matmul(x1, x2)
        return linalg.matmul(x1, x2)

    def sum(self, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        if dtype is None and x.dtype in dtypes.FLOATS and (axis is None or type(axis) is int):
            return statistical.total(mx.sum, x, axis, keepdims)
        return statistical.sum(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    def nn_erf(self) -> Any:  # the array API has no erf: MLX's own
        return mx.erf

    def attention_plan(self, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                       policy: str) -> Plan:
        if not spec.structured and attention.fast_applies(q, k, v, mask, spec.causal, layout):
            return attention.fast_plan(q, k, v, spec.causal, scale)
        return super().attention_plan(q, k, v, mask, spec, scale, layout, policy)


BACKEND = MLXBackend()

# Note: MLX has no inspection API of the standard's; this namespace's is unarray's, for MLX.
setattr(XP, "__array_namespace_info__", lambda: Info(BACKEND))  # noqa: B010 - a ModuleType built at run time

if TYPE_CHECKING:  # mypy checks the class against the contract, for its array type
    from unarray._backends._contract import BackendContract
    from unarray._backends.attention_masks import MaskSpec

    _contract: BackendContract[mx.array] = BACKEND
