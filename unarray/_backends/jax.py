# JAX backend: jax.Array and tracers (inside jit/grad/vmap), on CPU, CUDA, ROCm
# and TPU. jax.numpy follows the array API standard, so it is the namespace
# itself; what differs is precision (JAX's default float32 matmul on GPU/TPU
# is TF32/bf16) and float64 availability (x64 mode, never on TPU).
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from unarray._backends._base import Backend
from unarray._devices import Device
from unarray._errors import DTypeError
from unarray._precision import _POLICY

_P = jax.lax.Precision
# unarray policy -> lax precision. HIGHEST is exact float32 (6 bf16 passes on TPU).
_JAX_PRECISION = {"highest": _P.HIGHEST, "tf32": _P.HIGH, "bf16": _P.DEFAULT, "fastest": _P.DEFAULT}
# The same policies as names for jax.default_matmul_precision (for ops that take no precision argument).
_DEFAULT_PRECISION = {"highest": "highest", "tf32": "tensorfloat32", "bf16": "bfloat16", "fastest": "bfloat16"}
_device_cache: dict[Any, Device] = {}


def _x64() -> bool:
    return bool(jax.config.read("jax_enable_x64"))


def device_from_jax(d: Any) -> Device:
    """``ua.Device`` of a ``jax.Device`` (or any object with ``platform``, ``id``, ``client``)."""
    platform = d.platform
    if platform == "gpu" or platform == "cuda" or platform == "rocm":
        version = str(getattr(getattr(d, "client", None), "platform_version", "")).lower()
        kind = "rocm" if (platform == "rocm" or "rocm" in version or "hip" in version) else "cuda"
        return Device(kind, getattr(d, "local_hardware_id", None) or d.id)
    if platform == "cpu":
        return Device("cpu")
    return Device(platform, d.id)


def precision_label(policy: str, device: Device) -> str:
    """What a float32 JAX matmul computes with on ``device`` under ``policy``."""
    if device.kind == "cpu":
        return "float32 (the CPU runs no reduced-precision matmul passes)"
    if policy == "highest":
        return "float32 (lax.Precision.HIGHEST" + (", 6 bf16 passes)" if device.kind == "tpu" else ")")
    if policy == "tf32":
        return "bf16x3 passes (lax.Precision.HIGH)" if device.kind == "tpu" else "tf32 (lax.Precision.HIGH)"
    return "bf16 (lax.Precision.DEFAULT)" if device.kind == "tpu" else "tf32 (lax.Precision.DEFAULT)"


def check_float64(name: str, device: Device, x64: bool) -> None:
    """Refuse float64 where JAX would silently give float32 or cannot run it."""
    if name not in ("float64", "complex128"):
        return
    if not device.has_float64:
        raise DTypeError(f"{name} is not supported on {device} (the hardware has no float64); use float32",
                         backend="jax")
    if not x64:
        raise DTypeError(f"{name} needs JAX's x64 mode; call jax.config.update('jax_enable_x64', True) first",
                         backend="jax")


