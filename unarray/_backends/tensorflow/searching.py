# The array-API namespace over TensorFlow: the searching, set, sorting and indexing
# functions, with the standard's semantics where TensorFlow's differ (each with its reason).
from __future__ import annotations

import builtins
import math
from typing import Any

import tensorflow as tf

from unarray._backends import _xp_shared
from unarray._backends.tensorflow.dtypes import (
    COMPLEX,
    FLOATS,
    bool_,
    cast,
    promote,
    t,
    truth,
)
from unarray._errors import ArgumentError, DTypeError

__all__ = ["argsort", "isin", "nonzero", "searchsorted", "sort", "take", "take_along_axis", "unique_all",
           "unique_counts", "unique_inverse", "unique_values", "where"]


def nonzero(x: Any, /) -> tuple[Any, ...]:
    x = t(x)
    if x.shape.rank == 0:
        raise ArgumentError("nonzero needs an array of at least 1 dimension (the standard forbids 0-D)")
    idx = tf.where(tf.not_equal(x, tf.zeros((), x.dtype)))
    return tuple(idx[:, i] for i in range(x.shape.rank))


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    return tf.where(truth(t(condition)), a, b)


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    a, b = promote(x1, x2)
    if sorter is not None:
        a = tf.gather(a, t(sorter))
    floating = a.dtype in FLOATS
    if floating:
        # Note: TF's search sends a NaN query to the front; the standard's order puts NaN after +inf: search
        # keys where NaN is +inf, cap non-NaN queries at x1's non-NaN count, and place NaN queries after them.
        nan_a, nan_b = tf.math.is_nan(a), tf.math.is_nan(b)
        inf = tf.constant(math.inf, a.dtype)
        a, b = tf.where(nan_a, inf, a), tf.where(nan_b, inf, b)
    flat = tf.reshape(b, [1, -1])
    out = tf.reshape(tf.searchsorted(a[None, :], flat, side=side, out_type=tf.int64), tf.shape(b))
    if not floating:
        return out
    m = tf.reduce_sum(tf.cast(tf.logical_not(nan_a), tf.int64))
    nan_at = m if side == "left" else tf.size(a, out_type=tf.int64)
    return tf.where(nan_b, nan_at, tf.minimum(out, m))


def isin(x1: Any, x2: Any, /, *, invert: builtins.bool = False) -> Any:
    a, b = promote(x1, x2)
    s = tf.reshape(b, [-1])
    if s.dtype in FLOATS:  # Note: TF's sort puts NaN anywhere, which breaks the search; NaN is never found anyway.
        s = tf.boolean_mask(s, tf.logical_not(tf.math.is_nan(s)))
    s = tf.sort(s)
    flat = tf.reshape(a, [-1])
    i = tf.searchsorted(s, flat)
    n = tf.size(s, out_type=i.dtype)
    # (one element past the end, so that the gather is valid when nothing is left to search)
    found = tf.equal(tf.gather(tf.concat([s, tf.zeros([1], s.dtype)], 0), tf.minimum(i, n)), flat) & (i < n)
    found = tf.reshape(found, tf.shape(a))
    return tf.logical_not(found) if invert else found


def _keys(x: Any) -> Any:
    if x.dtype == bool_:
        return tf.cast(x, tf.int8)
    if x.dtype in COMPLEX:
        raise DTypeError("sorting complex arrays is not defined by the standard")
    if x.dtype in FLOATS:
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
    if x.dtype in FLOATS:
        # Note: TF orders NaN arbitrarily; the standard (like NumPy) sorts NaN last, and first when descending.
        nan_at = tf.cast(take_along_axis(tf.math.is_nan(x), idx, axis=axis), tf.int8)
        idx = take_along_axis(idx, tf.argsort(-nan_at if descending else nan_at, axis=axis, stable=True), axis=axis)
    return idx


def sort(x: Any, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True) -> Any:
    x = t(x)
    return take_along_axis(x, argsort(x, axis=axis, descending=descending, stable=stable), axis=axis)


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    x, i = t(x), cast(t(indices), tf.int64)
    if axis is None:
        if x.shape.rank != 1:
            raise ArgumentError("take with axis=None needs a 1-D array; pass axis=")
        axis = 0
    n = tf.shape(x, out_type=tf.int64)[axis]
    # Note: TF's gather rejects negative indices; the standard counts them from the end.
    return tf.gather(x, tf.where(i < 0, i + n, i), axis=axis)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    x, i = t(x), cast(t(indices), tf.int64)
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


def _unique(x: Any, op: str) -> tuple[Any, Any, Any, Any]:
    x = t(x)
    flat = tf.reshape(x, [-1])
    order = _complex_order(flat) if flat.dtype in (tf.complex64, tf.complex128) else argsort(flat)
    s = tf.gather(flat, order)
    # Note: the standard counts every NaN as distinct; a sorted run of equal values is one value.
    new = tf.concat([[True], tf.not_equal(s[1:], s[:-1])], 0)[: tf.size(s)]
    if s.dtype in FLOATS:
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


unique_values, unique_counts, unique_inverse, unique_all = _xp_shared.uniques(__name__, _unique)
