# The array-API namespace over MLX: the statistical functions (reductions, cumulative sums and products),
# all, any, count_nonzero and diff, with the standard's semantics where MLX's differ (each with its reason).
from __future__ import annotations

import builtins
import math
from typing import Any

import mlx.core as mx

from unarray._backends import _xp_shared
from unarray._backends._xp_shared import axes_of, cumulative_axis, differences
from unarray._backends.mlx.dtypes import (
    DEFAULT_FLOAT,
    DEFAULT_INT,
    FLOATS,
    INDEX,
    INTS,
    UNSIGNED,
    a,
    bool,
    cast,
    complex64,
    native,
    uint64,
)
from unarray._errors import DTypeError, EmptyReductionError

__all__ = ["all", "any", "argmax", "argmin", "count_nonzero", "cumulative_prod", "cumulative_sum", "diff", "max",
           "mean", "min", "prod", "std", "sum", "var"]


def total(fn: Any, x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    # Note: MLX's CPU reduce kernel can spin forever on an input with no elements, and its prod of zero elements
    # reads the empty buffer: every reduction here comes through this, which answers a zero-size input itself.
    if x.size:
        return fn(x, axis=axis, keepdims=keepdims)
    axes = list(range(x.ndim)) if axis is None else [ax % x.ndim for ax in ([axis] if isinstance(axis, int) else axis)]
    dtype = fn(mx.zeros((1,), dtype=x.dtype)).dtype  # lazy: only the result dtype is read, nothing runs
    return mx.full(_kept(x, axes, keepdims), mx.array(fn is mx.prod or fn is mx.all, dtype=dtype), dtype=dtype)


def _acc(x: Any, dtype: Any) -> Any:
    # Note: MLX sums small integers into int32/uint32; the standard's default integer here is int64.
    if dtype is not None:
        return native(dtype)
    if x.dtype == bool or x.dtype in INTS:
        return DEFAULT_INT
    return uint64 if x.dtype in UNSIGNED else x.dtype


def _sum_like(fn: Any, x: Any, axis: Any, dtype: Any, keepdims: builtins.bool) -> Any:
    x = a(x)
    axes = axes_of(axis, x.ndim)
    acc = _acc(x, dtype)
    if axes == []:
        return cast(x, acc)
    # Note: mx.sum and mx.prod widen small integers again (uint8 -> uint32); the result keeps the dtype asked.
    return total(fn, cast(x, acc), axes, keepdims).astype(acc)


def _floating(x: Any) -> Any:
    return x if x.dtype in FLOATS or x.dtype == complex64 else x.astype(DEFAULT_FLOAT)


def mean(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    x = _floating(a(x))
    axes = axes_of(axis, x.ndim)
    if axes == []:
        return mx.array(x)
    n = math.prod(x.shape) if axes is None else math.prod(x.shape[i] for i in axes)
    # Note: MLX's mean of zero elements is -NaN (sign bit set); the standard's is NaN (0/0).
    # (a complex fill must be complex: mx.full of a float NaN makes float32 whatever the dtype asked)
    return total(mx.sum, x, axes, keepdims) / n if n else mx.full(
        _kept(x, axes, keepdims), complex(math.nan, math.nan) if x.dtype == mx.complex64 else math.nan, x.dtype)


def _kept(x: Any, axes: list[int] | None, keepdims: builtins.bool) -> list[int]:
    axes = list(range(x.ndim)) if axes is None else axes
    return [1 if i in axes else s for i, s in enumerate(x.shape)] if keepdims else \
        [s for i, s in enumerate(x.shape) if i not in axes]


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: builtins.bool = False) -> Any:
    x = _floating(a(x))
    axes = axes_of(axis, x.ndim)
    axes = list(range(x.ndim)) if axes is None else axes
    n = math.prod(x.shape[i] for i in axes)
    m = total(mx.sum, x, axes, True) / n if n else x
    dev = x - m
    sq = mx.real(dev * mx.conj(dev)) if x.dtype == complex64 else dev * dev
    s = total(mx.sum, sq, axes, keepdims) if axes else sq
    # Note: MLX's ddof is an int; the standard's correction is any real (NaN where N - correction <= 0).
    denom = n - correction
    return s / denom if denom > 0 else mx.full(s.shape, math.nan, s.dtype)


def _ordered(op: str, x: Any, axes: list[int] | None) -> None:
    if x.dtype == complex64:
        raise DTypeError("got a complex64 array, but complex numbers have no order in the standard; "
                         "reduce the real part or the magnitude instead (ua.real(x), ua.abs(x))")
    reduced = x.shape if axes is None else [x.shape[i] for i in axes]
    if 0 in reduced:
        raise EmptyReductionError(f"cannot reduce over zero elements (shape {tuple(x.shape)}): {op} has no "
                                  "identity; check the size first or use a reduction with an identity")


def _extreme(fn: Any, op: str, x: Any, axis: Any, keepdims: builtins.bool) -> Any:
    x = a(x)
    axes = axes_of(axis, x.ndim)
    _ordered(op, x, axes)
    return mx.array(x) if axes == [] else total(fn, x, axes, keepdims)


def _arg(fn: Any, op: str, x: Any, axis: int | None, keepdims: builtins.bool) -> Any:
    x = a(x)
    axes = axes_of(axis, x.ndim)
    _ordered(op, x, axes)
    if x.size == 0:
        # Note: MLX refuses argmax/argmin of any empty array, even along a non-empty axis (the result is empty too).
        return mx.zeros(_kept(x, axes, keepdims), INDEX)
    if x.dtype in FLOATS:
        # Note: MLX's argmax/argmin skip NaN; the standard (as NumPy) returns the first NaN (argmax of the mask).
        nan = mx.isnan(x)
        hit = mx.argmax(nan.astype(mx.int8), axis=axis, keepdims=keepdims)
        found = total(mx.any, nan, axis=axis, keepdims=keepdims)
        return mx.where(found, hit, fn(x, axis=axis, keepdims=keepdims)).astype(INDEX)
    # Note: MLX's indices are uint32; the standard's are the default index dtype.
    return fn(x, axis=axis, keepdims=keepdims).astype(INDEX)


def any(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    x = a(x)
    axes = axes_of(axis, x.ndim)
    return (x != 0) if axes == [] else total(mx.any, x, axes, keepdims)


def all(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:  # noqa: A001
    x = a(x)
    axes = axes_of(axis, x.ndim)
    return (x != 0) if axes == [] else total(mx.all, x, axes, keepdims)


def _cumulative(fn: Any, identity: int, x: Any, axis: int | None, dtype: Any, initial: builtins.bool) -> Any:
    x = a(x)
    ax = cumulative_axis(axis, x.shape)
    out = fn(cast(x, _acc(x, dtype)), axis=ax)
    if initial:
        shape = list(out.shape)
        shape[ax] = 1
        out = mx.concatenate([mx.full(shape, identity, out.dtype), out], axis=ax)
    return out


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    x = a(x)
    return total(mx.sum, (x != 0).astype(INDEX), axes_of(axis, x.ndim), keepdims)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    x = a(x)
    ax = axis % x.ndim
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        edge = [*x.shape[:ax], 1, *x.shape[ax + 1:]]
        x = mx.concatenate([mx.full(edge, p, x.dtype) if isinstance(p, (int, float, builtins.bool)) else
                            cast(a(p), x.dtype) for p in parts], axis=ax)
    return differences(x, ax, n, bool)


sum, prod, max, min, argmax, argmin, cumulative_sum, cumulative_prod, std = _xp_shared.statistics(  # noqa: A001
    __name__, (_sum_like, mx.sum, mx.prod), (_extreme, mx.max, mx.min), (_arg, mx.argmax, mx.argmin),
    (_cumulative, mx.cumsum, mx.cumprod), var, mx.sqrt)
