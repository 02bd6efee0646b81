# The array-API namespace over TensorFlow: the statistical functions (reductions,
# cumulative sums and products) and all, any, count_nonzero and diff, with the
# standard's semantics where TensorFlow's differ (each with its reason).
from __future__ import annotations

import builtins
import math
from typing import Any

import tensorflow as tf

from unarray._backends import _xp_shared
from unarray._backends._xp_shared import axes_of
from unarray._backends.tensorflow.dtypes import (
    COMPLEX,
    DEFAULT_INT,
    FLOATS,
    UNSIGNED,
    bool_,
    cast,
    t,
    widened,
)
from unarray._backends.tensorflow.manipulation import concat
from unarray._errors import DTypeError, EmptyReductionError

__all__ = ["all", "any", "argmax", "argmin", "count_nonzero", "cumulative_prod", "cumulative_sum", "diff", "max",
           "mean", "min", "prod", "std", "sum", "var"]


def _acc_dtype(x: Any, dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    if x.dtype == bool_ or (x.dtype.is_integer and x.dtype not in UNSIGNED):
        return DEFAULT_INT
    if x.dtype in UNSIGNED:
        return tf.uint64
    return x.dtype


# -- statistical ----------------------------------------------------------------------------
def _sum_like(fn: Any, x: Any, axis: Any, dtype: Any, keepdims: builtins.bool) -> Any:
    x = t(x)
    d = _acc_dtype(x, dtype)
    axes = axes_of(axis, x.shape.rank)
    xc = cast(x, d)
    if d == tf.uint64:
        # Note: no uint64 reduction kernels; int64 sums wrap identically mod 2**64.
        return tf.bitcast(fn(tf.bitcast(xc, tf.int64), axis=axes, keepdims=keepdims), tf.uint64)
    if d in UNSIGNED or d in (tf.int8, tf.int16):
        return tf.cast(fn(tf.cast(xc, tf.int64), axis=axes, keepdims=keepdims), d)
    return fn(xc, axis=axes, keepdims=keepdims)


def mean(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    x = t(x)
    if not (x.dtype in FLOATS or x.dtype in COMPLEX):
        x = tf.cast(x, tf.float32)  # Note: integer and bool input gives the default floating dtype
    axes = axes_of(axis, x.shape.rank)
    dims = x.shape.as_list() if x.shape.rank is not None else [None]
    reduced = dims if axes is None else [dims[a] for a in axes]
    if axes != [] and builtins.all(d is not None and d > 0 for d in reduced):
        return tf.reduce_mean(x, axis=axes, keepdims=keepdims)
    # Note: TF's reduce_mean of zero elements is 0; the standard's is NaN (0/0).
    return tf.reduce_sum(x, axis=axes, keepdims=keepdims) / tf.cast(_count(x, axes), x.dtype)


def _count(x: Any, axes: list[int] | None) -> Any:
    shape = tf.shape(x, out_type=tf.int64)
    if axes is None:
        return tf.reduce_prod(shape)
    if not axes:
        return tf.constant(1, tf.int64)
    return tf.reduce_prod(tf.gather(shape, tf.constant(axes, tf.int32)))


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: builtins.bool = False) -> Any:
    x = t(x)
    if not (x.dtype in FLOATS or x.dtype in COMPLEX):
        x = tf.cast(x, tf.float32)  # Note: integer and bool input gives the default floating dtype
    axes = axes_of(axis, x.shape.rank)
    m = mean(x, axis=axes, keepdims=True)
    dev = x - m
    sq = tf.math.real(dev * tf.math.conj(dev)) if x.dtype in COMPLEX else dev * dev
    n = _count(x, axes)
    # Note: TF has no Bessel correction; divide by N - correction ourselves (NaN when it is <= 0, like NumPy).
    denom = tf.cast(n, sq.dtype) - tf.constant(correction, sq.dtype)
    s = tf.reduce_sum(sq, axis=axes, keepdims=keepdims)
    return s / tf.where(denom > 0, denom, tf.constant(math.nan, sq.dtype) if denom.dtype.is_floating else denom)


def _check_nonempty(op: str, x: Any, axes: list[int] | None) -> None:
    shape = x.shape.as_list() if x.shape.rank is not None else [None]
    reduced = shape if axes is None else [shape[a] for a in axes]
    why = (f"cannot reduce over zero elements (shape {tuple(shape)}): {op} has no identity; "
           "check the size first or use a reduction with an identity")
    if 0 in reduced:
        raise EmptyReductionError(why)
    if None in reduced:
        # Note: inside tf.function a dimension unknown at trace time is checked when the graph runs (TF's
        # max of nothing is -inf, its argmax INT64_MAX): the call then raises tf.errors.InvalidArgumentError
        # with this same message, since a typed Python error cannot leave a running graph.
        tf.debugging.assert_positive(_count(x, axes), message=f"ua.{op} [tensorflow]: EmptyReductionError: {why}")


def _orderable(x: Any) -> Any:
    x = t(x)
    if x.dtype in COMPLEX:
        raise DTypeError(f"got a {x.dtype.name} array, but complex numbers have no order in the standard; "
                         "reduce the real part or the magnitude instead (ua.real(x), ua.abs(x))")
    return x


def _extreme(fn: Any, op: str, x: Any, axis: Any, keepdims: builtins.bool) -> Any:
    x = _orderable(x)
    axes = axes_of(axis, x.shape.rank)
    _check_nonempty(op, x, axes)
    if axes == []:
        return tf.identity(x)
    if x.dtype == bool_:
        return (tf.reduce_all if fn is tf.reduce_min else tf.reduce_any)(x, axis=axes, keepdims=keepdims)
    r = fn(x, axis=axes, keepdims=keepdims)
    if x.dtype in FLOATS:
        # Note: TF's reduce_max/min skip NaN; the standard propagates it.
        has_nan = tf.reduce_any(tf.math.is_nan(x), axis=axes, keepdims=keepdims)
        r = tf.where(has_nan, tf.constant(math.nan, x.dtype), r)
    return r


def _arg(fn: Any, op: str, x: Any, axis: int | None, keepdims: builtins.bool) -> Any:
    x = _orderable(x)
    if axis is None:
        flat = tf.reshape(x, [-1])
        r = _arg(fn, op, flat, 0, False)
        return tf.reshape(r, [1] * x.shape.rank) if keepdims else r
    ax = axes_of(axis, x.shape.rank)[0]  # type: ignore[index]
    _check_nonempty(op, x, [ax])
    m = _extreme(fn, op, x, ax, True)
    hit = tf.equal(x, m)
    if x.dtype in FLOATS:
        hit = hit | (tf.math.is_nan(x) & tf.math.is_nan(m))
    # Note: TF leaves the winner among ties unspecified; the standard wants the first occurrence.
    n = tf.shape(x, out_type=tf.int64)[ax]
    pos = tf.reshape(tf.range(n), [-1] + [1] * (x.shape.rank - ax - 1))
    return tf.reduce_min(tf.where(hit, pos, n), axis=ax, keepdims=keepdims)


def any(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    x = t(x)
    return tf.reduce_any(cast(x, bool_) if x.dtype == bool_ else tf.not_equal(x, 0),
                         axis=axes_of(axis, x.shape.rank), keepdims=keepdims)


def all(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    x = t(x)
    return tf.reduce_all(x if x.dtype == bool_ else tf.not_equal(x, 0),
                         axis=axes_of(axis, x.shape.rank), keepdims=keepdims)


def _cumulative(fn: Any, identity: int, x: Any, axis: int | None, dtype: Any, initial: builtins.bool) -> Any:
    x = t(x)
    ax = _xp_shared.cumulative_axis(axis, x.shape)
    d = _acc_dtype(x, dtype)
    xc = cast(x, d)
    out = widened(lambda v: fn(v, axis=ax), xc) if d in UNSIGNED or d in (tf.int8, tf.int16) else fn(xc, axis=ax)
    if initial:
        shape = tf.tensor_scatter_nd_update(tf.shape(out), [[ax]], [1])
        out = tf.concat([tf.fill(shape, tf.constant(identity, out.dtype)), out], axis=ax)
    return out


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    x = t(x)
    return tf.math.count_nonzero(tf.not_equal(x, tf.zeros((), x.dtype)), axis=axes_of(axis, x.shape.rank),
                                 keepdims=keepdims, dtype=tf.int64)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    x = t(x)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat([p if not isinstance(p, (int, float, builtins.bool)) else
                    tf.fill(tf.tensor_scatter_nd_update(tf.shape(x), [[axis % x.shape.rank]], [1]),
                            tf.constant(p, x.dtype)) for p in parts], axis=axis)
    return _xp_shared.differences(x, axis % x.shape.rank, n, bool_)


sum, prod, max, min, argmax, argmin, cumulative_sum, cumulative_prod, std = _xp_shared.statistics(  # noqa: A001
    __name__, (_sum_like, tf.reduce_sum, tf.reduce_prod), (_extreme, tf.reduce_max, tf.reduce_min),
    (_arg, tf.reduce_max, tf.reduce_min), (_cumulative, tf.math.cumsum, tf.math.cumprod), var, tf.sqrt)
