# Structured attention masks on torch tensors (a MaskSpec: a sliding window, causal aligned bottom-right with
# Sq != Sk, segment ids), each on the torch kernel that takes it without an (Sq, Sk) mask, once the keys no query
# reaches are sliced off: SDPA (unmasked, or with causal_lower_right), torch's flex_attention under a block mask
# built from the blocks' bounds in O((S/128)^2), or a small (Sq, Sk') mask over a few query rows. Anything else
# returns None: the caller's blocked path takes it.
from __future__ import annotations

import math
import threading
from typing import Any

import torch
import torch.nn.functional as F

from unarray._backends._nn import Plan
from unarray._backends.torch import attention as _att
from unarray._backends.torch import precision as _tp

BLOCK = 128  # flex_attention's sparse block (its default)
SMALL_ROWS = 16  # query rows up to which a band left after slicing is an explicit (Sq, Sk') mask: O(S) memory
FLEX_DTYPES = (torch.float16, torch.bfloat16)  # float32 would run under the matmul setting of compile time
_LOCK = threading.Lock()
_COMPILED: list[Any] = []
_MASKS: list[tuple[Any, ...]] = []  # (q ids, kv ids, their versions, key, block mask), newest last
CACHE = 16


def plan(q: Any, k: Any, v: Any, mask: Any, spec: Any, scale: float, layout: str, policy: str) -> Plan | None:
    """The route of a structured mask on torch's own kernels, or None where none takes it without a dense mask."""
    seq = -2 if layout == "bhsd" else -3
    sq, sk = int(q.shape[seq]), int(k.shape[seq])
    if mask is not None or sq == 0 or sk == 0:
        return None
    lo, hi = spec.key_range(sq, sk)
    if hi <= lo:
        return None  # no query reaches a key: the blocked path's zeros
    form = "segments" if spec.q_segments is not None else spec.rest(sq, sk, lo, hi)
    if form == "segments" or (form == "band" and sq > SMALL_ROWS):
        return _flex_plan(q, k, v, spec, sq, sk, scale, layout) if _flex_takes(q, k, v) else None
    n = hi - lo
    what = f"; K/V sliced to the reachable keys [{lo}, {hi})" if n != sk else "; every key reachable"
    plain = form == "none" or (form == "causal" and sq == n)
    if form == "causal" and q.is_cuda and sq < n:
        return _lower_right(q, k.narrow(seq, lo, n), v.narrow(seq, lo, n), scale, layout, policy, what)
    if not plain and sq > SMALL_ROWS:
        return None

    # SDPA on the reachable keys: unmasked, causal on the slice, or under a small (Sq, Sk') band mask (the route's own)
    small = None if plain else spec.allowed(torch, 0, sq, lo, hi, sq, sk, device=q.device)
    ks, vs = (k, v) if n == sk else (k.narrow(seq, lo, n), v.narrow(seq, lo, n))
    inner = _att.plan(q, ks, vs, small, plain and form == "causal", scale, layout, policy)
    if n != sk and (again := inner.again) is not None:
        inner = inner._replace(again=lambda q, k, v: again(q, k.narrow(seq, lo, n), v.narrow(seq, lo, n)))
    more = (", SDPA's causal on the slice" if form == "causal" else "") if plain else \
        f", a ({sq}, {n}) boolean mask over them"
    return inner._replace(note=lambda: f"{inner.detail}{what}{more}")


def _flex_takes(q: Any, k: Any, v: Any) -> bool:
    # CUDA, half precision, head dims flex's kernels tile (powers of two from 16).
    dims = (int(q.shape[-1]), int(v.shape[-1]))
    return bool(q.is_cuda and q.dtype in FLEX_DTYPES and k.dtype is q.dtype and v.dtype is q.dtype
                and all(d >= 16 and d & (d - 1) == 0 for d in dims))


