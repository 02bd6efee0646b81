# unarray's own ring for torch DTensors whose sequence is sharded: K/V blocks travel rank to rank by P2P, the next
# posted before the current one is computed, each block's log-sum-exp merged online in float32 (float64 kept).
# Causal calls are dealt head-tail (zigzag); the heads are walked in groups (ring_rules.head_groups), the next
# group's exchanges travelling while the current one is computed.
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from unarray._backends.attention_masks import CAUSAL, NONE

_NEG = float("-inf")
CUDNN_OFF: set[tuple[Any, int]] = set()  # (dtype, D) where cuDNN refused a block: flash from then on


# -- shards: who holds which rows ----------------------------------------------------------------------

def spans(n: int, size: int) -> list[tuple[int, int]]:
    # (start, length) of each rank's shard under torch's Shard rule (chunks of ceil(n / size), last ones short).
    c = -(-n // size) if size else n
    return [(min(i * c, n), max(0, min(c, n - i * c))) for i in range(size)]


def _segments(rank: int, n: int, size: int, zigzag: bool) -> list[tuple[int, int]]:
    # Global (start, length) runs of the rows a rank holds, in local order.
    if zigzag:
        h = n // (2 * size)
        return [(rank * h, h), ((2 * size - 1 - rank) * h, h)]
    return [spans(n, size)[rank]]


def peer_rank(p: Any, r: int) -> int:
    return int(dist.get_global_rank(p.group, r))


# Up to this many (batch, head) rows per tensor the halves travel as one P2P message per row, sent from and
# received into the tensors' own memory; beyond it, as one message per half (a copy out and a concatenation).
ROW_MESSAGES = 64


def _messages(t: Any, slot: int, h: int, rows: list[tuple[int, int]] | None) -> list[Any]:
    # Half ``slot`` (of length h along dim 2) of t as its P2P messages: one per (batch, head) row, or the half.
    s = slice(slot * h, (slot + 1) * h)
    return [t[b, j, s] for b, j in rows] if rows is not None else [t[:, :, s]]


def start_exchange(xs: list[Any], p: Any, to_zigzag: bool, into: list[Any] | None = None) -> Callable[[], list[Any]]:
    # Re-deal (N, H, 2h, D) shards between the contiguous order (rank r: chunks 2r, 2r+1 of 2W) and the head-tail
    # order (rank r: chunks r, 2W-1-r), either way, in one P2P batch, into new tensors or ``into``; returns the wait.
    w, r = p.size, p.rank

    def contiguous(c: int) -> tuple[int, int]:
        return c // 2, c % 2

    def headtail(c: int) -> tuple[int, int]:
        return (c, 0) if c < w else (2 * w - 1 - c, 1)

    src_of, dst_of = (contiguous, headtail) if to_zigzag else (headtail, contiguous)
    outs: list[Any] = []
    ops: list[Any] = []
    sent: list[Any] = []  # what is sent, alive until the transfer is waited for
    landed: list[tuple[Any, Any]] = []  # (region, buffer) where a received half could not land in place
    for i, x in enumerate(xs):
        n, hh, h = x.shape[0], x.shape[1], x.shape[2] // 2
        out = into[i] if into is not None else torch.empty(x.shape, dtype=x.dtype, device=x.device)
        # (a (batch, head) row of a half is one contiguous run of a BHSD tensor: it travels in place)
        rows = [(b, j) for b in range(n) for j in range(hh)] if n * hh <= ROW_MESSAGES else None
        for c in range(2 * w):
            (sr, sp), (dr, dp) = src_of(c), dst_of(c)
            if sr == r and dr == r:
                out[:, :, dp * h:(dp + 1) * h].copy_(x[:, :, sp * h:(sp + 1) * h])
            elif sr == r:
                for part in _messages(x, sp, h, rows):
                    sent.append(part.contiguous())  # (part itself where it is contiguous)
                    ops.append(dist.P2POp(dist.isend, sent[-1], peer_rank(p, dr), p.group))
            elif dr == r:
                for part in _messages(out, dp, h, rows):
                    buf = part if part.is_contiguous() else torch.empty_like(part,
                                                                             memory_format=torch.contiguous_format)
                    ops.append(dist.P2POp(dist.irecv, buf, peer_rank(p, sr), p.group))
                    if buf is not part:
                        landed.append((part, buf))
        outs.append(out)
    reqs = dist.batch_isend_irecv(ops) if ops else []

    def finish() -> list[Any]:
        for req in reqs:
            req.wait()
        for region, buf in landed:
            region.copy_(buf)
        sent.clear()
        landed.clear()
        return outs

    return finish


# -- unarray's ring ---------------------------------------------------------------------------------

def ring(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, sq: int, sk: int, p: Any,
         spec: Any = None) -> Any:
    """The ring over ``p.groups`` head groups, one after the other; the output in the caller's order. ``spec``: a
    structured mask (MaskSpec: a window, segment ids as (N|1, S) tensors of global ids) or None."""
    groups = max(1, int(getattr(p, "groups", 1)))
    hq, hk = q.shape[1], k.shape[1]
    gq, gk = hq // groups, hk // groups

    def heads(j: int) -> list[Any]:
        return [q[:, j * gq:(j + 1) * gq], k[:, j * gk:(j + 1) * gk], v[:, j * gk:(j + 1) * gk]]

    def mask_heads(j: int) -> Any:
        if mask is None or groups == 1 or mask.ndim < 3 or mask.shape[-3] == 1:
            return mask
        return mask[..., j * gq:(j + 1) * gq, :, :]

    if groups == 1 and not p.zigzag:
        return _ring_group(q, k, v, mask, causal, scale, sq, sk, p, spec)
    out = q.new_empty(q.shape[0], hq, q.shape[2], v.shape[-1])
    pending = start_exchange(heads(0), p, True) if p.zigzag else None
    back: Callable[[], list[Any]] | None = None
    for j in range(groups):
        if pending is not None:
            qj, kj, vj = pending()
            pending = start_exchange(heads(j + 1), p, True) if j + 1 < groups else None
        else:
            qj, kj, vj = heads(j)
        oj = _ring_group(qj, kj, vj, mask_heads(j), causal, scale, sq, sk, p, spec)
        del qj, kj, vj
        if not p.zigzag:
            out[:, j * gq:(j + 1) * gq] = oj
            continue
        nxt = start_exchange([oj], p, False, into=[out[:, j * gq:(j + 1) * gq]])
        del oj  # (the exchange holds what it sends until it is waited for)
        if back is not None:
            back()
        back = nxt
    if back is not None:
        back()
    return out


def _ring_group(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, sq: int, sk: int, p: Any,
                spec: Any = None) -> Any:
    # One head group's ring (already in head-tail order where p.zigzag); the output in the same order.
    w, r = p.size, p.rank
    g = q.shape[1] // k.shape[1]  # grouped-query: the ring carries Hk heads; each block is widened locally
    qseg = _segments(r, sq, w, p.zigzag)
    lq, dv = q.shape[2], v.shape[-1]
    ct = torch.float64 if q.dtype is torch.float64 else torch.float32  # the merge's precision
    acc: Any = None
    lse: Any = None
    kspans = spans(sk, w)
    cur_k, cur_v = k.contiguous(), v.contiguous()
    del k, v  # only the block in hand and the one in flight stay alive
    for t in range(w):
        src = (r - t) % w
        reqs, nxt = [], None
        if t < w - 1:
            nlen = 2 * (sk // (2 * w)) if p.zigzag else kspans[(src - 1) % w][1]
            nxt = tuple(t.new_empty(*t.shape[:2], nlen, t.shape[3]) for t in (cur_k, cur_v))
            send_to, recv_from = peer_rank(p, (r + 1) % w), peer_rank(p, (r - 1) % w)
            ops = [dist.P2POp(dist.isend, t, send_to, p.group) for t in (cur_k, cur_v)]
            ops += [dist.P2POp(dist.irecv, t, recv_from, p.group) for t in nxt]
            reqs = dist.batch_isend_irecv(ops)
        kseg = _segments(src, sk, w, p.zigzag)
        rule = spec or (CAUSAL if causal else NONE)
        for rows, cols, mode in blocks(qseg, kseg, rule, mask is not None, sq, sk, t == 0 and p.zigzag):
            kb, vb = cur_k[:, :, cols[0]:cols[1]], cur_v[:, :, cols[0]:cols[1]]
            if g > 1:
                kb, vb = kb.repeat_interleave(g, dim=1), vb.repeat_interleave(g, dim=1)
            qb = q[:, :, rows[0]:rows[1]]
            if mode == "masked":
                bias = _block_mask(mask, qseg, kseg, rows, cols, causal, sq, sk, q.device, spec)
                o, ls = _math(qb, kb, vb, bias, scale)
            else:
                o, ls = fused(qb, kb, vb, mode == "causal", scale, p.kernel)
            if acc is None and rows == (0, lq):
                # Note: the first block over every row is the accumulator itself: no zero fill, no merge.
                acc, lse = o.to(ct), ls.to(ct).reshape(o.shape[:-1])
                continue
            if acc is None:
                acc = torch.zeros(*q.shape[:3], o.shape[-1], dtype=ct, device=q.device)
                lse = torch.full(q.shape[:3], _NEG, dtype=ct, device=q.device)
            merge_block(acc, lse, rows, o, ls)
            del o, ls
        for req in reqs:
            req.wait()
        if nxt is not None:
            cur_k, cur_v = nxt
            del nxt
    del cur_k, cur_v
    if acc is None:  # no block at all (an empty shard): rows with nothing to attend give zeros
        return q.new_zeros(*q.shape[:3], dv)
    return acc.to(q.dtype)


def _global(segs: list[tuple[int, int]], lo: int, hi: int) -> Any:
    # Global positions of local rows lo..hi of a shard made of segs.
    idx, at = [], 0
    for s, n in segs:
        a, b = max(lo, at), min(hi, at + n)
        if a < b:
            idx.append(torch.arange(s + a - at, s + b - at))
        at += n
    return torch.cat(idx) if idx else torch.empty(0, dtype=torch.int64)


def blocks(qseg: list[tuple[int, int]], kseg: list[tuple[int, int]], spec: Any, masked: bool, sq: int, sk: int,
           diag: bool = False) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    # The kernel calls of one ring step, (local rows, local cols, "full" | "causal" | "masked"), under a MaskSpec:
    # a pair of segments no query of which reaches a key is skipped (MaskSpec.live), one the mask allows whole is
    # a plain block, one exactly causal on its diagonal a causal block, the rest masked blocks; plain pairs that
    # make one rectangle are joined into one call. ``diag``: the zigzag's own step, rows and keys the same
    # segments in increasing order: one top-left causal call.
    lq, lk = sum(n for _, n in qseg), sum(n for _, n in kseg)
    if lq == 0 or lk == 0:
        return []
    if diag:
        return [((0, lq), (0, lk), "causal")]
    qat = [sum(n for _, n in qseg[:i]) for i in range(len(qseg) + 1)]
    kat = [sum(n for _, n in kseg[:j]) for j in range(len(kseg) + 1)]
    rel, off = {}, sk - sq
    for i, (qs, qn) in enumerate(qseg):
        for j, (ks, kn) in enumerate(kseg):
            if not (qn and kn and spec.live(qs, qs + qn, ks, ks + kn, sq, sk)):
                continue
            lo, hi = (ks - (qs + qn - 1), ks + kn - 1 - qs)  # the block's key - query offsets
            plain = not masked and spec.q_segments is None and (spec.left is None or lo >= off - spec.left)
            if plain and (spec.right is None or hi <= off + spec.right):
                rel[i, j] = "full"
            elif plain and spec.right == 0 and qn == kn and ks == qs + off:
                rel[i, j] = "causal"
            else:
                rel[i, j] = "masked"
    rows, cols = sorted({i for i, _ in rel}), sorted({j for _, j in rel})
    if rel and set(rel.values()) == {"full"} and len(rel) == (rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1):
        return [((qat[rows[0]], qat[rows[-1] + 1]), (kat[cols[0]], kat[cols[-1] + 1]), "full")]
    return [((qat[i], qat[i + 1]), (kat[j], kat[j + 1]), m) for (i, j), m in rel.items()]


def _block_mask(mask: Any, qseg: list[tuple[int, int]], kseg: list[tuple[int, int]], rows: tuple[int, int],
                cols: tuple[int, int], causal: bool, sq: int, sk: int, device: Any, spec: Any = None) -> Any:
    # Additive float32 bias (…, rows, cols) of the user's mask, causality and a structured mask at these positions.
    gi = _global(qseg, *rows).to(device)
    gj = _global(kseg, *cols).to(device)
    bias = torch.zeros(len(gi), len(gj), dtype=torch.float32, device=device)
    if causal:
        bias = bias.masked_fill(gj[None, :] > gi[:, None] + (sk - sq), _NEG)
    if spec is not None and spec.left is not None:
        bias = bias.masked_fill(gj[None, :] < gi[:, None] + (sk - sq) - spec.left, _NEG)
    if spec is not None and spec.right is not None:
        bias = bias.masked_fill(gj[None, :] > gi[:, None] + (sk - sq) + spec.right, _NEG)
    if spec is not None and spec.q_segments is not None:
        qi, ki = spec.q_segments, spec.kv_segments
        same = qi.index_select(-1, gi)[:, None, :, None] == ki.index_select(-1, gj)[:, None, None, :]
        bias = torch.where(same, bias, _NEG)
    if mask is not None:
        m = mask.index_select(-2, gi) if mask.shape[-2] != 1 else mask
        m = m.index_select(-1, gj) if mask.shape[-1] != 1 else m
        bias = bias + (torch.where(m, 0.0, _NEG) if m.dtype is torch.bool else m.to(torch.float32))
    return bias


def fused(q: Any, k: Any, v: Any, causal: bool, scale: float, kernel: str) -> tuple[Any, Any]:
    # One block's (output, natural log-sum-exp of its scaled scores), the log-sum-exp as (N, H, Lq).
    aten = torch.ops.aten
    if kernel == "cudnn" and (q.dtype, q.shape[-1]) not in CUDNN_OFF:
        try:
            o, ls = aten._scaled_dot_product_cudnn_attention(q.contiguous(), k, v, None, True, 0.0, causal, False,
                                                             scale=scale)[:2]
            return o, ls.reshape(o.shape[:-1])  # cuDNN keeps a trailing 1 on its log-sum-exp
        except RuntimeError:
            CUDNN_OFF.add((q.dtype, q.shape[-1]))
        kernel = "flash"
    if kernel == "cpu-flash":
        return aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, scale=scale)  # type: ignore[no-any-return]
    if kernel == "flash":
        o, ls = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False, scale=scale)[:2]
        return o, ls
    if kernel == "efficient":
        o, ls = aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, causal, scale=scale)[:2]
        return o, ls[..., : q.shape[-2]]  # its log-sum-exp is padded to a multiple of 32 rows
    bias = None
    if causal:
        bias = torch.zeros(q.shape[-2], k.shape[-2], dtype=torch.float32, device=q.device)
        bias = bias.masked_fill(torch.ones_like(bias, dtype=torch.bool).triu(1), _NEG)
    return _math(q, k, v, bias, scale)


