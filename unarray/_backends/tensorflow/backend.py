# The TensorFlow backend class (the package's docstring says when its modules load): devices, dtypes, the TF32
# switch, the hot ops. TensorFlow runs float32 matmul as TF32 by default on Ampere+ GPUs: "highest" switches it off.
from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import tensorflow as tf

from unarray import _precision
from unarray._backends._base import Backend
from unarray._backends._contract import BackendContract
from unarray._backends._info import Info
from unarray._backends.tensorflow import at as _at
from unarray._backends.tensorflow import creation, dtypes, fast, linear_algebra, manipulation, statistical
from unarray._backends.tensorflow import nn as _nn
from unarray._backends.tensorflow.compile import TensorFlowCompiler
from unarray._backends.tensorflow.dtypes import FLOATS
from unarray._backends.tensorflow.xp import XP
from unarray._devices import Device, parse_device
from unarray._dtypes import canonical_name
from unarray._errors import DTypeError, TracerHandoffError, UnsupportedError

_DEV_RE = re.compile(r"device:([A-Za-z_]+):(\d+)", re.IGNORECASE)
_tf32_get = tf.config.experimental.tensor_float_32_execution_enabled
_tf32_set = tf.config.experimental.enable_tensor_float_32_execution


@functools.cache
def device_from_tf(spec: str) -> Device:
    """``ua.Device`` of a TF device string ('/job:localhost/replica:0/task:0/device:GPU:0')."""
    m = _DEV_RE.search(spec or "")
    if m is None:
        return Device("cpu")
    kind, index = m.group(1).lower(), int(m.group(2))
    # Note: TF names every GPU "GPU", ROCm builds included; the build tells them apart.
    kind = {"gpu": "rocm" if _is_rocm() else "cuda", "cpu": "cpu"}.get(kind, kind)
    return Device(kind, 0 if kind == "cpu" else index)


def tf_device_string(device: Device) -> str:
    if device.kind == "cpu":
        return "/device:CPU:0"
    kind = "GPU" if device.kind in ("cuda", "rocm") else device.kind.upper()
    return f"/device:{kind}:{device.index}"


def _is_rocm() -> bool:
    try:
        return bool(tf.sysconfig.get_build_info().get("is_rocm_build", False))
    except Exception:
        return False


@functools.cache
def _has_gpu() -> bool:
    return bool(tf.config.list_logical_devices("GPU"))


def _tf32_swap(want: bool) -> tuple[bool, bool]:
    have = _tf32_get()
    _tf32_set(want)
    return have, want


# Note: TF32 is one process-global switch in TensorFlow: shared by threads through an arbiter
# (unarray/_precision.py: calls needing the setting in force run together, a change waits for the
# others to leave, the user's value is written back by the last one out).
_TF32 = _precision.Switch(lambda want: _tf32_get(), lambda have, want: have == want, _tf32_swap, _tf32_set)


@contextlib.contextmanager
def tf32_scope(policy: str, on_gpu: bool) -> Iterator[None]:
    # TF32 off for "highest", on for the faster policies, the user's switch restored after. Note: inside tf.function
    # TF reads the switch while tracing, so the scope decides the precision baked into the graph.
    if not (on_gpu or _precision.FORCE_ARBITRATION):
        yield
        return
    token = _TF32.enter(policy != "highest")
    try:
        yield
    finally:
        _TF32.leave(token)


def _on_gpu(x: Any) -> bool:
    if not _has_gpu():
        return False
    dev = getattr(x, "device", "") or ""
    return "GPU" in dev.upper() or (dev == "" and not tf.executing_eagerly())


def _skip_autograph() -> None:
    # Note: autograph would rewrite unarray's own Python (``a or b`` into tf.cond machinery) inside
    # tf.function; unarray runs only TF ops, so it is left unconverted like numpy and tensorflow itself.
    try:
        from tensorflow.python.autograph.core import config

        if not any(getattr(r, "_prefix", "") == "unarray" for r in config.CONVERSION_RULES):
            config.CONVERSION_RULES = (config.DoNotConvert("unarray"), *config.CONVERSION_RULES)
    except Exception:  # a future TF without this module: conversion of unarray code still works, only slower
        pass


