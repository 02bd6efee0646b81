# The array-API namespace over MLX: the creation functions. MLX's own make Python ints int32 and turn
# float64 NumPy input into float32; here a NumPy array keeps its dtype, Python ints are int64 and floats
# float32 (the standard's defaults as unarray declares them for MLX). ``device`` is MLX's device (the
# stream the op runs on: MLX's arrays live in unified memory).
from __future__ import annotations

import builtins
import math
from typing import Any

import mlx.core as mx
import numpy as np

from unarray._backends import _xp_shared
from unarray._backends.mlx.dtypes import (
    DEFAULT_FLOAT,
    DEFAULT_INT,
    FLOATS,
    SCALARS,
    a,
    bool,
    complex64,
    name,
    native,
)
from unarray._backends.mlx.manipulation import same_dtype
from unarray._errors import ArgumentError, DTypeError


def _kw(device: Any, d: Any = None) -> dict[str, Any]:
    if device is None:
        return {}
    if d == mx.float64 and device.type != mx.DeviceType.cpu:
        # Note: MLX's GPU has no float64; refused before MLX is asked for a stream there.
        raise DTypeError("MLX's GPU has no float64; use float32 there, or compute on the CPU", backend="mlx")
    return {"stream": device}


def _shape(shape: Any) -> list[int]:
    return [shape] if isinstance(shape, int) else list(shape)


def _infer(obj: Any) -> Any:
    return _xp_shared.python_dtype(obj, bool, complex64, DEFAULT_FLOAT, DEFAULT_INT)


def from_numpy(n: Any, dtype: Any = None) -> Any:
    # Note: mx.array makes float64 NumPy input float32 unless told the dtype; complex128 has no MLX dtype.
    d = native(dtype)
    if d is None:
        if n.dtype == np.complex128:
            raise DTypeError("MLX has no complex128; cast to complex64 first", backend="mlx")
        d = native(n.dtype.name)
    return mx.array(n, dtype=d)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: builtins.bool | None = None) -> Any:
    d = native(dtype)
    if isinstance(obj, mx.array):
        if d is not None and obj.dtype != d:
            if copy is False:
                raise ValueError("asarray: changing the dtype needs a copy, but copy=False")
            return obj.astype(d)
        return mx.array(obj) if copy else obj
    if copy is False:
        raise ValueError("MLX cannot alias memory it does not own (copy=False); pass copy=None")
    if isinstance(obj, (np.ndarray, np.generic)) or hasattr(obj, "__dlpack__") and not isinstance(obj, SCALARS):
        return _imported(obj, d)
    if d is None:
        d = _infer(obj)
    return mx.array(np.asarray(obj, dtype=np.dtype(name(d))) if d is not None and d != mx.bfloat16 else obj, dtype=d)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    d = native(dtype) or DEFAULT_FLOAT
    return mx.zeros(_shape(shape), dtype=d, **_kw(device, d))


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    d = native(dtype) or DEFAULT_FLOAT
    return mx.ones(_shape(shape), dtype=d, **_kw(device, d))


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return zeros(shape, dtype=dtype, device=device)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    d = native(dtype) or (_infer(fill_value) if isinstance(fill_value, SCALARS) else a(fill_value).dtype)
    return mx.full(_shape(shape), mx.array(fill_value, dtype=d), dtype=d, **_kw(device, d))


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    d = native(dtype) or a(x).dtype
    return mx.zeros(x.shape, dtype=d, **_kw(device, d))


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    d = native(dtype) or a(x).dtype
    return mx.ones(x.shape, dtype=d, **_kw(device, d))


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    return zeros_like(x, dtype=dtype, device=device)


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    d = native(dtype) or a(x).dtype
    return mx.full(x.shape, mx.array(fill_value, dtype=d), dtype=d, **_kw(device, d))


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Any:
    if stop is None:
        start, stop = 0, start
    d = native(dtype) or (DEFAULT_FLOAT if builtins.any(isinstance(v, float) for v in (start, stop, step))
                          else DEFAULT_INT)
    n = builtins.max(0, math.ceil((stop - start) / step))
    # Note: start + i*step (as NumPy) with the standard's ceil length, not MLX's repeated float32 addition.
    i = np.arange(n, dtype=np.float64 if d in FLOATS else np.int64)
    return mx.array((start + i * step).astype(name(d) if d != mx.bfloat16 else "float32"), dtype=d)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: builtins.bool = True) -> Any:
    d = native(dtype) or (complex64 if builtins.any(isinstance(v, complex) for v in (start, stop)) else DEFAULT_FLOAT)
    out = np.linspace(complex(start) if d == complex64 else float(start),
                      complex(stop) if d == complex64 else float(stop), num, endpoint=endpoint)
    return mx.array(out.astype(np.complex64 if d == complex64 else np.float64), dtype=d)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None) -> Any:
    d = native(dtype) or DEFAULT_FLOAT
    return mx.eye(n_rows, n_cols, k, dtype=d, **_kw(device, d))


def tril(x: Any, /, *, k: int = 0) -> Any:
    x = a(x)
    keep = mx.tri(x.shape[-2], x.shape[-1], k, dtype=bool)
    return mx.where(keep, x, mx.zeros_like(x))


def triu(x: Any, /, *, k: int = 0) -> Any:
    x = a(x)
    drop = mx.tri(x.shape[-2], x.shape[-1], k - 1, dtype=bool)
    return mx.where(drop, mx.zeros_like(x), x)


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Any]:
    if indexing not in ("xy", "ij"):
        raise ArgumentError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    return list(mx.meshgrid(*same_dtype(arrays), indexing=indexing))


def from_dlpack(x: Any, /, *, device: Any = None, copy: builtins.bool | None = None) -> Any:
    if copy is False:
        raise ValueError("MLX imports foreign buffers by copying them (copy=False)")
    return _imported(x)


def _imported(x: Any, d: Any = None) -> Any:
    # NumPy's DLPack import keeps float64 (MLX's own makes it float32) but has no bfloat16, which MLX's own has.
    if isinstance(x, (np.ndarray, np.generic)):  # (ml_dtypes' bfloat16 has no DLPack code)
        return from_numpy(np.asarray(x), d)
    try:
        return from_numpy(np.from_dlpack(x), d)
    except RuntimeError:  # NumPy's "Unsupported dtype in DLTensor"
        return asarray(mx.from_dlpack(x), dtype=d)


__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace",
           "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"]
