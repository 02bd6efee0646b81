# The array-API namespace over TensorFlow, part two: reductions, manipulation,
# searching, sets, sorting, indexing and matrix products, with the standard's
# semantics where TensorFlow's differ (each with its reason).
from __future__ import annotations

import builtins
import math
from typing import Any

import tensorflow as tf

from unarray._backends.tensorflow.elementwise import (
    _COMPLEX,
    _FLOATS,
    _UNSIGNED,
    DEFAULT_INT,
    UniqueAllResult,
    UniqueCountsResult,
    UniqueInverseResult,
    _cast,
    _widened,
    promote,
    result_type,
    t,
)
from unarray._errors import ArgumentError, DTypeError, EmptyReductionError, ShapeError

__all__ = [
    "all", "any", "argmax", "argmin", "argsort", "broadcast_arrays", "broadcast_to", "concat", "count_nonzero",
    "cumulative_prod", "cumulative_sum", "diff", "expand_dims", "flip", "isin", "matmul", "matrix_transpose",
    "max", "mean", "min", "moveaxis", "nonzero", "permute_dims", "prod", "repeat", "reshape", "roll",
    "searchsorted", "sort", "squeeze", "stack", "std", "sum", "take", "take_along_axis", "tensordot", "tile",
    "to_device", "unique_all", "unique_counts", "unique_inverse", "unique_values", "unstack", "var", "vecdot",
    "where",
]

bool_ = tf.bool


def _axes(axis: Any, ndim: int) -> list[int] | None:
    if axis is None:
        return None
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not -ndim <= a < builtins.max(ndim, 1):
            raise ArgumentError(f"axis {a} is out of range for an array of {ndim} dimensions")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ArgumentError(f"repeated axis in {axis!r}")
    return out


def _keep(r: Any, x: Any, axes: list[int] | None, keepdims: builtins.bool) -> Any:
    if not keepdims:
        return r
    nd = x.shape.rank
    if axes is None:
        return tf.reshape(r, [1] * nd)
    for a in sorted(axes):
        r = tf.expand_dims(r, a)
    return r


