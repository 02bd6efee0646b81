# CuPy backend: cupy.ndarray on CUDA and on ROCm builds of CuPy, any device.
# The namespace is array_api_compat.cupy; the hot ops call CuPy directly.
# Every op runs under ``with <array's device>:`` when that is not the current
# device, so an array on device 1 gives results on device 1. Float32 matmul
# precision is CuPy's per-dtype cuBLAS compute type, set for the call only.
# Imported only once CuPy is in use; importing it needs no GPU.
from __future__ import annotations

import contextlib
import functools
import math
import os
from typing import TYPE_CHECKING, Any

import array_api_compat.cupy as compat_cupy
import cupy

from unarray import _precision
from unarray._backends import _special
from unarray._backends._base import Backend
from unarray._backends._contract import BackendContract
from unarray._backends._nn import Plan, around
from unarray._backends.attention_masks import MaskSpec
from unarray._backends.cupy import attention_cudnn
from unarray._backends.cupy import layout as _layout
from unarray._backends.cupy.devices import HERE as _HERE
from unarray._backends.cupy.devices import elsewhere, on_device_of
from unarray._backends.hot_calls import Bound, Gated, HotCall
from unarray._devices import Device, parse_device, register_native
from unarray._errors import DeviceMismatchError

_XP: Any = compat_cupy
_F32 = cupy.dtype("float32")
_device_cache: dict[int, Device] = {}


def is_hip() -> bool:
    try:
        return bool(cupy.cuda.runtime.is_hip)
    except Exception:
        return False


class CupyDevice(Device, cupy.cuda.Device):  # type: ignore[misc]  # (CuPy has no type stubs)
    """A ``ua.Device`` that is also CuPy's device object, so ``x.device == ua.device(x)`` holds from CuPy's side:
    CuPy's ``Device.__eq__`` answers False to any other type instead of deferring to it."""

    def __init__(self, kind: str, index: int = 0, *, library: str | None = None) -> None:
        Device.__init__(self, kind, index, library=library)
        cupy.cuda.Device.__init__(self, index)


def device_from_id(index: int, hip: bool | None = None) -> Device:
    """``ua.Device`` of CuPy device ``index`` (kind "rocm" on a HIP build of CuPy)."""
    hip = is_hip() if hip is None else hip
    return CupyDevice("rocm" if hip else "cuda", int(index))


def _first_array(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    for a in args:
        if isinstance(a, cupy.ndarray):
            return a
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], cupy.ndarray):
            return a[0]
    for a in kwargs.values():
        if isinstance(a, cupy.ndarray):
            return a
    return None


def pinned(fn: Any) -> Any:
    """``fn`` run on the device of its first array argument."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        d = elsewhere(_first_array(args, kwargs))
        if d is None:
            return fn(*args, **kwargs)
        with d:
            return fn(*args, **kwargs)

    return run


# -- matmul precision ---------------------------------------------------------------------------------
def effective_float32_compute(current: int, types: dict[str, int], env: Any = None) -> str:
    """What CuPy's float32 GEMM uses for compute type ``current`` ("default" honours CUPY_TF32)."""
    environ = os.environ if env is None else env
    if current == types["default"]:
        return "tf32" if environ.get("CUPY_TF32", "0") == "1" else "highest"
    for name in ("highest", "tf32", "bf16"):
        if current == types[name]:
            return name
    return "other"


def _read_compute(want: object = None) -> int:
    return int(_rl().get_compute_type(_F32))


@functools.cache
def _rl() -> Any:
    from cupy._core import _routines_linalg as rl

    return rl


def _gives(have: int, policy: str) -> bool:
    got = effective_float32_compute(have, _types())
    return got == policy or (policy == "fastest" and got == "bf16")


def _write_compute(value: int) -> None:
    _rl().set_compute_type(_F32, value)


def _swap_compute(policy: str) -> tuple[int, int]:
    have = _read_compute()
    _write_compute(_types()[policy])
    return have, _types()[policy]


@functools.cache
def _types() -> dict[str, int]:
    rl = _rl()
    return {"highest": rl.COMPUTE_TYPE_FP32, "tf32": rl.COMPUTE_TYPE_TF32, "bf16": rl.COMPUTE_TYPE_BF16,
            "fastest": rl.COMPUTE_TYPE_BF16, "default": rl.COMPUTE_TYPE_DEFAULT}


# Note: CuPy keeps one compute type per dtype for the process (not per thread or device): shared by
# threads through an arbiter (unarray/_precision.py), the user's value written back by the last call out.
# The C gate's table (unarray/_precision.py): policy -> (CuPy's getter, float32, the compute types that
# give the policy), filled at import (below).
_READS: dict[Any, tuple[Any, tuple[Any, ...], tuple[int, ...]]] = {}
_COMPUTE = _precision.Switch(_read_compute, _gives, _swap_compute, _write_compute, _READS)


