# The array-API namespace over TensorFlow: the creation functions (Python ints are
# int64 and floats float32 here, as the standard's defaults, where tf.constant says int32).
from __future__ import annotations

import builtins
import contextlib
import math
from typing import Any

import numpy as np
import tensorflow as tf

from unarray._backends import _xp_shared
from unarray._backends.tensorflow.dtypes import (
    COMPLEX,
    DEFAULT_FLOAT,
    DEFAULT_INT,
    FLOATS,
    SCALARS,
    bfloat16,
    bool,
    complex64,
    complex128,
    const,
    float64,
    int64,
    t,
)
from unarray._backends.tensorflow.manipulation import same_dtype
from unarray._errors import ArgumentError


def place(device: Any) -> Any:
    """A scope placing new tensors on ``device`` (TF's default placement where it is None)."""
    return tf.device(device) if device is not None else contextlib.nullcontext()


def _shape(shape: Any) -> list[int]:
    return [shape] if isinstance(shape, int) else list(shape)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: builtins.bool | None = None) -> Any:
    if isinstance(obj, (tf.Tensor, tf.Variable)):
        x = t(obj)
        if dtype is not None and x.dtype != dtype:
            if copy is False:
                raise ValueError("asarray: changing the dtype needs a copy, but copy=False")
            x = tf.cast(x, dtype)
        elif copy:
            x = tf.raw_ops.DeepCopy(x=x)
        if device is not None:
            with tf.device(device):
                x = tf.identity(x)
        return x
    if copy is False:
        raise ValueError("TensorFlow cannot alias memory it does not own (copy=False); pass copy=None")
    if isinstance(obj, (list, tuple)) and isinstance(_first(obj), (tf.Tensor, tf.Variable)):
        # Note: a sequence of tensors is packed by TensorFlow (NumPy's conversion would read each as an object).
        with place(device):
            x = tf.convert_to_tensor(obj)
            return x if dtype is None or x.dtype == dtype else tf.cast(x, dtype)
    if dtype is None:
        dtype = _infer_dtype(obj)
    with place(device):
        if isinstance(obj, np.ndarray) and dtype is not None and dtype != bfloat16:
            obj = obj.astype(dtype.as_numpy_dtype, copy=False)
        elif isinstance(obj, (list, tuple, builtins.bool, int, float, complex, np.generic)) and dtype is not None:
            # Note: tf.constant refuses sequences of mixed Python types ([1, 2j, 3]) and a number of another kind
            # (1 as bool); NumPy converts them.
            obj = np.asarray(obj, dtype=dtype.as_numpy_dtype)
        return const(obj, dtype)


def _first(obj: Any) -> Any:
    while isinstance(obj, (list, tuple)) and obj:
        obj = obj[0]
    return obj


def _infer_dtype(obj: Any) -> Any:
    # Note: tf.constant makes Python ints int32 and floats float32; the standard's defaults here are int64/float32.
    if isinstance(obj, np.ndarray | np.generic):
        return None
    return _xp_shared.python_dtype(obj, bool, complex64, DEFAULT_FLOAT, DEFAULT_INT)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    with place(device):
        return tf.zeros(_shape(shape), dtype or DEFAULT_FLOAT)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    with place(device):
        return tf.ones(_shape(shape), dtype or DEFAULT_FLOAT)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return zeros(shape, dtype=dtype, device=device)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    if dtype is None:
        dtype = _infer_dtype(fill_value) if isinstance(fill_value, SCALARS) else t(fill_value).dtype
    with place(device):
        return tf.fill(_shape(shape), const(fill_value, dtype))


def _like(x: Any, dtype: Any, device: Any) -> tuple[Any, Any, Any]:
    x = t(x)
    return x, dtype or x.dtype, device if device is not None else (x.device or None)


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    x, d, dev = _like(x, dtype, device)
    with place(dev):
        return tf.zeros(tf.shape(x), d)


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    x, d, dev = _like(x, dtype, device)
    with place(dev):
        return tf.ones(tf.shape(x), d)


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    return zeros_like(x, dtype=dtype, device=device)


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    x, d, dev = _like(x, dtype, device)
    with place(dev):
        return tf.fill(tf.shape(x), const(fill_value, d))


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Any:
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = DEFAULT_FLOAT if builtins.any(isinstance(v, float) for v in (start, stop, step)) else DEFAULT_INT
    n = builtins.max(0, math.ceil((stop - start) / step))
    with place(device):
        # Note: start + i*step (as NumPy), not TF's repeated addition, and the standard's ceil length.
        return tf.cast(start + tf.range(n, dtype=float64 if dtype in FLOATS else int64) * step, dtype)


def _exact(v: Any, dtype: Any) -> Any:
    return tf.cast(v, dtype) if isinstance(v, (tf.Tensor, tf.Variable)) else const(v, dtype)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: builtins.bool = True) -> Any:
    dtype = dtype or (complex64 if builtins.any(isinstance(v, complex) for v in (start, stop)) else DEFAULT_FLOAT)
    with place(device):
        if num == 0:
            return tf.zeros([0], dtype)
        div = (num - 1) if endpoint else num
        i = tf.range(num, dtype=float64)
        wide = complex128 if dtype in COMPLEX else float64
        step = (stop - start) / div if div > 0 else 0
        # Note: tf.cast of a Python float goes through float32; _exact keeps float64 values exact.
        out = _exact(start, wide) + tf.cast(i, wide) * _exact(step, wide)
        if endpoint and num > 1:
            out = tf.concat([out[:-1], tf.reshape(_exact(stop, wide), [1])], 0)
        return tf.cast(out, dtype)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None) -> Any:
    n_cols = n_rows if n_cols is None else n_cols
    with place(device):
        r = tf.range(n_rows)[:, None]
        c = tf.range(n_cols)[None, :]
        return tf.cast(tf.equal(c - r, k), dtype or DEFAULT_FLOAT)


def _tri(x: Any, k: int, lower: builtins.bool) -> Any:
    x = t(x)
    m, n = tf.shape(x)[-2], tf.shape(x)[-1]
    d = tf.range(n)[None, :] - tf.range(m)[:, None]
    keep = d <= k if lower else d >= k
    return tf.where(keep, x, tf.zeros_like(x))


def tril(x: Any, /, *, k: int = 0) -> Any:
    return _tri(x, k, True)


def triu(x: Any, /, *, k: int = 0) -> Any:
    return _tri(x, k, False)


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Any]:
    if indexing not in ("xy", "ij"):
        raise ArgumentError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    return list(tf.meshgrid(*same_dtype(arrays), indexing=indexing))


def from_dlpack(x: Any, /, *, device: Any = None, copy: builtins.bool | None = None) -> Any:
    cap = x.__dlpack__() if hasattr(x, "__dlpack__") else x
    out = tf.experimental.dlpack.from_dlpack(cap)
    return tf.raw_ops.DeepCopy(x=out) if copy else out
