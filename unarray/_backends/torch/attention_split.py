# unarray's two-rank split for causal attention on a sequence sharded over two ranks (rank 0: rows [0, L), rank 1:
# [L, 2L)): causality gives rank 1 three quarters of the work; one exchange evens it. Rank 0 gets rank 1's first
# half of rows and computes them against its own keys and values, which rank 1 gets to compute its second half;
# rank 1 merges both blocks into its causal block (online log-sum-exp). The transfers travel while the causal
# blocks are computed.
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
    # (the merge in ct over those rows only: no accumulator for the whole shard beside the received keys)
    a, b = rows
    acc, lse = out[:, :, a:b].to(ct), ls[:, :, a:b].to(ct)
    merge_block(acc, lse, (0, b - a), o, block_lse)
    out[:, :, a:b] = acc


__all__ = ["applies", "split"]