def _fill_reads() -> None:
    types = set(_types().values())
    for p in _precision.POLICIES:
        _READS[p] = (_rl().get_compute_type, (_F32,), tuple(sorted(t for t in types if _gives(t, p))))


_compat_asarray: Any = getattr(compat_cupy, "asarray")  # noqa: B009 - compat's cupy namespace has no stubs


def _copy(x: Any, axis: Any, keepdims: bool) -> Any:  # min/max over axis=(): nothing is reduced
    return x.copy()


# The hot calls (hot_calls.py): a plain array on the current device (every parameter at its default, a dtype the
# method's call takes) is CuPy's function without the method's frames. (compat's sum passes dtype=float32 for
# float32 and complex64 for complex64, CuPy's own choice for them.)
_FLOATS = frozenset(map(cupy.dtype, ("float16", "float32", "float64")))
_INTS = frozenset(map(cupy.dtype, ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")))
_COMPLEXES = frozenset(map(cupy.dtype, ("complex64", "complex128")))
_SUM = HotCall("sum", cupy.sum, cupy.ndarray, dtypes=_FLOATS | _COMPLEXES, defaults=(None, None, False), device=_HERE)
_MEAN = HotCall("mean", cupy.mean, cupy.ndarray, dtypes=_FLOATS, defaults=(None, False), device=_HERE)
_ARGMAX = HotCall("argmax", cupy.argmax, cupy.ndarray, dtypes=_FLOATS | _INTS, defaults=(None, False), device=_HERE)
# ascontiguousarray's common case (layout.compact): below the kernel's size, CuPy's copy into a C-order array of the
# same shape, x itself where compact. That is CuPy's _internal_ascontiguousarray; the public cupy.ascontiguousarray
# makes a 0-d array 1-d, so it cannot stand in for the method. Every dtype (None).
_SAME_SHAPE = getattr(cupy._core, "_internal_ascontiguousarray", None)
_COMPACT = None if _SAME_SHAPE is None else HotCall(
    "ascontiguousarray", _SAME_SHAPE, cupy.ndarray, device=_HERE, max_size=Bound("nbytes", _layout.SMALL))
# matmul: CuPy's own for every dtype but float32, which runs under the policy's cuBLAS compute type through the
# precision switch (the method's call); CuPy has no host arrays, so no dtype is direct by place or size (host None)
_MATMUL = HotCall("matmul", cupy.matmul, cupy.ndarray, arrays=2, device=_HERE, policy=Gated(
    anywhere=(_FLOATS | _INTS | _COMPLEXES) - {_F32}, on_host=frozenset(), reducible=frozenset({_F32}), host=None,
    limit=-1, flags=_precision, flag="FORCE_ARBITRATION", gate=_COMPUTE.run,
    wants={(False, p): p for p in _precision.POLICIES}))


class CupyBackend(Backend):
    name = "cupy"
    xp = compat_cupy
    native = cupy
    elementwise_fixes = frozenset({"remainder", "nextafter"})
    native_mixed_kinds = False  # NumPy's promotion widens int32 with float32 to float64

    def __getattr__(self, op: str) -> Any:
        fn = super().__getattr__(op)
        wrapped = pinned(fn)
        if callable(fn):  # two arrays of one dtype on the current device: fn itself, as pinned's wrapper calls it
            wrapped = HotCall(op, fn, cupy.ndarray, arrays=2, device=_HERE).bind(wrapped)
        setattr(self, op, wrapped)
        return wrapped

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, cupy.ndarray)

    def device_of(self, x: cupy.ndarray) -> Device:
        i = x.data.device_id
        try:
            return _device_cache[i]
        except KeyError:
            out = _device_cache[i] = device_from_id(i)
            return out

    def native_device(self, device: Any) -> Any:
        if device is None or isinstance(device, cupy.cuda.Device):
            return device
        d = device if isinstance(device, Device) else parse_device(device)
        if d is None or d.kind not in ("cuda", "rocm", "gpu"):
            raise DeviceMismatchError(f"CuPy arrays live on GPUs only; got device {device!r}", backend=self.name)
        return cupy.cuda.Device(d.index)

    def devices(self) -> list[Device]:
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception:
            return []
        return [device_from_id(i) for i in range(n)]

    layout_route = staticmethod(_layout.route)  # ua.ascontiguousarray's route (layout.py)
    # the route, its common cases answered first (layout.py); CuPy's copy declared as the hot call
    ascontiguousarray = _layout.compact if _COMPACT is None else _COMPACT.bind(_layout.compact)

    def to_numpy(self, x: cupy.ndarray) -> Any:
        return x.get()

    def to_device(self, x: cupy.ndarray, device: Any) -> Any:
        with device:
            return cupy.asarray(x)

    def from_dlpack(self, x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
        if hasattr(x, "__cuda_array_interface__") and not hasattr(x, "__dlpack__"):
            out = cupy.asarray(x)  # Numba device arrays: zero-copy through the interface
            return out.copy() if copy else out
        return cupy.from_dlpack(x, **({} if copy is None else {"copy": copy}))

    def precision_used(self, policy: str, x: cupy.ndarray) -> str:
        return {"highest": "float32 (cuBLAS COMPUTE_32F, TF32 off)",
                "tf32": "tf32 (cuBLAS COMPUTE_32F_FAST_TF32)",
                "bf16": "bf16 passes (cuBLAS COMPUTE_32F_FAST_16BF)",
                "fastest": "bf16 passes (cuBLAS COMPUTE_32F_FAST_16BF)"}[policy]

    # -- hot ops: CuPy's own calls, on the array's device ---------------------------------------
    @_MATMUL.bind
    def matmul(self, x1: cupy.ndarray, x2: cupy.ndarray, policy: str) -> Any:
        with on_device_of(x1):
            if x1.dtype is not x2.dtype and x1.dtype != x2.dtype:
                dt = cupy.result_type(x1, x2)
                x1, x2 = x1.astype(dt, copy=False), x2.astype(dt, copy=False)
            if x1.dtype == _F32:
                return _COMPUTE.run(policy, cupy.matmul, x1, x2)
            return cupy.matmul(x1, x2)

    def matrix_transpose(self, x: cupy.ndarray) -> Any:
        if x.ndim < 2:
            return super().matrix_transpose(x)
        return cupy.swapaxes(x, -1, -2)

    def permute_dims(self, x: cupy.ndarray, axes: tuple[int, ...]) -> Any:
        return cupy.transpose(x, axes)

    @_SUM.bind
    def sum(self, x: cupy.ndarray, axis: Any, dtype: Any, keepdims: bool) -> Any:
        with on_device_of(x):
            return _XP.sum(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    def prod(self, x: cupy.ndarray, axis: Any, dtype: Any, keepdims: bool) -> Any:
        with on_device_of(x):
            return _XP.prod(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    @_MEAN.bind
    def mean(self, x: cupy.ndarray, axis: Any, keepdims: bool) -> Any:
        with on_device_of(x):
            if axis == ():
                return x.copy()
            return cupy.mean(x, axis=axis, keepdims=keepdims)

    def var(self, x: cupy.ndarray, axis: Any, correction: float, keepdims: bool) -> Any:
        with on_device_of(x):
            if axis == ():
                return self._scalar_var(x, correction)
            return cupy.var(x, axis=axis, ddof=correction, keepdims=keepdims)

    def std(self, x: cupy.ndarray, axis: Any, correction: float, keepdims: bool) -> Any:
        with on_device_of(x):
            if axis == ():
                return cupy.sqrt(self._scalar_var(x, correction))
            return cupy.std(x, axis=axis, ddof=correction, keepdims=keepdims)

    def _scalar_var(self, x: Any, correction: float) -> Any:
        # Note: axis=() reduces nothing: one element per variance, (x - x)**2 / (1 - correction).
        dev = cupy.abs(x - x) ** 2
        return dev / dev.dtype.type(1 - correction) if 1 - correction > 0 else dev * cupy.nan

    # Note: array-api-compat's fftfreq/rfftfreq refuse every device but the CPU.
    # Special cases CuPy misses (see _special): remainder by +-inf and its zero's sign, float16 nextafter of
    # equal zeros, and asarray(-0.0) (CuPy makes a 0-d zero without its sign).
    @pinned
    def remainder(self, x1: Any, x2: Any, /) -> Any:
        r = cupy.remainder(x1, x2)
        if r.dtype.kind != "f":
            return r
        r = _special.remainder_inf_divisor(compat_cupy, r, x1, x2)
        return _special.remainder_zero_sign(compat_cupy, r, x2)

    @pinned
    def nextafter(self, x1: Any, x2: Any, /) -> Any:
        r = cupy.nextafter(x1, x2)
        if r.dtype != cupy.float16:
            return r
        return cupy.where(cupy.equal(x1, x2), cupy.asarray(x2, r.dtype), r)

    def asarray(self, obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Any:
        out = _compat_asarray(obj, dtype=dtype, device=device, copy=copy)
        if type(obj) is float and obj == 0 and math.copysign(1.0, obj) < 0 and out.dtype.kind == "f":
            return cupy.copysign(out, -1.0).astype(out.dtype)
        return out

    def fft_fftfreq(self, n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
        return _freq(cupy.fft.fftfreq, n, d, dtype, device)

    def fft_rfftfreq(self, n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
        return _freq(cupy.fft.rfftfreq, n, d, dtype, device)

    # Note: cupy.linalg.solve wants equal batch dimensions; the standard broadcasts them.
    def linalg_solve(self, x1: Any, x2: Any) -> Any:
        with on_device_of(x1):
            vec = x2.ndim == 1
            b = x2[:, None] if vec else x2
            batch = cupy.broadcast_shapes(x1.shape[:-2], b.shape[:-2])
            a = cupy.broadcast_to(x1, batch + x1.shape[-2:])
            b = cupy.broadcast_to(b, batch + b.shape[-2:])
            out = cupy.linalg.solve(a, b)
            return out[..., 0] if vec else out

    def min(self, x: cupy.ndarray, axis: Any, keepdims: bool) -> Any:
        with on_device_of(x):
            return self._ordered("min", cupy.amin if axis != () else _copy, x, axis, keepdims, x.dtype.kind == "c")

    def max(self, x: cupy.ndarray, axis: Any, keepdims: bool) -> Any:
        with on_device_of(x):
            return self._ordered("max", cupy.amax if axis != () else _copy, x, axis, keepdims, x.dtype.kind == "c")

    def argmin(self, x: cupy.ndarray, axis: int | None, keepdims: bool) -> Any:
        with on_device_of(x):
            return self._ordered("argmin", cupy.argmin, x, axis, keepdims, x.dtype.kind == "c")

    @_ARGMAX.bind
    def argmax(self, x: cupy.ndarray, axis: int | None, keepdims: bool) -> Any:
        with on_device_of(x):
            return self._ordered("argmax", cupy.argmax, x, axis, keepdims, x.dtype.kind == "c")

    def any(self, x: cupy.ndarray, axis: Any, keepdims: bool) -> Any:
        with on_device_of(x):
            return cupy.any(x, axis=axis, keepdims=keepdims) if axis != () else x.astype(bool)

    def all(self, x: cupy.ndarray, axis: Any, keepdims: bool) -> Any:
        with on_device_of(x):
            return cupy.all(x, axis=axis, keepdims=keepdims) if axis != () else x.astype(bool)

    def cumulative_sum(self, x: cupy.ndarray, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        with on_device_of(x):
            return super().cumulative_sum(x, axis, dtype, include_initial)

    def cumulative_prod(self, x: cupy.ndarray, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        with on_device_of(x):
            return super().cumulative_prod(x, axis, dtype, include_initial)

    def nn_erf(self) -> Any:  # the array API has no erf: cupyx's
        from cupyx.scipy.special import erf

        return erf

    # Attention: where the caller has imported torch, the front end hands the arrays to torch's fused
    # kernels (torch's Library.lends_attention); otherwise cuDNN's fused SDPA through nvidia-cudnn-frontend for
    # the half-precision inputs it takes (attention_cudnn.py), else the blocked online-softmax path. The torch
    # route is the faster where both apply (docs/design-notes.md, "Attention routes").
    def attention_plan(self, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                       policy: str) -> Plan:
        if spec.q_segments is not None:  # cuDNN's graph takes no segment ids: the blocked path
            return super().attention_plan(q, k, v, mask, spec, scale, layout, policy)
        is_causal, window = spec.causal, (spec.left, spec.right) if spec.structured else (None, None)
        with on_device_of(q):
            p = attention_cudnn.prepare(q, k, v, mask, is_causal, scale, layout, window)
        if isinstance(p, str):
            return around(super().attention_plan(q, k, v, mask, spec, scale, layout, policy), _same,
                          f"; cudnn sdpa not used: {p}" if p else "")
        problem = p

        def call(f: Any) -> Any:
            with on_device_of(q):
                return f(problem, q, k, v, mask, is_causal)

        # Note: the library versions and the plan are read only when ua.explain prints them, not per call.
        return Plan(attention_cudnn.run, call, lambda: attention_cudnn.describe(problem, is_causal))


def _same(out: Any) -> Any:
    return out


def _freq(fn: Any, n: int, d: float, dtype: Any, device: Any) -> Any:
    with device if device is not None else contextlib.nullcontext():
        out = fn(n, d=d)
    return out if dtype is None else out.astype(dtype, copy=False)


BACKEND = CupyBackend()
register_native(cupy.cuda.Device, lambda d: device_from_id(d.id))


# The C gate's table, read before the first call (CuPy's import loads the linalg module the types need).
_fill_reads()

if TYPE_CHECKING:  # mypy checks the class against the contract, for its array type
    _contract: BackendContract[cupy.ndarray] = BACKEND
