# The array-API namespace over TensorFlow: the linear algebra functions of the main
# namespace (matrix products); the linalg extension is in linalg.py.
from __future__ import annotations

from typing import Any

import tensorflow as tf

from unarray._backends.tensorflow.dtypes import (
    COMPLEX,
    UNSIGNED,
    bool_,
    promote,
    t,
    widened,
)
from unarray._backends.tensorflow.statistical import sum
from unarray._errors import ArgumentError, DTypeError, ShapeError

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


def matmul(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    if a.shape.rank == 0 or b.shape.rank == 0:
        raise ShapeError("matmul needs arrays of at least 1 dimension")
    if a.dtype == bool_:
        raise DTypeError("matmul needs numeric arrays, got bool")
    # Note: TF matmul takes no 1-D operands; the standard promotes them to a row/column and drops it after.
    va, vb = a.shape.rank == 1, b.shape.rank == 1
    if va:
        a = a[None, :]
    if vb:
        b = b[:, None]
    if a.shape[-1] is not None and b.shape[-2] is not None and a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul: shape mismatch {tuple(x1.shape)} @ {tuple(x2.shape)} (inner dimensions differ)")
    if a.dtype in UNSIGNED or a.dtype in (tf.int8, tf.int16):
        # Note: TF has integer matmul kernels for int32/int64 only.
        out = widened(tf.linalg.matmul, a, b)
    else:
        out = tf.linalg.matmul(a, b)
    if va:
        out = tf.squeeze(out, -2)
    if vb:
        out = tf.squeeze(out, -1)
    return out


def matrix_transpose(x: Any, /) -> Any:
    x = t(x)
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ArgumentError(f"matrix_transpose needs at least 2 dimensions, got shape {tuple(x.shape)}")
    return tf.linalg.matrix_transpose(x)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    a, b = promote(x1, x2)
    if a.dtype in UNSIGNED or a.dtype in (tf.int8, tf.int16):
        return widened(lambda p, q: tf.tensordot(p, q, axes), a, b)
    return tf.tensordot(a, b, axes)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    a, b = promote(x1, x2)
    if a.shape[axis] is not None and b.shape[axis] is not None and a.shape[axis] != b.shape[axis]:
        raise ShapeError(f"vecdot: sizes along axis {axis} differ: {tuple(a.shape)} and {tuple(b.shape)}")
    if axis >= 0:
        raise ArgumentError("vecdot takes a negative axis (counted from the end, as the standard asks)")
    prod_ = (tf.math.conj(a) if a.dtype in COMPLEX else a) * b
    return sum(prod_, axis=axis, dtype=prod_.dtype)
