# What runs on a dask array's chunks, for the dask backend (backend.py) and its attention (attention.py), each op
# by the chunks' backend (NumPy's or CuPy's, which the registry hands the dask backend): the chunk product under
# the call's policy, the chunked matmul contraction, and var/std as per-chunk
# (count, mean, M2) merged by Chan's pairwise formula. Lazy: every function builds graph, none computes.
from __future__ import annotations

import functools
import math
import re
from typing import Any

import dask.array as _da
import numpy as np

# (dask ships no type hints)
da: Any = _da


def chunk_library(x: Any) -> str:
    """The library of a dask array's chunks ("numpy", "cupy", ...), read from its meta (no compute)."""
    return type(getattr(x, "_meta", None)).__module__.partition(".")[0]


# -- matmul: one product per pair of blocks along the contraction, then a sum (dask's own scheme) --------
def _block_matmul(a: Any, b: Any, backend: Any, policy: str) -> Any:
    # Note: the policy of the call that built the graph, applied by the chunks' backend when the graph runs.
    return backend.matmul(a, b, policy)[..., None, :]


def chunked_matmul(x1: Any, x2: Any, policy: str, backend: Any) -> Any:
    """``x1 @ x2`` lazily: per-block products (by ``backend``, the chunks') over the chunked contraction
    axis, summed by a tree."""
    one1, one2 = x1.ndim == 1, x2.ndim == 1
    a = x1[None, :] if one1 else x1
    b = x2[:, None] if one2 else x2
    if a.ndim < b.ndim:
        a = a[(None,) * (b.ndim - a.ndim)]
    elif b.ndim < a.ndim:
        b = b[(None,) * (a.ndim - b.ndim)]
    dt = np.result_type(x1.dtype, x2.dtype)
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    n = a.ndim
    lhs = tuple(range(n))
    rhs = (*range(n - 2), n - 1, n)
    out = da.blockwise(_block_matmul, tuple(range(n + 1)), a, lhs, b, rhs, adjust_chunks={n - 1: 1}, dtype=dt,
                       concatenate=False, backend=backend, policy=policy, meta=a._meta[..., None, :].astype(dt))
    out = out.sum(axis=-2, dtype=dt)
    if one1:
        out = out[..., 0, :]
    if one2:
        out = out[..., 0]
    return out


# -- var/std: per-chunk (count, mean, M2), merged by Chan's pairwise formula ---------------------------
def _moments(x: Any, axis: Any = None, keepdims: bool = True, computing_meta: bool = False, **kw: Any) -> Any:
    if computing_meta:
        return x
    n = math.prod(x.shape[a] for a in axis)
    acc = x.astype(np.float64)  # Note: moments accumulate in float64 (a float32 mean of 1e4 holds 3 digits)
    if n == 0:
        z = acc.sum(axis=axis, keepdims=True)
        return {"n": 0, "mean": z, "m2": z}
    mean = acc.mean(axis=axis, keepdims=True)
    d = acc - mean
    return {"n": n, "mean": mean, "m2": (d * d).sum(axis=axis, keepdims=True)}


def _leaves(parts: Any) -> list[Any]:
    if isinstance(parts, dict):
        return [parts]
    return [leaf for p in parts for leaf in _leaves(p)]


def _merge(parts: Any, axis: Any = None, keepdims: bool = True, computing_meta: bool = False, **kw: Any) -> Any:
    if computing_meta:
        return parts
    n, mean, m2 = 0, None, None
    for p in _leaves(parts):
        nb = p["n"]
        if nb == 0:
            continue
        if n == 0:
            n, mean, m2 = nb, p["mean"], p["m2"]
            continue
        tot = n + nb
        delta = p["mean"] - mean
        # Note: Chan et al.'s update: no sum of squares of raw values, so a large mean costs no digits.
        mean = mean + delta * (nb / tot)
        m2 = m2 + p["m2"] + delta * delta * (n * nb / tot)
        n = tot
    if n == 0:  # (every part empty: the first is the merge)
        return _leaves(parts)[0]
    return {"n": n, "mean": mean, "m2": m2}


def _variance(parts: Any, axis: Any = None, keepdims: bool = False, computing_meta: bool = False,
              correction: float = 0.0, root: bool = False, dtype: Any = None, **kw: Any) -> Any:
    if computing_meta:
        return parts
    m = _merge(parts, axis=axis)
    dof = m["n"] - correction
    out = m["m2"] / dof if dof > 0 else m["m2"] * float("nan")
    if root:
        out = out ** 0.5
    if not keepdims:
        out = out.squeeze(axis=axis)
    return out.astype(dtype, copy=False)


