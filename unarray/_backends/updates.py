# ua.at and ua.apply_numpy's generic paths: functional indexed updates (a new array; the input written only
# where the caller asked with copy=False) on NumPy's ufunc.at, the index rules every library's own update reads
# (a mask, one value), and a NumPy function run on a library's arrays. A library's own update is in its package
# (<lib>/at.py: torch's, JAX's, TensorFlow's). Imports no framework.
from __future__ import annotations

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


def apply(xp: Any, op: str, x: Any, v: Any) -> Any:
    return getattr(xp, {"min": "minimum", "max": "maximum"}.get(op, op))(x, v)