# -- causal aligned bottom-right: SDPA with torch's causal_lower_right bias ---------------------------------------
def _lower_right(q: Any, k: Any, v: Any, scale: float, layout: str, policy: str, what: str) -> Plan:
    from torch.backends.cuda import SDPAParams, can_use_flash_attention
    from torch.nn.attention.bias import causal_lower_right

    q4, k4, v4, _, _, batch = _att._prepare(q, k, v, None, False, layout)
    bias = causal_lower_right(q4.shape[-2], k4.shape[-2])
    gqa = q4.shape[1] != k4.shape[1]
    flash = bool(can_use_flash_attention(SDPAParams(q4, k4, v4, None, 0.0, False, gqa)))
    heads = ", grouped-query via enable_gqa" if gqa and flash else ", k/v repeated per group" if gqa else ""
    if gqa and not flash:  # the memory-efficient kernel takes equal heads only
        g = q4.shape[1] // k4.shape[1]
        k4, v4, gqa = k4.repeat_interleave(g, dim=1), v4.repeat_interleave(g, dim=1), False

    def call(f: Any) -> Any:
        def sdpa() -> Any:
            return f(q4, k4, v4, attn_mask=bias, scale=scale, enable_gqa=gqa)

        out = _tp.arbitrate(q4, policy, sdpa) if _tp.matters(q4) and not _tp.compiling() else sdpa()
        return _att._finish(out, None, batch, layout)

    kind = "flash" if flash else "efficient (memory-efficient)"
    return Plan(F.scaled_dot_product_attention, call,
                f"[{kind}] with torch.nn.attention.bias.causal_lower_right{heads}{what}")


# -- windows and segments: flex_attention under a block mask built from block bounds ------------------------------
def _flex_plan(q: Any, k: Any, v: Any, spec: Any, sq: int, sk: int, scale: float, layout: str) -> Plan:
    from torch.nn.attention.flex_attention import flex_attention

    q4, k4, v4, _, _, batch = _att._prepare(q, k, v, None, False, layout)
    n = q4.shape[0]
    bm = _block_mask(spec, batch, n, sq, sk, q4.device)
    gqa = q4.shape[1] != k4.shape[1]

    def call(f: Any) -> Any:
        fn = f if _tp.compiling() else _compiled(f)
        return _att._finish(fn(q4, k4, v4, block_mask=bm, scale=scale, enable_gqa=gqa), None, batch, layout)

    def note() -> str:
        kept = int(bm.kv_num_blocks.sum()) + (0 if bm.full_kv_num_blocks is None else int(bm.full_kv_num_blocks.sum()))
        total = bm.kv_num_blocks.shape[0] * math.ceil(sq / BLOCK) * math.ceil(sk / BLOCK)
        return (f"(torch.compile'd, {BLOCK}x{BLOCK} block mask from the blocks' bounds: {kept} of {total} blocks "
                f"computed{', grouped-query via enable_gqa' if gqa else ''})")

    return Plan(flex_attention, call, note)


def _compiled(f: Any) -> Any:
    if not _COMPILED:
        with _LOCK:
            if not _COMPILED:
                _COMPILED.append(torch.compile(f))
    return _COMPILED[0]


def _segments(ids: Any, batch: tuple[int, ...], n: int, s: int, device: Any) -> Any:
    # (*B, S) ids broadcast against q's batch dims, as (N, S) (a stride-0 view where the ids are shared).
    ids = torch.as_tensor(ids, device=device)
    if ids.ndim - 1 > len(batch):
        ids = ids.reshape(-1, s)
    full = ids.reshape((1,) * (len(batch) + 1 - ids.ndim) + tuple(ids.shape))
    if all(d == 1 for d in full.shape[:-1]):
        return full.reshape(1, s).expand(n, s)
    return full.expand(*batch, s).reshape(n, s)


