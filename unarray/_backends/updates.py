# ua.at and ua.apply_numpy per library: functional indexed updates (a new array; the input written only
# where the caller asked with copy=False) and a NumPy function run on the library's arrays (eager, traced
# through the library's callback, or lazily as one dask task). Imports no framework at the top: each
# function receives the backend and imports what its library already has loaded.
from __future__ import annotations

import math
from typing import Any

import numpy as np

# ua.at's ops -> NumPy ufunc whose .at applies every occurrence of a repeated index.
UFUNC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def host(x: Any) -> Any:
    return np.asarray(x)


def is_mask(part: Any) -> bool:
    return getattr(getattr(part, "dtype", None), "name", str(getattr(part, "dtype", ""))) in ("bool", "torch.bool")


def mask_of(idx: Any, ndim: int) -> Any:
    # The boolean mask of an index that is a mask of the array's full shape, else None (the where path).
    m = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
    if hasattr(m, "shape") and is_mask(m) and len(m.shape) == ndim:
        return m
    return None


def numpy_update(x: Any, idx: Any, op: str, v: Any) -> Any:
    # x is a writable NumPy (or CuPy) array, updated in place.
    if op == "set":
        x[idx] = v
    elif not type(x).__module__.startswith("cupy"):
        UFUNC[op].at(x, idx, v)
    else:
        import cupy

        ufunc = getattr(cupy, UFUNC[op].__name__)
        try:
            ufunc.at(x, idx, v)
        except (TypeError, NotImplementedError):  # CuPy's ufunc.at: no multiply, few dtypes (refused before writing)
            unbuffered_at(cupy, ufunc, x, idx, v)
    return x


def unbuffered_at(xp: Any, ufunc: Any, x: Any, idx: Any, v: Any) -> Any:
    """``ufunc.at(x, idx, v)`` in place from plain gathers and scatters, for a library whose ``ufunc.at`` lacks the
    op or dtype: NumPy's unbuffered semantics, every occurrence of a repeated position applied in index order.

    Round ``r`` applies each position's ``r``-th occurrence, so no round writes a position twice and each
    position sees its values in NumPy's order (the same rounding). ``xp`` is the array's module (NumPy's
    interface: ``argsort(kind="stable")``, ``searchsorted``)."""
    pos = xp.arange(x.size).reshape(x.shape)[idx]
    vals = xp.broadcast_to(xp.asarray(v, dtype=x.dtype), pos.shape).reshape(-1)
    pos = pos.reshape(-1)
    if pos.size == 0:
        return x
    order = xp.argsort(pos, kind="stable")
    pos, vals = pos[order], vals[order]
    rank = xp.arange(pos.size) - xp.searchsorted(pos, pos, side="left")  # occurrence number of each position
    flat = x.reshape(-1) if x.flags.c_contiguous else xp.ascontiguousarray(x).reshape(-1)
    for r in range(int(rank.max()) + 1):
        sel = rank == r
        p = pos[sel]
        flat[p] = ufunc(flat[p], vals[sel])
    if not x.flags.c_contiguous:  # flat was a copy: write it back
        x[...] = flat.reshape(x.shape)
    return x


def torch_update(x: Any, idx: Any, op: str, v: Any, in_place: bool) -> Any:
    import torch

    out = x if in_place else x.clone(memory_format=torch.contiguous_format)
    v = torch.as_tensor(v, dtype=x.dtype, device=x.device)
    if op == "set":
        out[idx] = v
        return out
    # Every occurrence of a repeated index applies: scatter onto the flat positions the index selects.
    lin = torch.arange(x.numel(), device=x.device).reshape(x.shape)[idx]
    vals = torch.broadcast_to(v, lin.shape).reshape(-1)
    lin = lin.reshape(-1)
    flat = out.view(-1) if out.is_contiguous() else out.reshape(-1)
    if op == "add":
        flat.index_add_(0, lin, vals)
    elif op == "subtract":
        flat.index_add_(0, lin, vals, alpha=-1)
    else:
        flat.scatter_reduce_(0, lin, vals, reduce={"multiply": "prod", "min": "amin", "max": "amax"}[op])
    if flat.data_ptr() != out.data_ptr():
        out.copy_(flat.reshape(x.shape))
    return out


def jax_update(x: Any, idx: Any, op: str, v: Any) -> Any:
    import jax.numpy as jnp

    v = jnp.asarray(v, dtype=x.dtype)
    mask = mask_of(idx, x.ndim)
    if mask is not None and v.ndim == 0:  # Note: a mask under jax.jit selects a traced count; where() does not
        return jnp.where(mask, v if op == "set" else apply(jnp, op, x, v), x)
    ref = x.at[idx]
    return getattr(ref, op)(v)


def apply(xp: Any, op: str, x: Any, v: Any) -> Any:
    if op == "min":
        return xp.minimum(x, v)
    if op == "max":
        return xp.maximum(x, v)
    return getattr(xp, op)(x, v)


def tf_update(x: Any, idx: Any, op: str, v: Any) -> Any:
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
        return tf.gather_nd(base, tf.stack(_broadcast(tf, ints), axis=-1))
    from unarray._errors import UnsupportedError

    raise UnsupportedError("TensorFlow takes basic indexing, one boolean mask, or integer arrays for the leading "
                           "axes (not mixed with slices); index in two steps", op="at", backend="tensorflow")


def _broadcast(tf: Any, ints: list[Any]) -> list[Any]:
    shape = tf.shape(ints[0])
    for i in ints[1:]:
        shape = tf.broadcast_dynamic_shape(shape, tf.shape(i))
    return [tf.broadcast_to(i, shape) for i in ints]

