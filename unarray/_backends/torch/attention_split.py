# unarray's two-rank split for causal attention on a sequence sharded over two ranks (attention_ring.py chooses
# it): rank 0 holds rows [0, L), rank 1 rows [L, 2L). Causality gives rank 0 a quarter of the work and rank 1
# three quarters; the split evens it with one exchange instead of a ring of steps:
# - rank 0 sends its keys and values to rank 1 and receives the first half of rank 1's queries;
# - rank 0 computes its own causal block, then that half of rank 1's rows against its keys (a full block), and
#   sends that block's output and log-sum-exp back;
# - rank 1 computes its own causal block, then the second half of its rows against rank 0's keys, and merges
#   both full blocks into its causal block's output, half a shard at a time (online log-sum-exp, float32).
# Each rank runs two kernel calls of a quarter of the work; the keys and values travel while the first block
# is computed, so what shows is the last block's output (half a shard's rows) travelling back.
from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from unarray._backends.torch.attention_ring_own import fused, merge_block, peer_rank


def applies(p: Any) -> bool:
    """Whether the split can run: two ranks, causal with Sq == Sk, no mask, S divisible by 4 (p.zigzag on a
    ring of two)."""
    return bool(p.size == 2 and p.zigzag)


def split(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, sq: int, sk: int, p: Any) -> Any:
    """This rank's output rows (N, Hq, L, Dv) of causal attention over the two ranks' contiguous shards."""
    g = q.shape[1] // k.shape[1]  # grouped-query: keys and values travel with Hk heads, widened locally
    lq = q.shape[2]
    h = lq // 2
    peer = peer_rank(p, 1 - p.rank)
    ct = torch.float64 if q.dtype is torch.float64 else torch.float32  # the merge's precision
    od = ct if p.kernel == "math" else q.dtype  # a block's output (the math block computes in ct)

    def wide(x: Any) -> Any:
        return x.repeat_interleave(g, dim=1) if g > 1 else x

    def exchange(send: list[Any], recv: list[Any]) -> list[Any]:
        ops = [dist.P2POp(dist.isend, t, peer, p.group) for t in send]
        ops += [dist.P2POp(dist.irecv, t, peer, p.group) for t in recv]
        return list(dist.batch_isend_irecv(ops))

    if p.rank == 0:
        k0, v0 = k.contiguous(), v.contiguous()
        qa = q.new_empty(q.shape[0], q.shape[1], h, q.shape[3])
        reqs = exchange([k0, v0], [qa])
        kw, vw = wide(k0), wide(v0)
        out, _ = fused(q, kw, vw, True, scale, p.kernel)
        for req in reqs:
            req.wait()
        oa, la = fused(qa, kw, vw, False, scale, p.kernel)
        del qa, kw, vw
        for req in exchange([oa.to(od).contiguous(), la.to(ct).contiguous()], []):
            req.wait()
        return out.to(q.dtype)
    qa = q[:, :, :h].contiguous()
    k0, v0 = k.new_empty(k.shape), v.new_empty(v.shape)
    reqs = exchange([qa], [k0, v0])
    out, ls = fused(q, wide(k), wide(v), True, scale, p.kernel)  # (ls: (N, Hq, L) from every kernel)
    for req in reqs:
        req.wait()
    del qa
    ob, lb = fused(q[:, :, h:], wide(k0), wide(v0), False, scale, p.kernel)
    del k0, v0
    oa = torch.empty(q.shape[0], q.shape[1], h, v.shape[-1], dtype=od, device=q.device)
    la = torch.empty(q.shape[0], q.shape[1], h, dtype=ct, device=q.device)
    reqs = exchange([], [oa, la])
    _merge_into(out, ls, (h, lq), ob, lb, ct)
    del ob, lb
    for req in reqs:
        req.wait()
    _merge_into(out, ls, (0, h), oa, la, ct)
    return out.to(q.dtype)


def _merge_into(out: Any, ls: Any, rows: tuple[int, int], o: Any, block_lse: Any, ct: Any) -> None:
    # Merge a block's (output, log-sum-exp) into rows a:b of the causal block's output, in place: the merge in
    # ct over those rows only, so that no accumulator for the whole shard is held beside the received keys.
    a, b = rows
    acc, lse = out[:, :, a:b].to(ct), ls[:, :, a:b].to(ct)
    merge_block(acc, lse, (0, b - a), o, block_lse)
    out[:, :, a:b] = acc


__all__ = ["applies", "split"]
