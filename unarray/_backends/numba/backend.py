# Numba CUDA device arrays: edge-only. unarray reads their device, names their
# backend and hands them to and from CuPy/torch zero-copy through
# __cuda_array_interface__; it does not compute on them (Numba has no array
# library), and every compute op raises UnsupportedError saying what to do.
# numba.cuda is imported lazily: importing this module needs no GPU or driver.
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from unarray._backends._base import Backend
from unarray._backends._contract import GENERIC, BackendContract
from unarray._backends._handoff import mod
from unarray._backends.numba import layout as _layout
from unarray._devices import Device
from unarray._dtypes import canonical_name
from unarray._errors import HandoffError, UnsupportedError

_ADVICE = ("Numba device arrays are inputs and outputs of handoff only; "
           "compute with ua.to(x, 'cupy') or ua.to(x, 'torch')")


def is_device_array_type(t: type) -> bool:
    # Decided from the class alone: numba.cuda's DeviceNDArray family (no numba import needed).
    return any(k.__name__ in ("DeviceNDArray", "DeviceNDArrayBase", "MappedNDArray", "DeviceRecord")
               and k.__module__.startswith("numba") for k in t.__mro__)


class NumbaBackend(Backend):
    name = "numba"
    xp = None
    native = None

    def __getattr__(self, op: str) -> Any:
        if op not in GENERIC:
            raise AttributeError(f"{type(self).__name__} has no {op!r}")
        raise UnsupportedError(_ADVICE, op=op, backend=self.name)

    def version(self) -> str:
        mod = sys.modules.get("numba")
        return str(getattr(mod, "__version__", "?"))

    def is_array_type(self, t: type) -> bool:
        return is_device_array_type(t)

    def device_of(self, x: Any) -> Device:
        # Note: the interface carries no device; the pointer's device is asked from the driver.
        ptr = int(x.__cuda_array_interface__["data"][0])
        return Device("cuda", _device_of_pointer(ptr))

    def devices(self) -> list[Device]:
        try:
            return [Device("cuda", d.id) for d in mod("numba.cuda").gpus]
        except Exception:
            return []

    def dtype(self, d: Any) -> Any:
        import numpy as np

        return None if d is None else np.dtype(canonical_name(d) or d)

    layout_route = staticmethod(_layout.route)  # ua.ascontiguousarray's route (layout.py)

    def to_numpy(self, x: Any) -> Any:
        return x.copy_to_host()

    def from_dlpack(self, x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
        # Handoff target: anything with __cuda_array_interface__ (CuPy, torch CUDA) becomes a view.
        if not hasattr(x, "__cuda_array_interface__"):
            if hasattr(x, "__dlpack__") and "cupy" in sys.modules:
                import cupy

                x = cupy.from_dlpack(x)
            else:
                raise HandoffError("Numba takes CUDA arrays with __cuda_array_interface__ only; "
                                   "hand a CPU array over with numba.cuda.to_device", backend=self.name)
        out = mod("numba.cuda").as_cuda_array(x)
        if copy:
            fresh = mod("numba.cuda").device_array_like(out)
            fresh.copy_to_device(out)
            return fresh
        return out

    def asarray(self, obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Any:
        if hasattr(obj, "__cuda_array_interface__"):
            return self.from_dlpack(obj, copy=copy)
        return mod("numba.cuda").to_device(obj)

    def precision_used(self, policy: str, x: Any) -> str:
        return "n/a (Numba device arrays are not computed on)"

    def attention_plan(self, *args: Any, **kwargs: Any) -> Any:
        # Reached only where no lender's fused kernels take the arrays (unarray/_lending.py): torch's, once imported.
        raise UnsupportedError(f"{_ADVICE}; or import torch (pip install torch): its fused kernels take them",
                               op="scaled_dot_product_attention", backend=self.name)


# Every hot op and ua.nn's (methods of Backend, so never reaching __getattr__) is a compute op: refused with the advice.
def _refusal(attr: str) -> Any:
    def refuse(self: NumbaBackend, *args: Any, **kwargs: Any) -> Any:
        raise UnsupportedError(_ADVICE, op=attr.replace("linalg_", "linalg.").replace("nn_", "nn."), backend=self.name)

    refuse.__name__, refuse.__qualname__ = attr, f"NumbaBackend.{attr}"  # (what ua.explain names)
    return refuse


for _op in ("matmul", "tensordot", "vecdot", "linalg_matrix_power", "matrix_transpose", "permute_dims", "sum", "prod",
            "mean", "var", "std", "min", "max", "argmin", "argmax", "any", "all", "cumulative_sum", "cumulative_prod",
            "nn_softmax", "nn_log_softmax", "nn_logsumexp", "nn_layer_norm", "nn_rms_norm", "nn_gelu", "nn_silu"):
    setattr(NumbaBackend, _op, _refusal(_op))


def _device_of_pointer(ptr: int) -> int:
    try:
        from cuda.bindings import driver

        err, dev = driver.cuPointerGetAttribute(driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
        if int(err) == 0:
            return int(dev)
    except Exception:
        pass
    try:
        return int(mod("numba.cuda").get_current_device().id)
    except Exception:
        return 0


BACKEND = NumbaBackend()

if TYPE_CHECKING:  # mypy checks the class against the contract, for its array type
    _contract: BackendContract[Any] = BACKEND
