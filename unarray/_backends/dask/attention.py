# Attention over chunked sequences for the dask backend: one online-softmax partial (running max, row sum,
# weighted values) per pair of query chunk and key chunk, merged by a tree over the key chunks, then
# normalised. The graph is built here from the chunk structure (no compute); each task holds one query
# chunk, one key/value chunk, their score block and the partial states, so memory is bounded by the chunk
# sizes and never by Sq x Sk. With is_causal, key chunks wholly right of a query chunk's diagonal make no
# task. Chunks run in NumPy (CPU) or CuPy (CUDA, matmul under the call's precision policy).
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from unarray._backends._nn import HALF, Plan
from unarray._backends.dask.chunks import chunk_library, da

_FAN_IN = 4  # partial states merged per task of the tree over key chunks


def plan(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str, policy: str,
         backend: Any) -> Plan:
    """The lazy graph's builder, :func:`attention`, and the chunk structure it lays its tasks out by; ``backend``:
    the chunks' (their products run under ``policy`` there)."""
    return Plan(attention, lambda f: f(q, k, v, mask, is_causal, scale, layout, policy, backend),
                lambda: _facts(q, k, layout))


def _facts(q: Any, k: Any, layout: str) -> str:
    cq = _chunks_of(q, layout)
    ck = _chunks_of(k, layout)
    return (f"(unarray dask blocked online-softmax: {chunk_library(q)} chunks, {len(cq)} query x {len(ck)} key "
            f"chunks of at most {max(cq, default=0)} x {max(ck, default=0)}, tree merge of the key-chunk partials "
            "over dask.array; lazy, memory bounded by the chunk sizes)")


def _chunks_of(x: Any, layout: str) -> tuple[int, ...]:
    return tuple(x.chunks[-3] if layout == "bshd" else x.chunks[-2])


def _bhsd(x: Any) -> Any:
    n = x.ndim
    return da.transpose(x, (*range(n - 3), n - 2, n - 3, n - 1))