def _math(q: Any, k: Any, v: Any, bias: Any, scale: float) -> tuple[Any, Any]:
    # Float32 (float64 for float64 inputs) scores of one block; a row with nothing to attend gets lse -inf.
    ct = torch.float64 if q.dtype is torch.float64 else torch.float32
    s = torch.matmul(q.to(ct), k.to(ct).transpose(-1, -2)) * scale
    if bias is not None:
        s = s + bias.to(ct)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - torch.where(torch.isneginf(lse), 0.0, lse)[..., None])
    return torch.matmul(p, v.to(ct)), lse


def merge_block(acc: Any, lse: Any, rows: tuple[int, int], o: Any, block_lse: Any) -> None:
    # Online log-sum-exp merge of a block's (out, lse) into rows of the accumulators, in place.
    a, b = rows
    old = lse[:, :, a:b]
    blk = block_lse.to(lse.dtype)
    new = torch.logaddexp(old, blk)
    safe = torch.where(torch.isneginf(new), 0.0, new)
    w_old = torch.exp(old - safe)[..., None]
    w_new = torch.exp(blk - safe)[..., None]
    # Note: no block-sized temporaries; a row with nothing to attend has lse -inf, weight 0 and output 0, never NaN.
    acc[:, :, a:b].mul_(w_old).addcmul_(o, w_new)
    lse[:, :, a:b] = new


__all__ = ["CUDNN_OFF", "blocks", "fused", "merge_block", "peer_rank", "ring", "spans", "start_exchange"]
