# The array-API namespace over TensorFlow: the manipulation functions, with the
# standard's semantics where TensorFlow's differ (each with its reason).
from __future__ import annotations

import builtins
from typing import Any

import tensorflow as tf

from unarray._backends import _xp_shared
from unarray._backends._xp_shared import axes_of
from unarray._backends.tensorflow.dtypes import (
    SIGNED_OF,
    bool_,
    cast,
    result_type,
    t,
    uint8,
)
from unarray._errors import ArgumentError, ShapeError

__all__ = ["broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
           "reshape", "roll", "squeeze", "stack", "tile", "to_device", "unstack"]


def broadcast_to(x: Any, /, shape: Any) -> Any:
    return tf.broadcast_to(t(x), list(shape))


def broadcast_arrays(*arrays: Any) -> list[Any]:
    xs = [t(a) for a in arrays]
    shape = tf.shape(xs[0])
    for a in xs[1:]:
        shape = tf.broadcast_dynamic_shape(shape, tf.shape(a))
    return [tf.broadcast_to(a, shape) for a in xs]


def same_dtype(arrays: Any) -> list[Any]:
    return _xp_shared.same_dtype([t(a) for a in arrays], result_type, cast)


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    xs = same_dtype(arrays)
    if axis is None:
        return tf.concat([tf.reshape(a, [-1]) for a in xs], 0)
    return tf.concat(xs, axis)


def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    return tf.stack(same_dtype(arrays), axis)


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
    axes = axes_of(axis, x.shape.rank)
    return tf.reverse(x, list(range(x.shape.rank)) if axes is None else axes)


def moveaxis(x: Any, source: Any, destination: Any, /) -> Any:
    x = t(x)
    nd = x.shape.rank
    src = axes_of(source, nd) or []
    dst = axes_of(destination, nd) or []
    return tf.transpose(x, _xp_shared.moved(nd, src, dst))


def permute_dims(x: Any, /, axes: Any) -> Any:
    return tf.transpose(t(x), list(axes))


def reshape(x: Any, /, shape: Any, *, copy: builtins.bool | None = None) -> Any:
    out = tf.reshape(t(x), list(shape))
    return tf.raw_ops.DeepCopy(x=out) if copy else out


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    x = t(x)
    if axis is None:
        x, axis = tf.reshape(x, [-1]), 0
    reps = repeats if isinstance(repeats, int) else cast(t(repeats), tf.int64)
    if x.dtype in SIGNED_OF and x.dtype != uint8 and not x.dtype.is_floating:
        # Note: TF's Tile has no uint16/32/64 kernel: the bits repeat as the signed integer of their width.
        return tf.bitcast(tf.repeat(tf.bitcast(x, SIGNED_OF[x.dtype]), reps, axis=axis), x.dtype)
    return tf.repeat(x, reps, axis=axis)


def roll(x: Any, /, shift: Any, *, axis: Any = None) -> Any:
    x = t(x)
    if axis is None:
        return tf.reshape(tf.roll(tf.reshape(x, [-1]), shift, 0), tf.shape(x))
    return tf.roll(x, shift, axis)


def squeeze(x: Any, /, axis: Any) -> Any:
    x = t(x)
    axes = axes_of(axis, x.shape.rank) or []
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