_skip_autograph()


def _fast_first(op: str, cpu_only: bool = False) -> Any:
    # A reduction's method: fast.py's eager path where it applies (else None), else statistical.py's general one.
    quick, general = getattr(fast, op), getattr(statistical, op)

    def method(self: Any, x: Any, axis: Any, keepdims: bool) -> Any:
        r = None if cpu_only and _has_gpu() else quick(x, axis, keepdims)
        return r if r is not None else general(x, axis=axis, keepdims=keepdims)

    method.__name__, method.__qualname__ = op, f"TensorflowBackend.{op}"  # (ua.explain names it)
    return method


class _Missing(UnsupportedError, AttributeError):
    pass


class TensorflowBackend(Backend):
    name = "tensorflow"
    compiler = TensorFlowCompiler()
    xp = XP
    native = tf
    immutable = True

    def __getattr__(self, op: str) -> Any:
        try:
            return super().__getattr__(op)
        except UnsupportedError as e:
            if op in self.holes:
                raise
            # Also an AttributeError, so hasattr() (autograph's protocol checks) sees a plain "no".
            raise _Missing(str(e).partition(": ")[2] or str(e), op=op, backend=self.name) from None

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, (tf.Tensor, tf.Variable))

    def device_of(self, x: tf.Tensor) -> Device:
        return device_from_tf(getattr(x, "device", "") or "")

    def native_device(self, device: Any) -> Any:
        if device is None:
            return None
        if isinstance(device, Device):
            return tf_device_string(device)
        if isinstance(device, str) and device.startswith("/"):
            return device
        d = parse_device(device)
        if d is None:
            raise DTypeError(f"not a device: {device!r}", backend=self.name)
        return tf_device_string(d)

    def devices(self) -> list[Device]:
        return [device_from_tf(d.name) for d in tf.config.list_logical_devices()]

    def dtype(self, d: Any) -> Any:
        if d is None or isinstance(d, tf.dtypes.DType):
            return d
        name = canonical_name(d)
        if name is None:
            raise DTypeError(f"{d!r} is not a dtype", backend=self.name)
        return dtypes.DT[name]

    def dtype_name(self, x: tf.Tensor) -> str:
        return str(x.dtype.name)

    def default_dtypes(self, device: Any = None) -> dict[str, Any]:
        return {"real floating": dtypes.DEFAULT_FLOAT, "complex floating": tf.complex64,
                "integral": dtypes.DEFAULT_INT, "indexing": tf.int64}

    # Note: a tf.Tensor takes no boolean mask in __getitem__ (tf.boolean_mask does); unique and nonzero
    # have data-dependent shapes, eagerly and in tf.function; TF's TensorShape stops at 254 dimensions.
    def capabilities(self) -> dict[str, Any]:
        return {"boolean indexing": False, "data-dependent shapes": True, "max dimensions": 254}

    def is_tracer(self, x: tf.Tensor) -> bool:
        # Symbolic tensors exist only while tf.function traces; variables are concrete resources.
        return isinstance(x, tf.Tensor) and not hasattr(x, "numpy") and not tf.executing_eagerly()

    def from_dlpack(self, x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
        out = creation.from_dlpack(x, copy=copy)
        if device is not None:
            out = manipulation.to_device(out, self.native_device(device))
        return out

    def asarray(self, obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Any:
        return creation.asarray(obj, dtype=dtype, device=device, copy=copy)

    def to_numpy(self, x: tf.Tensor) -> Any:
        if self.is_tracer(x):
            raise TracerHandoffError("a symbolic tensor inside tf.function has no values yet", backend=self.name)
        return x.numpy()

    def to_device(self, x: tf.Tensor, device: Any) -> Any:
        return manipulation.to_device(x, device)

    def at_update(self, x: tf.Tensor, idx: Any, op: str, v: tf.Tensor, in_place: bool) -> Any:
        return _at.update(dtypes.t(x), idx, op, v)

    def apply_numpy(self, call: Any, arrays: list[Any], shape: tuple[int, ...], dtype: Any) -> Any:
        # Note: tf.numpy_function runs eagerly and inside tf.function alike.
        out = tf.numpy_function(call, [dtypes.t(a) for a in arrays], Tout=tf.as_dtype(dtype), stateful=False)
        out.set_shape(shape)
        return out

    def precision_used(self, policy: str, x: tf.Tensor) -> str:
        if not _on_gpu(x):
            return "float32 (the CPU runs no reduced-precision matmul passes)"
        if policy == "highest":
            return "float32 (TF32 switched off for the call, then restored)"
        # Note: TensorFlow has one switch (TF32 on/off); bf16 passes are not selectable.
        return "tf32 (tf.config TF32 execution on for the call)"

    # -- hot ops --------------------------------------------------------------------------------
    # ua.nn: tf.nn's kernels (nn.py).
    nn_softmax = _nn.softmax
    nn_log_softmax = _nn.log_softmax
    nn_logsumexp = _nn.logsumexp
    nn_silu = _nn.silu
    nn_erf = _nn.erf

    # Note: TF places new tensors by its device scope and copies operands across devices itself.
    def creation_device(self, x: tf.Tensor) -> dict[str, Any]:
        return {}

    def matmul(self, x1: tf.Tensor, x2: tf.Tensor, policy: str) -> Any:
        # Fast path: same float dtype, both at least 2-D on the CPU: tf.linalg.matmul is the standard's matmul.
        d = x1.dtype
        if d in FLOATS and d == x2.dtype and x1.shape.rank >= 2 and x2.shape.rank >= 2 and not _has_gpu():
            return tf.linalg.matmul(x1, x2)
        with tf32_scope(policy, _on_gpu(x1)):
            return linear_algebra.matmul(x1, x2)

    def tensordot(self, x1: Any, x2: Any, /, *, axes: Any = 2, policy: str) -> Any:
        with tf32_scope(policy, _on_gpu(x1)):
            return linear_algebra.tensordot(x1, x2, axes=axes)

    def matrix_transpose(self, x: tf.Tensor) -> Any:
        return linear_algebra.matrix_transpose(x)

    def sum(self, x: tf.Tensor, axis: Any, dtype: Any, keepdims: bool) -> Any:
        if dtype is None and (axis is None or type(axis) is int) and x.dtype in FLOATS:
            # Note: TF's op wrappers parse keywords slowly: the full reduction is called bare.
            return tf.reduce_sum(x) if axis is None and not keepdims else tf.reduce_sum(x, axis, keepdims)
        return statistical.sum(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    def prod(self, x: tf.Tensor, axis: Any, dtype: Any, keepdims: bool) -> Any:
        r = fast.prod(x, axis, keepdims) if dtype is None else None
        return r if r is not None else statistical.prod(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    mean = _fast_first("mean")

    def var(self, x: tf.Tensor, axis: Any, correction: float, keepdims: bool) -> Any:
        r = fast.var(x, axis, correction, keepdims)
        return r if r is not None else statistical.var(x, axis=axis, correction=correction, keepdims=keepdims)

    def std(self, x: tf.Tensor, axis: Any, correction: float, keepdims: bool) -> Any:
        r = fast.std(x, axis, correction, keepdims)
        return r if r is not None else statistical.std(x, axis=axis, correction=correction, keepdims=keepdims)

    # min, max, argmin, argmax: their fast paths on the CPU only (they read a NaN flag back and rely on the CPU
    # kernel's tie rule).
    min = _fast_first("min", cpu_only=True)
    max = _fast_first("max", cpu_only=True)
    argmin = _fast_first("argmin", cpu_only=True)
    argmax = _fast_first("argmax", cpu_only=True)


BACKEND = TensorflowBackend()

# Note: TensorFlow has no inspection API of its own; this namespace's is unarray's, for TF.
setattr(XP, "__array_namespace_info__", lambda: Info(BACKEND))  # noqa: B010 - a ModuleType built at run time

if TYPE_CHECKING:  # mypy checks the class against the contract, for its array type
    _contract: BackendContract[tf.Tensor] = BACKEND