def _block_mask(spec: Any, batch: tuple[int, ...], n: int, sq: int, sk: int, device: Any) -> Any:
    key = (sq, sk, spec.left, spec.right, str(device), batch)
    qi, ki = spec.q_segments, spec.kv_segments  # (None for a window)
    versions = (getattr(qi, "_version", None), getattr(ki, "_version", None))
    for entry in _MASKS:
        # Note: the ids are held by the entry, so a match by identity and version is the same data.
        if entry[0] is qi and entry[1] is ki and entry[2] == versions and entry[3] == key:
            return entry[4]
    qids = None if qi is None else _segments(qi, batch, n, sq, device)
    bm = _build(spec, qids, None if ki is None else _segments(ki, batch, n, sk, device), sq, sk, device)
    if len(_MASKS) >= CACHE:
        _MASKS.pop(0)
    _MASKS.append((qi, ki, versions, key, bm))
    return bm


def _bounds(ids: Any, s: int) -> tuple[Any, Any]:
    # Per block of BLOCK positions: the least and greatest id (the last block padded with its last id).
    nb = math.ceil(s / BLOCK)
    pad = nb * BLOCK - s
    if pad:
        ids = torch.cat([ids, ids[:, -1:].expand(ids.shape[0], pad)], dim=1)
    blocks = ids.reshape(ids.shape[0], nb, BLOCK)
    return blocks.amin(-1), blocks.amax(-1)


def _build(spec: Any, qids: Any, kids: Any, sq: int, sk: int, device: Any) -> Any:
    from torch.nn.attention.flex_attention import BlockMask

    off, big = sk - sq, sq + sk + 1
    lo_d = -big if spec.left is None else off - spec.left  # key - query offsets allowed: [lo_d, hi_d]
    hi_d = big if spec.right is None else off + spec.right
    qs = torch.arange(0, sq, BLOCK, device=device)
    ks = torch.arange(0, sk, BLOCK, device=device)
    qe, ke = (qs + BLOCK).clamp(max=sq) - 1, (ks + BLOCK).clamp(max=sk) - 1
    # (a block is live where its key - query offsets [ks - qe, ke - qs] meet [lo_d, hi_d], full where inside)
    dmin, dmax = ks[None, :] - qe[:, None], ke[None, :] - qs[:, None]
    live = ((dmin <= hi_d) & (dmax >= lo_d))[None]
    full = ((dmin >= lo_d) & (dmax <= hi_d))[None]
    if qids is not None:
        qmin, qmax = _bounds(qids, sq)
        kmin, kmax = _bounds(kids, sk)
        live = live & (qmin[:, :, None] <= kmax[:, None, :]) & (kmin[:, None, :] <= qmax[:, :, None])
        full = full & ((qmin == qmax)[:, :, None] & (kmin == kmax)[:, None, :] & (qmin[:, :, None] == kmin[:, None, :]))
    partial = live & ~full
    bounds = torch.tensor([lo_d, hi_d], device=device)
    return BlockMask.from_kv_blocks(*_ordered(partial), *_ordered(full), BLOCK_SIZE=BLOCK,
                                    mask_mod=_mask_mod(bounds, qids, kids), seq_lengths=(sq, sk))


def _ordered(dense: Any) -> tuple[Any, Any]:
    # (B, nq, nk) booleans -> flex's (B, 1, nq) counts and (B, 1, nq, nk) column indices, the chosen ones first.
    d = dense[:, None].to(torch.int32)
    order = torch.argsort(d, dim=-1, descending=True, stable=True)
    return d.sum(-1).to(torch.int32).contiguous(), order.to(torch.int32).contiguous()


def _mask_mod(bounds: Any, qids: Any, kids: Any) -> Any:
    # The element rule inside partial blocks; the window is read from a tensor, so that another window reuses the
    # compiled kernel (a Python int in the closure would be a constant Dynamo recompiles for).
    if qids is None:
        def window(b: Any, h: Any, q_idx: Any, kv_idx: Any) -> Any:
            d = kv_idx - q_idx
            return (d >= bounds[0]) & (d <= bounds[1])

        return window

    def segments(b: Any, h: Any, q_idx: Any, kv_idx: Any) -> Any:
        d = kv_idx - q_idx
        return (d >= bounds[0]) & (d <= bounds[1]) & (qids[b, q_idx] == kids[b, kv_idx])

    return segments


__all__ = ["plan"]