def _acc_dtype(x: Any, dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    if x.dtype == bool_ or (x.dtype.is_integer and x.dtype not in _UNSIGNED):
        return DEFAULT_INT
    if x.dtype in _UNSIGNED:
        return tf.uint64
    return x.dtype


# -- statistical ----------------------------------------------------------------------------
def _sum_like(fn: Any, x: Any, axis: Any, dtype: Any, keepdims: builtins.bool) -> Any:
    x = t(x)
    d = _acc_dtype(x, dtype)
    axes = _axes(axis, x.shape.rank)
    xc = _cast(x, d)
    if d == tf.uint64:
        # Note: no uint64 reduction kernels; int64 sums wrap identically mod 2**64.
        return tf.bitcast(fn(tf.bitcast(xc, tf.int64), axis=axes, keepdims=keepdims), tf.uint64)
    if d in _UNSIGNED or d in (tf.int8, tf.int16):
        return tf.cast(fn(tf.cast(xc, tf.int64), axis=axes, keepdims=keepdims), d)
    return fn(xc, axis=axes, keepdims=keepdims)


def sum(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    return _sum_like(tf.reduce_sum, x, axis, dtype, keepdims)


def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: builtins.bool = False) -> Any:
    return _sum_like(tf.reduce_prod, x, axis, dtype, keepdims)


def mean(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    x = t(x)
    if not (x.dtype in _FLOATS or x.dtype in _COMPLEX):
        raise DTypeError(f"mean needs a floating array, got {x.dtype.name}; cast with ua.astype first")
    axes = _axes(axis, x.shape.rank)
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
    if not (x.dtype in _FLOATS or x.dtype in _COMPLEX):
        raise DTypeError(f"var needs a floating array, got {x.dtype.name}; cast with ua.astype first")
    axes = _axes(axis, x.shape.rank)
    m = mean(x, axis=axes, keepdims=True)
    dev = x - m
    sq = tf.math.real(dev * tf.math.conj(dev)) if x.dtype in _COMPLEX else dev * dev
    n = _count(x, axes)
    # Note: TF has no Bessel correction; divide by N - correction ourselves (NaN when it is <= 0, like NumPy).
    denom = tf.cast(n, sq.dtype) - tf.constant(correction, sq.dtype)
    s = tf.reduce_sum(sq, axis=axes, keepdims=keepdims)
    return s / tf.where(denom > 0, denom, tf.constant(math.nan, sq.dtype) if denom.dtype.is_floating else denom)


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: builtins.bool = False) -> Any:
    return tf.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


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


def _extreme(fn: Any, op: str, x: Any, axis: Any, keepdims: builtins.bool) -> Any:
    x = t(x)
    if x.dtype in _COMPLEX:
        raise DTypeError(f"got a {x.dtype.name} array, but complex numbers have no order in the standard; "
                         "reduce the real part or the magnitude instead (ua.real(x), ua.abs(x))")
    axes = _axes(axis, x.shape.rank)
    _check_nonempty(op, x, axes)
    if axes == []:
        return tf.identity(x)
    if x.dtype == bool_:
        r = (tf.reduce_all if fn is tf.reduce_min else tf.reduce_any)(x, axis=axes, keepdims=keepdims)
        return r
    r = fn(x, axis=axes, keepdims=keepdims)
    if x.dtype in _FLOATS:
        # Note: TF's reduce_max/min skip NaN; the standard propagates it.
        has_nan = tf.reduce_any(tf.math.is_nan(x), axis=axes, keepdims=keepdims)
        r = tf.where(has_nan, tf.constant(math.nan, x.dtype), r)
    return r


def max(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    return _extreme(tf.reduce_max, "max", x, axis, keepdims)


def min(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    return _extreme(tf.reduce_min, "min", x, axis, keepdims)


def _arg(fn: Any, op: str, x: Any, axis: int | None, keepdims: builtins.bool) -> Any:
    x = t(x)
    if x.dtype in _COMPLEX:
        raise DTypeError(f"got a {x.dtype.name} array, but complex numbers have no order in the standard; "
                         "reduce the real part or the magnitude instead (ua.real(x), ua.abs(x))")
    if axis is None:
        flat = tf.reshape(x, [-1])
        r = _arg(fn, op, flat, 0, False)
        return tf.reshape(r, [1] * x.shape.rank) if keepdims else r
    ax = _axes(axis, x.shape.rank)[0]  # type: ignore[index]
    _check_nonempty(op, x, [ax])
    m = _extreme(fn, op, x, ax, True)
    hit = tf.equal(x, m)
    if x.dtype in _FLOATS:
        hit = hit | (tf.math.is_nan(x) & tf.math.is_nan(m))
    # Note: TF leaves the winner among ties unspecified; the standard wants the first occurrence.
    n = tf.shape(x, out_type=tf.int64)[ax]
    pos = tf.reshape(tf.range(n), [-1] + [1] * (x.shape.rank - ax - 1))
    return tf.reduce_min(tf.where(hit, pos, n), axis=ax, keepdims=keepdims)


def argmax(x: Any, /, *, axis: int | None = None, keepdims: builtins.bool = False) -> Any:
    return _arg(tf.reduce_max, "argmax", x, axis, keepdims)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: builtins.bool = False) -> Any:
    return _arg(tf.reduce_min, "argmin", x, axis, keepdims)


def any(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    x = t(x)
    return tf.reduce_any(_cast(x, bool_) if x.dtype == bool_ else tf.not_equal(x, 0),
                         axis=_axes(axis, x.shape.rank), keepdims=keepdims)


def all(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    x = t(x)
    return tf.reduce_all(x if x.dtype == bool_ else tf.not_equal(x, 0),
                         axis=_axes(axis, x.shape.rank), keepdims=keepdims)


def _cumulative(fn: Any, identity: int, x: Any, axis: int | None, dtype: Any, initial: builtins.bool) -> Any:
    x = t(x)
    if axis is None:
        if x.shape.rank != 1:
            raise ArgumentError(f"axis=None needs a 1-D array, got shape {tuple(x.shape)}; pass axis=")
        axis = 0
    ax = _axes(axis, x.shape.rank)[0]  # type: ignore[index]
    d = _acc_dtype(x, dtype)
    xc = _cast(x, d)
    out = _widened(lambda v: fn(v, axis=ax), xc) if d in _UNSIGNED or d in (tf.int8, tf.int16) else fn(xc, axis=ax)
    if initial:
        shape = tf.tensor_scatter_nd_update(tf.shape(out), [[ax]], [1])
        out = tf.concat([tf.fill(shape, tf.constant(identity, out.dtype)), out], axis=ax)
    return out


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: builtins.bool = False) -> Any:
    return _cumulative(tf.math.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: builtins.bool = False) -> Any:
    return _cumulative(tf.math.cumprod, 1, x, axis, dtype, include_initial)


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    x = t(x)
    return tf.math.count_nonzero(tf.not_equal(x, tf.zeros((), x.dtype)), axis=_axes(axis, x.shape.rank),
                                 keepdims=keepdims, dtype=tf.int64)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    x = t(x)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat([p if not isinstance(p, (int, float, builtins.bool)) else
                    tf.fill(tf.tensor_scatter_nd_update(tf.shape(x), [[axis % x.shape.rank]], [1]),
                            tf.constant(p, x.dtype)) for p in parts], axis=axis)
    ax = axis % x.shape.rank
    for _ in range(n):
        hi = [slice(None)] * x.shape.rank
        lo = [slice(None)] * x.shape.rank
        hi[ax], lo[ax] = slice(1, None), slice(None, -1)
        x = tf.not_equal(x[tuple(hi)], x[tuple(lo)]) if x.dtype == bool_ else x[tuple(hi)] - x[tuple(lo)]
    return x


# -- linear algebra -------------------------------------------------------------------------
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
    if a.dtype in _UNSIGNED or a.dtype in (tf.int8, tf.int16):
        # Note: TF has integer matmul kernels for int32/int64 only.
        out = _widened(tf.linalg.matmul, a, b)
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
    if a.dtype in _UNSIGNED or a.dtype in (tf.int8, tf.int16):
        return _widened(lambda p, q: tf.tensordot(p, q, axes), a, b)
    if isinstance(axes, int) and axes == 0:
        return tf.tensordot(a, b, 0)
    return tf.tensordot(a, b, axes)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    a, b = promote(x1, x2)
    if a.shape[axis] is not None and b.shape[axis] is not None and a.shape[axis] != b.shape[axis]:
        raise ShapeError(f"vecdot: sizes along axis {axis} differ: {tuple(a.shape)} and {tuple(b.shape)}")
    if axis >= 0:
        raise ArgumentError("vecdot takes a negative axis (counted from the end, as the standard asks)")
    prod_ = (tf.math.conj(a) if a.dtype in _COMPLEX else a) * b
    return sum(prod_, axis=axis, dtype=prod_.dtype)


# -- manipulation ---------------------------------------------------------------------------
def broadcast_to(x: Any, /, shape: Any) -> Any:
    return tf.broadcast_to(t(x), list(shape))


def broadcast_arrays(*arrays: Any) -> list[Any]:
    xs = [t(a) for a in arrays]
    shape = tf.shape(xs[0])
    for a in xs[1:]:
        shape = tf.broadcast_dynamic_shape(shape, tf.shape(a))
    return [tf.broadcast_to(a, shape) for a in xs]


def _same_dtype(arrays: Any) -> list[Any]:
    xs = [t(a) for a in arrays]
    if len({a.dtype for a in xs}) > 1:
        d = result_type(*xs)
        xs = [_cast(a, d) for a in xs]
    return xs


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    xs = _same_dtype(arrays)
    if axis is None:
        return tf.concat([tf.reshape(a, [-1]) for a in xs], 0)
    return tf.concat(xs, axis)


def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    return tf.stack(_same_dtype(arrays), axis)


def expand_dims(x: Any, /, axis: Any = 0) -> Any:
    x = t(x)
    if isinstance(axis, int):
        nd = x.shape.rank + 1
        if not -nd <= axis < nd:
            raise ArgumentError(f"axis {axis} is out of range for a result of {nd} dimensions")
        return tf.expand_dims(x, axis)
    nd = x.shape.rank + len(axis)
    for a in sorted(a % nd for a in axis):
        x = tf.expand_dims(x, a)
    return x


def flip(x: Any, /, *, axis: Any = None) -> Any:
    x = t(x)
    axes = _axes(axis, x.shape.rank)
    return tf.reverse(x, list(range(x.shape.rank)) if axes is None else axes)


def moveaxis(x: Any, source: Any, destination: Any, /) -> Any:
    x = t(x)
    nd = x.shape.rank
    src = _axes(source, nd) or []
    dst = _axes(destination, nd) or []
    order = [i for i in range(nd) if i not in src]
    for d_, s in sorted(zip(dst, src, strict=True)):
        order.insert(d_, s)
    return tf.transpose(x, order)


def permute_dims(x: Any, /, axes: Any) -> Any:
    return tf.transpose(t(x), list(axes))


def reshape(x: Any, /, shape: Any, *, copy: builtins.bool | None = None) -> Any:
    out = tf.reshape(t(x), list(shape))
    return tf.raw_ops.DeepCopy(x=out) if copy else out


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    x = t(x)
    if axis is None:
        x, axis = tf.reshape(x, [-1]), 0
    return tf.repeat(x, repeats if isinstance(repeats, int) else _cast(t(repeats), tf.int64), axis=axis)


def roll(x: Any, /, shift: Any, *, axis: Any = None) -> Any:
    x = t(x)
    if axis is None:
        return tf.reshape(tf.roll(tf.reshape(x, [-1]), shift, 0), tf.shape(x))
    return tf.roll(x, shift, axis)


def squeeze(x: Any, /, axis: Any) -> Any:
    x = t(x)
    axes = _axes(axis, x.shape.rank) or []
    for a in axes:
        if x.shape[a] is not None and x.shape[a] != 1:
            raise ShapeError(f"cannot squeeze axis {a} of size {x.shape[a]} (shape {tuple(x.shape)})")
    return tf.squeeze(x, axes) if axes else tf.identity(x)


def tile(x: Any, repetitions: Any, /) -> Any:
    x = t(x)
    reps = list(repetitions)
    nd = builtins.max(len(reps), x.shape.rank)
    x = tf.reshape(x, [1] * (nd - x.shape.rank) + x.shape.as_list())
    reps = [1] * (nd - len(reps)) + reps
    if x.dtype == tf.uint16 or x.dtype == bool_:
        return tf.cast(tf.tile(tf.cast(x, tf.int32), reps), x.dtype)
    return tf.tile(x, reps)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    return tuple(tf.unstack(t(x), axis=axis))


def to_device(x: Any, device: Any, /, *, stream: Any = None) -> Any:
    with tf.device(device):
        return tf.identity(t(x))


# -- searching, sets, sorting, indexing -------------------------------------------------------
def nonzero(x: Any, /) -> tuple[Any, ...]:
    x = t(x)
    if x.shape.rank == 0:
        raise ArgumentError("nonzero needs an array of at least 1 dimension (the standard forbids 0-D)")
    idx = tf.where(tf.not_equal(x, tf.zeros((), x.dtype)))
    return tuple(idx[:, i] for i in range(x.shape.rank))


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    return tf.where(_cast(t(condition), bool_), a, b)


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    a, b = promote(x1, x2)
    if sorter is not None:
        a = tf.gather(a, t(sorter))
    flat = tf.reshape(b, [1, -1])
    out = tf.searchsorted(a[None, :], flat, side=side, out_type=tf.int64)
    return tf.reshape(out, tf.shape(b))


def isin(x1: Any, x2: Any, /, *, invert: builtins.bool = False) -> Any:
    a, b = promote(x1, x2)
    s = tf.sort(tf.reshape(b, [-1]))
    flat = tf.reshape(a, [-1])
    i = tf.searchsorted(s, flat)
    n = tf.size(s)
    found = tf.equal(tf.gather(s, tf.minimum(i, tf.maximum(n - 1, 0))), flat) & (i < n)
    found = tf.reshape(found, tf.shape(a))
    return tf.logical_not(found) if invert else found


def _keys(x: Any) -> Any:
    if x.dtype == bool_:
        return tf.cast(x, tf.int8)
    if x.dtype in _COMPLEX:
        raise DTypeError("sorting complex arrays is not defined by the standard")
    if x.dtype in _FLOATS:
        return tf.where(tf.math.is_nan(x), tf.constant(math.inf, x.dtype), x)
    return x


def argsort(x: Any, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True) -> Any:
    x = t(x)
    k = _keys(x)
    if descending:
        # Note: TF's descending sort reverses ties; sorting the reversed axis ascending and reversing back
        # gives the standard's stable descending order (equal elements keep their input order).
        n = tf.shape(x, out_type=tf.int64)[axis]
        idx = n - 1 - tf.reverse(tf.cast(tf.argsort(tf.reverse(k, [axis]), axis=axis, stable=True), tf.int64), [axis])
    else:
        idx = tf.cast(tf.argsort(k, axis=axis, stable=True), tf.int64)
    if x.dtype in _FLOATS:
        # Note: TF orders NaN arbitrarily; the standard (like NumPy) sorts NaN last.
        nan_at = tf.cast(take_along_axis(tf.math.is_nan(x), idx, axis=axis), tf.int8)
        idx = take_along_axis(idx, tf.argsort(nan_at, axis=axis, stable=True), axis=axis)
    return idx


def sort(x: Any, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True) -> Any:
    x = t(x)
    return take_along_axis(x, argsort(x, axis=axis, descending=descending, stable=stable), axis=axis)


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    x, i = t(x), _cast(t(indices), tf.int64)
    if axis is None:
        if x.shape.rank != 1:
            raise ArgumentError("take with axis=None needs a 1-D array; pass axis=")
        axis = 0
    n = tf.shape(x, out_type=tf.int64)[axis]
    # Note: TF's gather rejects negative indices; the standard counts them from the end.
    return tf.gather(x, tf.where(i < 0, i + n, i), axis=axis)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    x, i = t(x), _cast(t(indices), tf.int64)
    nd = x.shape.rank
    ax = axis % nd
    n = tf.shape(x, out_type=tf.int64)[ax]
    i = tf.where(i < 0, i + n, i)
    # Move the axis last and broadcast the batch dimensions, then gather per row.
    xm = tf.experimental.numpy.moveaxis(x, ax, -1)
    im = tf.experimental.numpy.moveaxis(i, ax, -1)
    batch = tf.broadcast_dynamic_shape(tf.shape(xm)[:-1], tf.shape(im)[:-1])
    xm = tf.broadcast_to(xm, tf.concat([batch, tf.shape(xm)[-1:]], 0))
    im = tf.broadcast_to(im, tf.concat([batch, tf.shape(im)[-1:]], 0))
    out = tf.gather(xm, im, batch_dims=nd - 1, axis=-1)
    return tf.experimental.numpy.moveaxis(out, -1, ax)


def _unique(x: Any) -> tuple[Any, Any, Any, Any]:
    x = t(x)
    flat = tf.reshape(x, [-1])
    order = _complex_order(flat) if flat.dtype in (tf.complex64, tf.complex128) else argsort(flat)
    s = tf.gather(flat, order)
    # Note: the standard counts every NaN as distinct; a sorted run of equal values is one value.
    new = tf.concat([[True], tf.not_equal(s[1:], s[:-1])], 0)[: tf.size(s)]
    if s.dtype in _FLOATS:
        new = new | tf.math.is_nan(s)
    elif s.dtype in (tf.complex64, tf.complex128):
        new = new | tf.math.is_nan(tf.math.real(s)) | tf.math.is_nan(tf.math.imag(s))
    seg = tf.cumsum(tf.cast(new, tf.int64)) - 1
    nseg = tf.reduce_sum(tf.cast(new, tf.int64))
    values = tf.boolean_mask(s, new)
    counts = tf.math.unsorted_segment_sum(tf.ones_like(seg), seg, nseg)
    first = tf.math.unsorted_segment_min(order, seg, nseg)
    inverse = tf.scatter_nd(order[:, None], seg, tf.shape(order, out_type=tf.int64))
    return values, first, tf.reshape(inverse, tf.shape(x)), counts


def _complex_order(flat: Any) -> Any:
    # Note: TF sorts no complex tensor; equal values only need to be adjacent: by real part, then imaginary.
    by_imag = argsort(tf.math.imag(flat), stable=True)
    return tf.gather(by_imag, argsort(tf.gather(tf.math.real(flat), by_imag), stable=True))


def unique_values(x: Any, /) -> Any:
    return _unique(x)[0]


def unique_counts(x: Any, /) -> Any:
    v, _, _, c = _unique(x)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Any, /) -> Any:
    v, _, inv, _ = _unique(x)
    return UniqueInverseResult(v, inv)


def unique_all(x: Any, /) -> Any:
    return UniqueAllResult(*_unique(x))