def attention(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str,
              policy: str, backend: Any) -> Any:
    """Lazy scaled-dot-product attention of dask arrays (shapes already validated by the front end)."""
    if layout == "bshd":
        q, k, v = _bhsd(q), _bhsd(k), _bhsd(v)  # Note: the mask is (*B, Hq, Sq, Sk) in both layouts
    nd = q.ndim
    batch = np.broadcast_shapes(q.shape[:-3], k.shape[:-3], v.shape[:-3])
    hq, sq, d = q.shape[-3:]
    hk, sk, dv = k.shape[-3], k.shape[-2], v.shape[-1]
    q = da.broadcast_to(q, (*batch, hq, sq, d))
    k = da.broadcast_to(k, (*batch, hk, sk, d))
    v = da.broadcast_to(v, (*batch, hk, sk, dv))
    if hq != hk:  # grouped-query heads: each key head serves hq // hk query heads
        k, v = da.repeat(k, hq // hk, axis=-3), da.repeat(v, hq // hk, axis=-3)
    q = q.rechunk({nd - 1: -1})
    lead = {i: q.chunks[i] for i in range(nd - 2)}
    k = k.rechunk({**lead, nd - 1: -1})
    v = v.rechunk({**lead, nd - 2: k.chunks[nd - 2], nd - 1: -1})
    target = (*q.chunks[:-1], k.chunks[-2])
    additive = False
    if mask is not None:
        additive = mask.dtype != np.bool_
        pad = len(batch) + 3 - mask.ndim
        own = {i: (target[i + pad] if mask.shape[i] != 1 else (1,)) for i in range(mask.ndim)}
        mask = da.broadcast_to(mask.rechunk(own), (*batch, hq, sq, sk), chunks=target)
    dtype = np.dtype(q.dtype)
    name = "unarray-attention-" + tokenize(q, k, v, mask, is_causal, scale, policy)
    dsk = _graph(name, q, k, v, mask, additive, is_causal, scale, policy, backend, dtype, sk - sq)
    deps = [a for a in (q, k, v, mask) if a is not None]
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    out = da.Array(graph, name, chunks=(*q.chunks[:-1], (dv,)), meta=q._meta.astype(dtype))
    return _bhsd(out) if layout == "bshd" else out


def _graph(name: str, q: Any, k: Any, v: Any, mask: Any, additive: bool, is_causal: bool, scale: float,
           policy: str, backend: Any, dtype: Any, offset: int) -> dict[Any, Any]:
    qs = _starts(q.chunks[-2])
    ks = _starts(k.chunks[-2])
    dsk: dict[Any, Any] = {}
    for lead in np.ndindex(*q.numblocks[:-2]):
        for i, (q0, q1) in enumerate(qs):
            parts = []
            for j, (k0, k1) in enumerate(ks):
                if is_causal and k0 > q1 - 1 + offset:
                    break  # Note: every key of this chunk (and the next) lies right of the last row's diagonal
                if k1 == k0:
                    continue  # an empty key chunk adds nothing (and a max over no keys has no identity)
                key = (name + "-part", *lead, i, j)
                mk = None if mask is None else (mask.name, *lead, i, j)
                causal = offset + q0 - k0 if is_causal and k1 - 1 > q0 + offset else None
                dsk[key] = (_part, (q.name, *lead, i, 0), (k.name, *lead, j, 0), (v.name, *lead, j, 0), mk,
                            additive, causal, scale, policy, backend)
                parts.append(key)
            out_key = (name, *lead, i, 0)
            if not parts:  # no key at all for these rows: zeros (the standard's empty-row result)
                dsk[out_key] = (_zeros, (q.name, *lead, i, 0), int(v.shape[-1]), dtype)
                continue
            level = 0
            while len(parts) > 1:
                merged = []
                for g in range(0, len(parts), _FAN_IN):
                    mkey = (f"{name}-merge{level}", *lead, i, g // _FAN_IN)
                    dsk[mkey] = (_merge, parts[g:g + _FAN_IN])
                    merged.append(mkey)
                parts, level = merged, level + 1
            dsk[out_key] = (_finish, parts[0], dtype)
    return dsk


def _starts(chunks: tuple[int, ...]) -> list[tuple[int, int]]:
    ends = list(itertools.accumulate(int(c) for c in chunks))
    return list(zip([0, *ends], ends, strict=False))  # (each chunk from the end of the one before)


def _part(qb: Any, kb: Any, vb: Any, mb: Any, additive: bool, causal: int | None, scale: float,
          policy: str, backend: Any) -> tuple[Any, Any, Any]:
    # backend: the chunks'; its products under the policy of the call that built the graph
    ct = np.dtype(np.float32 if str(qb.dtype) in HALF else qb.dtype)
    s = backend.matmul(qb.astype(ct) * ct.type(scale), kb.astype(ct).swapaxes(-1, -2), policy)
    xp = _lib(s)
    allowed = None
    if causal is not None:  # key column c is allowed for row r where c <= r + causal (block-local indices)
        rows = xp.arange(s.shape[-2])[:, None] + causal
        allowed = xp.arange(s.shape[-1])[None, :] <= rows
    if mb is not None:
        if additive:
            s = s + mb.astype(ct)
        else:
            allowed = mb if allowed is None else xp.logical_and(allowed, mb)
    if allowed is not None:
        s = xp.where(allowed, s, -math.inf)
    m = s.max(axis=-1, keepdims=True)
    m_safe = xp.where(m == -math.inf, 0.0, m).astype(ct)  # a row with no key: exp(-inf - 0) = 0, not NaN
    p = xp.exp(s - m_safe)
    return m, p.sum(axis=-1, keepdims=True), backend.matmul(p, vb.astype(ct), policy)


def _merge(parts: list[tuple[Any, Any, Any]]) -> tuple[Any, Any, Any]:
    m, lsum, acc = parts[0]
    for m2, l2, a2 in parts[1:]:
        xp = _lib(m)
        new = xp.maximum(m, m2)
        safe = xp.where(new == -math.inf, 0.0, new).astype(m.dtype)
        a, b = xp.exp(m - safe), xp.exp(m2 - safe)
        m, lsum, acc = new, a * lsum + b * l2, a * acc + b * a2
    return m, lsum, acc


def _finish(state: tuple[Any, Any, Any], dtype: Any) -> Any:
    _, lsum, acc = state
    xp = _lib(acc)
    return (acc / xp.where(lsum == 0.0, 1.0, lsum)).astype(dtype)  # empty rows: acc == 0 gives zeros


def _zeros(qb: Any, dv: int, dtype: Any) -> Any:
    return _lib(qb).zeros((*qb.shape[:-1], dv), dtype=dtype)


def _lib(x: Any) -> Any:
    if type(x).__module__.partition(".")[0] == "cupy":
        import cupy

        return cupy
    return np
