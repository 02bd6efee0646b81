"""TensorFlow's ua.at: a scatter onto the flat positions the index selects (the standard's indexing on a tensor of
positions), or a where() for a mask with one value."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from unarray._backends.tensorflow.manipulation import broadcast_arrays
from unarray._backends.updates import apply, is_mask, mask_of


def update(x: Any, idx: Any, op: str, v: Any) -> Any:
    import tensorflow as tf

    v = tf.cast(tf.convert_to_tensor(v), x.dtype)
    mask = mask_of(idx, x.shape.rank)
    if mask is not None and v.shape.rank == 0:
        return tf.where(mask, v if op == "set" else apply(tf.math, op, x, v), x)
    size = math.prod(x.shape)
    lin = tf_positions(tf, tf.reshape(tf.range(size, dtype=tf.int64), tf.shape(x)), idx)
    vals = tf.reshape(tf.broadcast_to(v, tf.shape(lin)), [-1])
    lin = tf.reshape(lin, [-1, 1])
    flat = tf.reshape(x, [-1])
    if op == "multiply":  # no scatter-multiply: the product of each position's updates (1 where none)
        out = flat * tf.math.unsorted_segment_prod(vals, lin[:, 0], size)
    else:
        scatter = {"set": tf.tensor_scatter_nd_update, "add": tf.tensor_scatter_nd_add,
                   "subtract": tf.tensor_scatter_nd_sub, "min": tf.tensor_scatter_nd_min,
                   "max": tf.tensor_scatter_nd_max}[op]
        out = scatter(flat, lin, vals)
    return tf.reshape(out, tf.shape(x))


def tf_positions(tf: Any, base: Any, idx: Any) -> Any:
    # base[idx] with the standard's indexing on a tensor of flat positions: basic indexing (TF's own), a
    # boolean mask over the leading axes, or integer arrays over the leading axes (broadcast together).
    parts = idx if isinstance(idx, tuple) else (idx,)
    arrays = [p for p in parts if hasattr(p, "shape") and not isinstance(p, (int, np.integer))]
    if not arrays:
        return base[idx]
    if len(parts) == 1 and is_mask(parts[0]):
        return tf.boolean_mask(base, parts[0])
    if len(arrays) == len(parts) and not any(is_mask(p) for p in parts):
        ints = [tf.cast(p, tf.int64) for p in parts]
        ints = [tf.where(i < 0, i + tf.shape(base, out_type=tf.int64)[k], i) for k, i in enumerate(ints)]
        return tf.gather_nd(base, tf.stack(broadcast_arrays(*ints), axis=-1))
    from unarray._errors import UnsupportedError

    raise UnsupportedError("TensorFlow takes basic indexing, one boolean mask, or integer arrays for the leading "
                           "axes (not mixed with slices); index in two steps", op="at", backend="tensorflow")
