# Eager fast paths of TensorFlow's hot reductions (max, min, argmax, argmin, mean, prod, var, std).
# Why: on small tensors a TF call is mostly Python. The public wrappers (tf.reduce_max, tf.argmax)
# go through dispatch decorators, keyword parsing and axis conversion before the op runs; the
# generated op functions (gen_math_ops) go straight to TFE_Py_FastPathExecute. The general path
# (statistical.py) also spends extra ops on the standard's corrections (NaN propagation, first
# occurrence, empty reductions); here they are paid only when the input needs them.
#
# Each function returns None when its preconditions do not hold (not an eager tensor, a dtype or
# axis form it does not take, an empty reduction, a NaN in the input), and the caller then takes
# the general path, which holds the standard's semantics for every input. Callers use these on
# CPU-only processes: the first-occurrence rule relies on the CPU ArgMax kernel (Eigen keeps the
# lowest index among ties), and the NaN check reads the tensor's host buffer.
# No tf.function is involved: nothing is traced, so varying shapes cost nothing extra.
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import tensorflow as tf
from tensorflow.python.framework.ops import EagerTensor
from tensorflow.python.ops import gen_array_ops, gen_math_ops

__all__ = ["argmax", "argmin", "max", "mean", "min", "prod", "std", "var"]

_FLOATS = frozenset({tf.float16, tf.bfloat16, tf.float32, tf.float64})
# Dtypes TF's ArgMax/Max kernels take (bool and complex go the general way).
_ORDERED = _FLOATS | frozenset({tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16, tf.uint32, tf.uint64})
_eager = tf.executing_eagerly
_isnan = np.isnan
_ALL: dict[int, Any] = {}  # rank -> int32 tensor [0, 1, ..., rank - 1] (every axis)
_ONES: dict[int, Any] = {}  # rank -> int32 tensor [1] * rank (a keepdims shape)
_FLAT: list[Any] = []  # [int32 tensor [-1]]
_max, _min, _mean, _prod, _sum = gen_math_ops._max, gen_math_ops._min, gen_math_ops.mean, gen_math_ops.prod, \
    gen_math_ops._sum


def _every_axis(rank: int) -> Any:
    try:
        return _ALL[rank]
    except KeyError:
        with tf.device("/device:CPU:0"):
            _ALL[rank] = tf.constant(list(range(rank)), tf.int32)
            _ONES[rank] = tf.constant([1] * rank, tf.int32)
        return _ALL[rank]


def _axes(x: Any, axis: Any) -> tuple[Any, int] | None:
    # (the axes argument of a TF reduction, the number of elements reduced), or None: general path.
    if type(x) is not EagerTensor or not _eager():
        return None
    shape = x.shape
    rank = shape.rank
    if axis is None:
        n = shape.num_elements()
        return (_every_axis(rank), n) if n else None
    if type(axis) is int and -rank <= axis < rank:
        n = shape[axis]
        return (axis, n) if n else None
    if type(axis) is tuple and axis and all(type(a) is int and -rank <= a < rank for a in axis) \
            and len({a % rank for a in axis}) == len(axis):
        n = 1
        for a in axis:
            n *= shape[a]
        return (list(axis), n) if n else None
    return None  # anything else (out of range, repeats, other types): the general path validates and raises


def _has_nan(x: Any) -> bool:
    # Note: on the CPU ``_numpy()`` is a view of the tensor's buffer; NumPy's scan costs no TF op.
    return x.dtype in _FLOATS and bool(_isnan(x._numpy()).any())


def _extreme(op: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    if x.dtype not in _ORDERED:
        return None
    ax = _axes(x, axis)
    if ax is None or _has_nan(x):  # Note: TF's Max/Min may skip NaN; the standard propagates it
        return None
    return op(x, ax[0], keepdims)


max = functools.partial(_extreme, _max)  # noqa: A001
min = functools.partial(_extreme, _min)  # noqa: A001


def _arg(op: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    if x.dtype not in _ORDERED or (axis is not None and type(axis) is not int):
        return None
    ax = _axes(x, axis)
    if ax is None or _has_nan(x):  # Note: NaN wins (first NaN), as in NumPy; the general path does that
        return None
    if axis is None:
        if not _FLAT:
            with tf.device("/device:CPU:0"):
                _FLAT.append(tf.constant([-1], tf.int32))
        r = op(gen_array_ops.reshape(x, _FLAT[0]), 0, output_type=tf.int64)
        return gen_array_ops.reshape(r, _ONES[x.shape.rank]) if keepdims else r
    r = op(x, axis, output_type=tf.int64)
    return gen_array_ops.expand_dims(r, axis % x.shape.rank) if keepdims else r


argmax = functools.partial(_arg, gen_math_ops.arg_max)
argmin = functools.partial(_arg, gen_math_ops.arg_min)


def mean(x: Any, axis: Any, keepdims: bool) -> Any:
    # Note: only non-empty reductions; TF's mean of zero elements is 0 where the standard's is NaN.
    ax = _axes(x, axis) if x.dtype in _FLOATS else None
    return None if ax is None else _mean(x, ax[0], keepdims)


def prod(x: Any, axis: Any, keepdims: bool) -> Any:
    ax = _axes(x, axis) if x.dtype in _FLOATS else None
    return None if ax is None else _prod(x, ax[0], keepdims)


def var(x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
    ax = _axes(x, axis) if x.dtype in _FLOATS else None
    if ax is None or not ax[1] - correction > 0:
        return None  # Note: N - correction <= 0 gives NaN; the general path does that
    dev = gen_math_ops.sub(x, _mean(x, ax[0], True))
    s = _sum(gen_math_ops.square(dev), ax[0], keepdims)
    return gen_math_ops.real_div(s, float(ax[1] - correction))


def std(x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
    v = var(x, axis, correction, keepdims)
    return None if v is None else gen_math_ops.sqrt(v)