class JaxBackend(Backend):
    name = "jax"
    xp = jnp
    native = jax
    kernel_namespace = "jax.numpy"

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, (jax.Array, jax.core.Tracer))

    def device_of(self, x: Any) -> Device:
        try:
            d = x.device
            if not isinstance(d, jax.Device):  # a sharding across devices: take its first
                d = next(iter(x.devices()))
        except Exception:  # a tracer has no concrete device: it runs on the default one
            d = jax.devices()[0]
        try:
            return _device_cache[d]
        except (KeyError, TypeError):
            out = _device_cache[d] = device_from_jax(d)
            return out

    def native_device(self, device: Any) -> Any:
        if device is None or isinstance(device, jax.Device):
            return device
        if isinstance(device, Device):
            for d in jax.devices(device.kind if device.kind != "cuda" else "gpu") if device.kind != "cpu" else \
                    jax.devices("cpu"):
                if device_from_jax(d) == device:
                    return d
            raise DTypeError(f"no JAX device {device}", backend=self.name)
        from unarray._devices import parse_device

        return self.native_device(parse_device(device))

    def devices(self) -> list[Device]:
        return [device_from_jax(d) for d in jax.devices()]

    def dtype(self, d: Any) -> Any:
        if d is None:
            return None
        name = self._name_of(d)
        if name in ("float64", "complex128"):  # the device is looked up only where the rule applies
            check_float64(name, self.devices()[0], _x64())
        return jnp.dtype(name)

    def _name_of(self, d: Any) -> str:
        from unarray._dtypes import canonical_name

        name = canonical_name(d)
        if name is None:
            raise DTypeError(f"{d!r} is not a dtype", backend=self.name)
        return name

    def creation_device(self, x: Any) -> dict[str, Any]:
        # A tracer has no committed device: its computation decides placement.
        return {} if isinstance(x, jax.core.Tracer) else {"device": x.device}

    def is_tracer(self, x: Any) -> bool:
        return isinstance(x, jax.core.Tracer)

    def data_ptr(self, x: Any) -> int:
        return int(x.unsafe_buffer_pointer())

    def precision_used(self, policy: str, x: Any) -> str:
        return precision_label(policy, self.device_of(x))

    def matmul(self, x1: Any, x2: Any) -> Any:
        return jnp.matmul(x1, x2, precision=_JAX_PRECISION[_POLICY.get()])

    # Note: like matmul, these contract on the MXU/tensor cores, where JAX's default precision is bf16/TF32.
    def tensordot(self, x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
        return jnp.tensordot(x1, x2, axes=axes, precision=_JAX_PRECISION[_POLICY.get()])

    def vecdot(self, x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
        return jnp.vecdot(x1, x2, axis=axis, precision=_JAX_PRECISION[_POLICY.get()])

    def linalg_matrix_power(self, x: Any, n: int, /) -> Any:
        with jax.default_matmul_precision(_DEFAULT_PRECISION[_POLICY.get()]):
            return jnp.linalg.matrix_power(x, n)

    def matrix_transpose(self, x: Any) -> Any:
        if x.ndim < 2:
            return super().matrix_transpose(x)
        return jnp.matrix_transpose(x)

    # Note: jnp.permute_dims refuses negative axes, which NumPy and torch accept.
    def permute_dims(self, x: Any, axes: tuple[int, ...]) -> Any:
        return jnp.permute_dims(x, tuple(a % x.ndim if a < 0 else a for a in axes))

    def sum(self, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        return jnp.sum(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    def prod(self, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        return jnp.prod(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    def mean(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return jnp.mean(x, axis=axis, keepdims=keepdims)

    def var(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        return jnp.var(x, axis=axis, correction=correction, keepdims=keepdims)

    def std(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        return jnp.std(x, axis=axis, correction=correction, keepdims=keepdims)

    def min(self, x: Any, axis: Any, keepdims: bool) -> Any:
        self._check_nonempty("min", x, axis)
        return jnp.min(x, axis=axis, keepdims=keepdims)

    def max(self, x: Any, axis: Any, keepdims: bool) -> Any:
        self._check_nonempty("max", x, axis)
        return jnp.max(x, axis=axis, keepdims=keepdims)

    def argmin(self, x: Any, axis: int | None, keepdims: bool) -> Any:
        self._check_nonempty("argmin", x, axis)
        return jnp.argmin(x, axis=axis, keepdims=keepdims)

    def argmax(self, x: Any, axis: int | None, keepdims: bool) -> Any:
        self._check_nonempty("argmax", x, axis)
        return jnp.argmax(x, axis=axis, keepdims=keepdims)

    def any(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return jnp.any(x, axis=axis, keepdims=keepdims)

    def all(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return jnp.all(x, axis=axis, keepdims=keepdims)

    # Note: jnp.searchsorted returns int32 even in x64 mode; the standard says the default index dtype.
    def searchsorted(self, x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
        out = jnp.searchsorted(x1, x2, side=side, sorter=sorter)
        return out.astype(jnp.int64) if _x64() else out

    def cumulative_sum(self, x: Any, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return jnp.cumulative_sum(x, axis=axis, dtype=self._acc(x, dtype), include_initial=include_initial)

    def cumulative_prod(self, x: Any, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return jnp.cumulative_prod(x, axis=axis, dtype=self._acc(x, dtype), include_initial=include_initial)

    # Note: jnp.cumulative_prod keeps small integer dtypes (int8 stays int8); the standard accumulates
    # integers in the default (unsigned) integer dtype, as sum does.
    def _acc(self, x: Any, dtype: Any) -> Any:
        if dtype is not None:
            return self.dtype(dtype)
        if jnp.issubdtype(x.dtype, jnp.unsignedinteger):
            return jnp.dtype("uint64" if _x64() else "uint32")
        if jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_:
            return jnp.dtype("int64" if _x64() else "int32")
        return None

    # Attention: jax.nn.dot_product_attention, cuDNN where it applies (attention_jax.py).
    def scaled_dot_product_attention(self, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float,
                                     layout: str, precision: str | None) -> Any:
        from unarray._backends import attention_jax

        return attention_jax.sdpa(q, k, v, mask, is_causal, scale, layout, precision)

    def attention_kernel(self, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, layout: str) -> str:
        from unarray._backends import attention_jax

        return attention_jax.label(q, k, v, mask, is_causal, layout)


BACKEND = JaxBackend()
