# The array-API namespace over MLX: the searching, set, sorting and indexing functions, with the standard's
# semantics where MLX's differ (each with its reason). MLX has no data-dependent output shapes: nonzero and
# the unique_* functions read their input back and compute on the host through NumPy, which MLX refuses
# inside mx.compile (a typed refusal there).
from __future__ import annotations

import builtins
from typing import Any

import mlx.core as mx
import numpy as np

from unarray._backends import _xp_shared
from unarray._backends.mlx.creation import from_numpy
from unarray._backends.mlx.dtypes import INDEX, a, bool, cast, complex64, promote
from unarray._backends.mlx.statistical import total
from unarray._errors import ArgumentError, DTypeError, UnsupportedError

__all__ = ["argsort", "isin", "nonzero", "searchsorted", "sort", "take", "take_along_axis", "unique_all",
           "unique_counts", "unique_inverse", "unique_values", "where"]


def _host(op: str, x: Any) -> Any:
    try:
        return np.asarray(x) if x.dtype != mx.bfloat16 else np.asarray(x.astype(mx.float32))
    except ValueError as e:  # MLX refuses to evaluate inside mx.compile and vmap
        raise UnsupportedError(f"the size of {op}'s result depends on the values, which MLX cannot read inside "
                               "mx.compile; call it outside the compiled function", op=op, backend="mlx") from e


def _back(n: Any, like: Any) -> Any:
    return from_numpy(np.asarray(n), like)


def nonzero(x: Any, /) -> tuple[Any, ...]:
    x = a(x)
    if x.ndim == 0:
        raise ArgumentError("nonzero needs an array of at least 1 dimension (the standard forbids 0-D)")
    return tuple(_back(i, INDEX) for i in np.nonzero(_host("nonzero", x)))


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    p, q = promote(x1, x2)
    return mx.where(cast(a(condition), bool), p, q)


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    p, q = promote(x1, x2)
    if sorter is not None:
        p = mx.take(p, a(sorter))
    # Note: MLX's search returns uint32 indices; the standard's are the default index dtype.
    return mx.searchsorted(p, q, side=side).astype(INDEX)


def isin(x1: Any, x2: Any, /, *, invert: builtins.bool = False) -> Any:
    p, q = promote(x1, x2)
    found = total(mx.any, p.reshape(-1, 1) == q.reshape(1, -1), axis=1).reshape(p.shape) if q.size else \
        mx.zeros(p.shape, bool)
    return mx.logical_not(found) if invert else found


def _keys(x: Any) -> Any:
    if x.dtype == complex64:
        raise DTypeError("sorting complex arrays is not defined by the standard")
    return x.astype(mx.int8) if x.dtype == bool else x


def argsort(x: Any, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True) -> Any:
    x = a(x)
    k = _keys(x)
    if not descending:
        return mx.argsort(k, axis=axis).astype(INDEX)
    # Note: the standard's stable descending order keeps equal elements in input order, NaN first: the reversed
    # axis sorted ascending, then reversed back (MLX sorts NaN last).
    n = x.shape[axis]
    idx = mx.argsort(mx.flip(k, axis=axis), axis=axis).astype(INDEX)
    return (n - 1) - mx.flip(idx, axis=axis)


def sort(x: Any, /, *, axis: int = -1, descending: builtins.bool = False, stable: builtins.bool = True) -> Any:
    x = a(x)
    if not descending:
        return mx.sort(_keys(x), axis=axis).astype(x.dtype) if x.dtype == bool else mx.sort(_keys(x), axis=axis)
    return mx.take_along_axis(x, argsort(x, axis=axis, descending=True), axis=axis)


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    x = a(x)
    if axis is None:
        if x.ndim != 1:
            raise ArgumentError("take with axis=None needs a 1-D array; pass axis=")
        axis = 0
    return mx.take(x, a(indices), axis=axis)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    x, i = a(x), a(indices)
    n = x.shape[axis]
    # Note: MLX reads a negative index as out of range; the standard counts it from the end.
    if i.dtype not in (mx.uint8, mx.uint16, mx.uint32, mx.uint64):
        i = mx.where(i < 0, i + n, i)
    return mx.take_along_axis(x, i, axis=axis)


def _unique(x: Any, op: str) -> tuple[Any, Any, Any, Any]:
    x = a(x)
    h = _host(op, x)
    r = np.unique_all(h)
    values = from_numpy(r.values.astype(h.dtype), x.dtype)
    return values, _back(r.indices, INDEX), _back(r.inverse_indices.reshape(h.shape), INDEX), _back(r.counts, INDEX)


unique_values, unique_counts, unique_inverse, unique_all = _xp_shared.uniques(__name__, _unique)
