# The array-API namespace over MLX: the manipulation functions, with the standard's semantics where MLX's
# differ (each with its reason).
from __future__ import annotations

import builtins
from typing import Any

import mlx.core as mx

from unarray._backends import _xp_shared
from unarray._backends._xp_shared import axes_of
from unarray._backends.mlx.dtypes import a, cast, result_type
from unarray._errors import ArgumentError, ShapeError

__all__ = ["broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
           "reshape", "roll", "squeeze", "stack", "tile", "to_device", "unstack"]


def broadcast_to(x: Any, /, shape: Any) -> Any:
    return mx.broadcast_to(a(x), list(shape))


def broadcast_arrays(*arrays: Any) -> list[Any]:
    return list(mx.broadcast_arrays(*[a(x) for x in arrays]))


def same_dtype(arrays: Any) -> list[Any]:
    return _xp_shared.same_dtype([a(x) for x in arrays], result_type, cast)


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    xs = same_dtype(arrays)
    if axis is None:
        return mx.concatenate([x.reshape(-1) for x in xs], 0)
    return mx.concatenate(xs, axis)


def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    return mx.stack(same_dtype(arrays), axis)


def expand_dims(x: Any, /, axis: Any = 0) -> Any:
    x = a(x)
    axes = [axis] if isinstance(axis, int) else list(axis)
    nd = x.ndim + len(axes)
    for ax in axes:
        if not -nd <= ax < nd:
            raise ArgumentError(f"axis {ax} is out of range for a result of {nd} dimensions")
    return mx.expand_dims(x, axis if isinstance(axis, int) else sorted(ax % nd for ax in axes))


def flip(x: Any, /, *, axis: Any = None) -> Any:
    x = a(x)
    axes = axes_of(axis, x.ndim)
    return mx.flip(x, axis=axes) if axes != [] else mx.array(x)


def moveaxis(x: Any, source: Any, destination: Any, /) -> Any:
    x = a(x)
    src = axes_of(source, x.ndim) or []
    dst = axes_of(destination, x.ndim) or []
    if len(src) != len(dst):
        raise ArgumentError("source and destination need the same number of axes")
    return mx.transpose(x, _xp_shared.moved(x.ndim, src, dst))


def permute_dims(x: Any, /, axes: Any) -> Any:
    return mx.transpose(a(x), list(axes))


def reshape(x: Any, /, shape: Any, *, copy: builtins.bool | None = None) -> Any:
    out = mx.reshape(a(x), list(shape))
    return mx.array(out) if copy else out


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    x = a(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    if isinstance(repeats, int):
        return mx.repeat(x, repeats, axis=axis)
    # Note: MLX repeats by an int only; counts given as an array make a data-dependent shape (read back here).
    counts = [int(c) for c in a(repeats).reshape(-1).tolist()]
    if len(counts) == 1:
        return mx.repeat(x, counts[0], axis=axis)
    idx = mx.array([i for i, c in enumerate(counts) for _ in range(c)], dtype=mx.int64)
    return mx.take(x, idx, axis=axis)


def roll(x: Any, /, shift: Any, *, axis: Any = None) -> Any:
    x = a(x)
    if axis is None:
        return mx.roll(x.reshape(-1), shift).reshape(x.shape)
    return mx.roll(x, shift, axis)


def squeeze(x: Any, /, axis: Any) -> Any:
    x = a(x)
    axes = axes_of(axis, x.ndim) or []
    for ax in axes:
        if x.shape[ax] != 1:
            raise ShapeError(f"cannot squeeze axis {ax} of size {x.shape[ax]} (shape {tuple(x.shape)})")
    return mx.squeeze(x, axes) if axes else mx.array(x)


def tile(x: Any, repetitions: Any, /) -> Any:
    return mx.tile(a(x), list(repetitions))


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    x = a(x)
    return tuple(mx.unstack(x, axis=axis)) if x.shape[axis] else ()


def to_device(x: Any, device: Any, /, *, stream: Any = None) -> Any:
    # Note: MLX's arrays live in unified memory: a device picks where ops run, not where data lives.
    return a(x)