def stable_var(x: Any, axis: Any, correction: float, keepdims: bool, root: bool = False) -> Any:
    """Variance (or its root) of a real floating dask array, lazily, stable across chunks."""
    axes = tuple(range(x.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    if axes == ():
        dev = abs(x - x) ** 2  # Note: axis=() reduces nothing: one value per variance
        out = dev / (1 - correction) if 1 - correction > 0 else dev * math.nan
        return out ** 0.5 if root else out
    meta = x._meta.sum(axis=axes, keepdims=keepdims).astype(x.dtype)
    agg = functools.partial(_variance, correction=correction, root=root)
    return da.reduction(x, _moments, agg, axis=axes, keepdims=keepdims, dtype=x.dtype, combine=_merge,
                        concatenate=False, meta=meta,
                        name="unarray-std" if root else "unarray-var")


# -- ops that run per chunk through the chunks' own backend (its corrections included) -----------------
def _run_chunk_op(*blocks: Any, _fn: Any, _as_kw: tuple[str, ...] = (), _after: tuple[Any, ...] = (),
                  **kw: Any) -> Any:
    # _after: positional-only arguments after the operands (matrix_power's n)
    if _as_kw:  # trailing operands that the op takes by keyword (a tolerance per matrix)
        kw.update(zip(_as_kw, blocks[len(blocks) - len(_as_kw):], strict=True))
        blocks = blocks[:len(blocks) - len(_as_kw)]
    return _fn(*blocks, *_after, **kw)


def elementwise(fn: Any, *args: Any) -> Any:
    """``fn`` (an op of the chunks' backend) applied chunk by chunk (operands broadcast and aligned by dask), lazily."""
    return da.core.elemwise(functools.partial(_run_chunk_op, _fn=fn), *args)


def _run_typed(*blocks: Any, _fn: Any, _dtypes: Any, **kw: Any) -> Any:
    out = _run_chunk_op(*blocks, _fn=_fn, **kw)
    # Each block holds the declared dtype (NumPy's eig gives real eigenvalues where they all are real).
    if isinstance(_dtypes, tuple):
        return tuple(o.astype(d, copy=False) for o, d in zip(out, _dtypes, strict=True))
    return out.astype(_dtypes, copy=False)


def _core_chunk(a: Any, ncore: int, axes: Any) -> Any:
    if not isinstance(a, da.Array) or ncore == 0:
        return a
    core = range(a.ndim - ncore, a.ndim) if axes is None else [ax % a.ndim for ax in axes]
    return a.rechunk({ax: -1 for ax in core})


def per_matrix(fn: Any, signature: str, args: tuple[Any, ...], dtypes: Any, sizes: dict[str, int] | None = None,
               axes: Any = None, **kw: Any) -> Any:
    """``fn`` (an op of the chunks' backend) on each matrix (or vector) of a stack: the core axes of ``signature`` are
    rechunked to one chunk, the stack axes keep theirs (dask.array.apply_gufunc), lazily."""
    dtypes = tuple(np.dtype(d) for d in dtypes) if isinstance(dtypes, tuple) else np.dtype(dtypes)
    run = functools.partial(_run_typed, _fn=fn, _dtypes=dtypes, **kw)
    # Note: the core axes are made one chunk here: apply_gufunc's own rechunk gave a graph that dask could not
    # cull when only one of several outputs was computed ("Shapes do not align").
    cores = [len([d for d in g.split(",") if d]) for g in re.findall(r"\(([^)]*)\)", signature.split("->")[0])]
    args = tuple(_core_chunk(a, n, None if axes is None else axes[i]) for i, (a, n) in enumerate(zip(args, cores,
                                                                                                      strict=True)))
    # Note: apply_gufunc's rechunk divides each size by its largest chunk (ZeroDivisionError for an empty axis);
    # the core axes are one chunk already, so an empty operand goes without it.
    empty = any(isinstance(a, da.Array) and 0 in a.shape for a in args)
    return da.apply_gufunc(run, signature, *args, output_dtypes=dtypes, output_sizes=sizes, axes=axes,
                           allow_rechunk=not empty)


def take_along_axis(x: Any, indices: Any, axis: int, fn: Any) -> Any:
    """The standard's take_along_axis, lazily: ``x`` and ``indices`` broadcast over the other axes, chunked alike
    there, and whole along ``axis`` (where an index may point anywhere)."""
    nd = x.ndim
    ax = axis % nd
    shape = np.broadcast_shapes(tuple(1 if d == ax else n for d, n in enumerate(x.shape)),
                                tuple(1 if d == ax else n for d, n in enumerate(indices.shape)))
    x = da.broadcast_to(x, tuple(x.shape[d] if d == ax else n for d, n in enumerate(shape)))
    indices = da.broadcast_to(indices, tuple(indices.shape[d] if d == ax else n for d, n in enumerate(shape)))
    x = x.rechunk({ax: -1})
    indices = indices.rechunk(tuple(-1 if d == ax else c for d, c in enumerate(x.chunks)))
    return da.map_blocks(fn, x, indices, axis=ax, chunks=indices.chunks, dtype=x.dtype, meta=x._meta.astype(x.dtype))


def _eye_block(k: int = 0, dtype: Any = None, block_info: Any = None) -> Any:
    (r0, r1), (c0, c1) = block_info[None]["array-location"]
    return np.eye(r1 - r0, c1 - c0, k=k - (c0 - r0), dtype=dtype)


def eye(n_rows: int, n_cols: int, k: int, dtype: Any) -> Any:
    """The standard's eye as a dask array of NumPy blocks, each the part of the diagonal that crosses it."""
    chunks = da.core.normalize_chunks("auto", (n_rows, n_cols), dtype=dtype)
    return da.map_blocks(_eye_block, k=k, dtype=dtype, chunks=chunks, meta=np.empty((0, 0), dtype))


def _unique_part(block: Any, _i: int, _fn: Any) -> Any:
    # One result of the chunks' backend's unique_all on the whole array (one block): each NaN its own value.
    return _fn(block)[_i]


def unique_all(x: Any, fn: Any) -> tuple[Any, Any, Any, Any]:
    """The standard's unique_all, lazily: the array as one block through the chunks' backend (dask's own unique
    merges NaNs and miscounts them); values, indices and counts have unknown (NaN) sizes until computed."""
    flat = x.reshape((-1,)).rechunk(-1)
    one = functools.partial(flat.map_blocks, _unique_part, _fn=fn, chunks=((math.nan,),))
    values, indices, counts = (one(_i=0, dtype=x.dtype), one(_i=1, dtype=np.int64), one(_i=3, dtype=np.int64))
    inverse = flat.map_blocks(_unique_part, _i=2, _fn=fn, dtype=np.int64).reshape(x.shape)
    return values, indices, inverse, counts
