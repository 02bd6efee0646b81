# Attention shared by every backend: the blocked online-softmax path written in
# array-API ops through a backend's namespace (the fallback everywhere, and the
# kernel of backends without a fused one), and the per-query-block route of a
# fused kernel that takes a dense mask only (torch's CPU SDPA, for a structured mask).
# Each route is a Plan (_nn.py): the kernel it enters and the call that enters it.
# The backend base class calls it; it imports the base class for types only. Another library's fused
# kernels, borrowed for a GPU array, are the front end's plan (unarray/nn.py), not this module's.
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from unarray._backends._nn import HALF, Plan
from unarray._backends.attention_masks import MaskSpec
from unarray._errors import ShapeError

if TYPE_CHECKING:
    from unarray._backends._base import Backend

BLOCK_Q = 512
BLOCK_K = 512
MASK_CELLS = 1 << 22  # query rows x keys of one fused call with a dense block mask (16 MiB as torch's float mask)


def blocked_plan(b: Backend, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                 policy: str) -> Plan:
    """The blocked online-softmax path on ``b``'s own ops: what every backend without a fused kernel runs."""
    return Plan(blocked, lambda f: f(b, q, k, v, mask, spec, scale, layout, policy),
                lambda: _facts(b, q, k, spec, layout))


def _facts(b: Backend, q: Any, k: Any, spec: MaskSpec, layout: str, spans: bool = False) -> str:
    xp = getattr(b.xp, "__name__", b.name)
    acc = "float32" if b.dtype_name(q) in HALF else b.dtype_name(q)
    sq, sk = (int(a.shape[-2 if layout == "bhsd" else -3]) for a in (q, k))
    done = sum(len(range(keys[0][0] // BLOCK_K * BLOCK_K, keys[-1][1], BLOCK_K)) if spans else len(keys)
               for *_, keys in schedule(b, spec, sq, sk) if keys)
    docs = _documents(b, spec, sq, sk) if spans else None
    how = (f"per query block, {b.name}'s fused kernel over the keys it reaches with the block's mask, blocks of one "
           "shape stacked into one call" if spans else f"blocked online-softmax: {xp} ops")
    how = how if docs is None else f"{len(docs)} packed documents, {b.name}'s fused kernel on each (by query block " \
        "where a window cuts it)"
    return (f"(unarray {how}, {BLOCK_Q}x{BLOCK_K} blocks, {done} of {-(-sq // BLOCK_Q) * -(-sk // BLOCK_K)} "
            f"computed, {acc} accumulation, memory linear in sequence length)")


def query_block_plan(b: Backend, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                     policy: str, dense: Any) -> Plan:
    """A structured mask on a backend whose fused kernel takes a dense mask in memory linear in the keys (``dense``,
    its plan for a boolean mask: torch's CPU SDPA): each query block runs that kernel over the keys its rows reach
    (the span of its live blocks) with the block's mask built from positions and ids."""
    return Plan(by_query_block, lambda f: f(b, q, k, v, mask, spec, scale, layout, policy, dense),
                lambda: _facts(b, q, k, spec, layout, spans=True))


def by_query_block(b: Backend, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                   policy: str, dense: Any) -> Any:
    xp, seq, dev = b.xp, -2 if layout == "bhsd" else -3, b.creation_device(q)
    sq, sk, hq = int(q.shape[seq]), int(k.shape[seq]), int(q.shape[-5 - seq])

    def cut(x: Any, i: int, j: int) -> Any:
        return x[..., i:j, :] if layout == "bhsd" else x[..., i:j, :, :]

    def stack(xs: list[Any]) -> Any:  # a mask's blocks on a leading axis, its own batch dims aligned to q's
        x = xp.stack(xs)
        return xp.reshape(x, (len(xs), *(1,) * (q.ndim + 1 - x.ndim), *x.shape[1:]))

    if (docs := _documents(b, spec, sq, sk)) is not None:  # packed documents: each its own call, no id mask
        inner = dataclasses.replace(spec, q_segments=None, kv_segments=None)
        parts = []
        for i, j in docs:
            args = (cut(q, i, j), cut(k, i, j), cut(v, i, j), None if mask is None else _slice2(mask, i, j, i, j))
            parts.append(by_query_block(b, *args, inner, scale, layout, policy, dense) if inner.structured
                         else dense(*args, inner.causal, scale, layout, policy).run())
        return parts[0] if len(parts) == 1 else xp.concat(parts, axis=seq)

    # Note: query blocks whose rows and key spans have one shape stack into one call (a leading axis), up to
    # MASK_CELLS: a call per block stalls on the threads' barriers, and the float mask stays bounded.
    groups: dict[tuple[int, int], list[list[tuple[int, int, int]]]] = {}
    outs: dict[int, Any] = {}
    for qs, qe, keys in schedule(b, spec, sq, sk):
        lo, hi = (keys[0][0], keys[-1][1]) if keys else (0, 0)
        if lo == hi:  # no key to attend: zeros
            heads = (hq, qe - qs) if layout == "bhsd" else (qe - qs, hq)
            outs[qs] = xp.zeros((*q.shape[:-3], *heads, v.shape[-1]), dtype=q.dtype, **dev)
            continue
        chunks = groups.setdefault((qe - qs, hi - lo), [[]])
        if (len(chunks[-1]) + 1) * (qe - qs) * (hi - lo) > MASK_CELLS and chunks[-1]:
            chunks.append([])
        chunks[-1].append((qs, lo, hi))
    memo = dict[Any, Any]()
    for (rows, _), chunk in ((key, c) for key, cs in groups.items() for c in cs):
        ms = [spec.allowed(xp, i, i + rows, lo, hi, sq, sk, memo, **dev) for i, lo, hi in chunk]
        m = None if ms[0] is None else stack([xp.expand_dims(a, axis=-3) for a in ms])  # across the heads
        if mask is not None:
            mb = stack([_slice2(mask, i, i + rows, lo, hi) for i, lo, hi in chunk])
            m = mb if m is None else xp.logical_and(m, mb) if mb.dtype == m.dtype else xp.where(m, mb, -math.inf)
        if m is not None and m.dtype == xp.bool:  # torch's CPU kernel runs a boolean mask many times slower
            m = xp.where(m, xp.asarray(0, dtype=q.dtype, **dev), xp.asarray(-math.inf, dtype=q.dtype, **dev))
        qb, kb, vb = (xp.stack([cut(x, *ij) for ij in ijs]) for x, ijs in (
            (q, [(i, i + rows) for i, _, _ in chunk]), (k, [c[1:] for c in chunk]), (v, [c[1:] for c in chunk])))
        out = dense(qb, kb, vb, m, False, scale, layout, policy).run()
        outs.update((i, out[t]) for t, (i, _, _) in enumerate(chunk))
    parts = [outs[i] for i in sorted(outs)]
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=seq)


def schedule(b: Backend, spec: MaskSpec, sq: int, sk: int, bq: int | None = None, bk: int | None = None
             ) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """The blocks the kernel computes: each query block ``[qs, qe)`` with its key blocks, on a grid of ``bk`` clamped
    to the keys its rows reach by causal and window; blocks whose segment ids cannot meet are left out where the ids
    are cheap to read."""
    bq, bk = bq or BLOCK_Q, bk or BLOCK_K
    meet, out = _segments_meet(b, spec, sq, sk, bq, bk), []
    for qs in range(0, sq, bq):
        qe = min(sq, qs + bq)
        lo, hi = spec.reach(qs, qe, sq, sk)
        out.append((qs, qe, [(max(ks, lo), min(ks + bk, hi)) for ks in range(lo - lo % bk, hi, bk)
                             if meet is None or meet[qs // bq, ks // bk]]))
    return out


def _host_ids(b: Backend, spec: MaskSpec, sq: int, sk: int) -> list[Any] | None:
    # The ids as NumPy arrays; None where they are not eager arrays in host memory (reading them would compute or
    # copy: the blocks are then masked, not skipped).
    ids = (spec.q_segments, spec.kv_segments)
    if ids[0] is None or b.lazy or not (sq and sk) or any(b.is_tracer(a) or b.device_of(a).kind != "cpu" for a in ids):
        return None
    return [np.asarray(b.host_numpy(a)) for a in ids]


def _documents(b: Backend, spec: MaskSpec, sq: int, sk: int) -> list[tuple[int, int]] | None:
    # Packed documents: one id array for queries and keys, the same in every batch row, each id one contiguous run.
    # Attention then splits into the documents' own ([start, end) each); None where it does not.
    ids = _host_ids(b, spec, sq, sk) if sq == sk else None
    rows = None if ids is None else ids[0].reshape(-1, sq)
    if ids is None or rows is None or not np.array_equal(*ids) or not (rows == rows[0]).all():
        return None
    starts = [0, *(np.flatnonzero(rows[0, 1:] != rows[0, :-1]) + 1).tolist()]
    if len(set(rows[0, starts].tolist())) != len(starts):  # an id in two runs
        return None
    return list(zip(starts, [*starts[1:], sq], strict=True))


def _segments_meet(b: Backend, spec: MaskSpec, sq: int, sk: int, bq: int, bk: int) -> Any:
    # (query block, key block) -> whether their id ranges overlap in some batch row; None where the ids cannot be read.
    if (ids := _host_ids(b, spec, sq, sk)) is None:
        return None
    qn, kn = ids
    qb, kb = np.arange(0, sq, bq), np.arange(0, sk, bk)
    qlo, qhi = (f.reduceat(qn, qb, axis=-1)[..., :, None] for f in (np.minimum, np.maximum))
    klo, khi = (f.reduceat(kn, kb, axis=-1)[..., None, :] for f in (np.minimum, np.maximum))
    return ((qlo <= khi) & (klo <= qhi)).reshape(-1, len(qb), len(kb)).any(axis=0)


def blocked(b: Backend, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
            policy: str, block_q: int | None = None, block_k: int | None = None) -> Any:
    # The blocks are laid out in Python from the shapes; a dimension unknown while tracing (None inside
    # tf.function) cannot be, and is refused with a typed error rather than a TypeError from int(None).
    shapes = [tuple(a.shape) for a in (q, k, v)]
    if any(n is None for s in shapes for n in s):
        raise ShapeError(f"q, k, v have dimensions unknown while tracing ({', '.join(map(str, shapes))}); the "
                         f"{b.name} attention lays out its blocks from the shapes: trace with every dimension "
                         "known (an input_signature without None, or none at all)",
                         op="scaled_dot_product_attention", backend=b.name)
    xp = b.xp
    if layout == "bshd":
        q, k, v = (_swap_sh(b, a) for a in (q, k, v))
    *batch, hq, sq, d = (int(n) for n in q.shape)
    hk, sk, dv = int(k.shape[-3]), int(k.shape[-2]), int(v.shape[-1])
    g = hq // hk
    ct = xp.float32 if b.dtype_name(q) in HALF else q.dtype
    # Note: grouped-query heads become an extra axis so k and v broadcast without a copy.
    q = xp.reshape(q, (*batch, hk, g, sq, d))
    k = xp.reshape(k, (*batch, hk, 1, sk, d))
    v = xp.reshape(v, (*batch, hk, 1, sk, dv))
    mask, additive = _grouped_mask(b, mask, len(batch), hk, g)
    dev = b.creation_device(q)  # new arrays go where q lives (torch/cupy default to the CPU / device 0)
    ids = (spec.q_segments, spec.kv_segments)
    if ids[0] is not None and ids[0].dtype != ids[1].dtype:  # one dtype: TensorFlow compares no other
        t = xp.result_type(*ids)
        spec = dataclasses.replace(spec, q_segments=xp.astype(ids[0], t), kv_segments=xp.astype(ids[1], t))
    outs, memo = [], dict[Any, Any]()
    # Note: key blocks no query row of the block may attend (causal, window, segment ranges) are never computed.
    for qs, qe, keys in schedule(b, spec, sq, sk, block_q, block_k):
        qb = xp.astype(q[..., qs:qe, :], ct) * scale
        m = xp.full((*batch, hk, g, qe - qs, 1), -math.inf, dtype=ct, **dev)
        lsum = xp.zeros((*batch, hk, g, qe - qs, 1), dtype=ct, **dev)
        acc = xp.zeros((*batch, hk, g, qe - qs, dv), dtype=ct, **dev)
        for ks, ke in keys:
            kb = xp.astype(k[..., ks:ke, :], ct)
            s = b.matmul(qb, b.matrix_transpose(kb), policy)
            allowed = spec.allowed(xp, qs, qe, ks, ke, sq, sk, memo, **dev)
            if allowed is not None and allowed.ndim > 2:  # segment ids' batch dims, across the (Hk, G) head axes
                allowed = xp.reshape(allowed, (*allowed.shape[:-2], 1, 1, qe - qs, ke - ks))
            if mask is not None:
                mb = _slice2(mask, qs, qe, ks, ke)
                if additive:
                    s = s + xp.astype(mb, ct)
                else:
                    allowed = mb if allowed is None else xp.logical_and(allowed, mb)
            if allowed is not None:
                s = xp.where(allowed, s, -math.inf)
            m_new = xp.maximum(m, b.max(s, -1, True))
            # Note: a row that has seen no key keeps m = -inf; shifting by 0 keeps exp() at 0, not NaN.
            m_safe = xp.where(m_new == -math.inf, 0.0, m_new)
            p = xp.exp(s - m_safe)
            alpha = xp.exp(m - m_safe)
            lsum = alpha * lsum + b.sum(p, -1, None, True)
            acc = alpha * acc + b.matmul(p, xp.astype(v[..., ks:ke, :], ct), policy)
            m = m_new
        # Note: rows with nothing to attend have lsum == 0 and acc == 0: they come out as zeros.
        outs.append(acc / xp.where(lsum == 0.0, 1.0, lsum))
    if not outs:
        out = xp.zeros((*batch, hk, g, 0, dv), dtype=ct, **dev)
    else:
        out = outs[0] if len(outs) == 1 else xp.concat(outs, axis=-2)
    out = xp.astype(xp.reshape(out, (*batch, hq, sq, dv)), q.dtype)
    return _swap_sh(b, out) if layout == "bshd" else out


def _swap_sh(b: Backend, x: Any) -> Any:
    n = x.ndim
    return b.permute_dims(x, (*range(n - 3), n - 2, n - 3, n - 1))


def _grouped_mask(b: Backend, mask: Any, nbatch: int, hk: int, g: int) -> tuple[Any, bool]:
    if mask is None:
        return None, False
    *mb, mh, msq, msk = (1,) * (nbatch + 3 - mask.ndim) + tuple(int(n) for n in mask.shape)
    heads = (1, 1) if mh == 1 else (hk, g)
    return b.xp.reshape(mask, (*mb, *heads, msq, msk)), b.dtype_name(mask) != "bool"


def _slice2(mask: Any, qs: int, qe: int, ks: int, ke: int) -> Any:
    rows = slice(None) if mask.shape[-2] == 1 else slice(qs, qe)
    cols = slice(None) if mask.shape[-1] == 1 else slice(ks, ke)
    return mask[..., rows, cols]
