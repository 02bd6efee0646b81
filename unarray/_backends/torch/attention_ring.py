# Attention on torch DTensors. Imported only once a DTensor reaches ua.scaled_dot_product_attention,
# so torch.distributed is already loaded by the caller.
#
# Routes, by the placements of q, k and v (equal for the three, on one DeviceMesh):
# - no mesh dimension shards the sequence (batch or heads sharded, or replicated): each rank runs the
#   single-device kernel (attention.py) on its shard; no communication.
# - the sequence is sharded along one mesh dimension:
#   * torch's context-parallel ring (torch.distributed.tensor.experimental._context_parallel:
#     _templated_ring_attention with torch's own flash/efficient/CPU-flash kernel, its rotation method
#     and its log-sum-exp merger) where it applies: causal with Sq == Sk and load balancing on (torch's
#     default; the shards are exchanged into torch's head-tail order and back), or load balancing off;
#     no mask, Hq == Hk, no gradient wanted. torch's options (_cp_options) are read, never changed.
#   * otherwise a ring of unarray's own: K/V blocks travel rank to rank by P2P (batch_isend_irecv),
#     one block in flight each way while the current one is computed; each block runs a kernel that
#     returns its log-sum-exp, merged online in float32; zigzag (head-tail) load balancing for causal.
#     Masks, Sq != Sk, grouped-query heads, uneven shards and Dv != D all go this way.
# The output is a DTensor with q's placements (the sequence stays sharded).
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor

from unarray._backends._nn import Plan, around
from unarray._backends.torch import precision as _tp
from unarray._errors import ArgumentTypeError, ShapeError, UnsupportedError

_OP = "scaled_dot_product_attention"
_ROUTES = ("auto", "ring", "torch")
_PREFER: contextvars.ContextVar[str] = contextvars.ContextVar("unarray_dtensor_attention_route", default="auto")
_NEG = float("-inf")


@contextlib.contextmanager
def prefer(route: str) -> Iterator[None]:
    # "auto": torch's context parallel where it applies, else unarray's ring; "ring": unarray's ring
    # always (sequence-sharded inputs); "torch": as auto (torch's where it applies). For benchmarks.
    if route not in _ROUTES:
        raise ArgumentTypeError(f"route must be one of {_ROUTES}, got {route!r}", op=_OP, backend="torch")
    token = _PREFER.set(route)
    try:
        yield
    finally:
        _PREFER.reset(token)


def is_dtensor(x: Any) -> bool:
    return isinstance(x, DTensor)


@dataclass
class _Plan:
    route: str  # "local", "torch-cp" or "ring"
    mesh: Any
    placements: tuple[Any, ...]
    seq_mesh_dim: int = -1
    group: Any = None
    rank: int = 0
    size: int = 1
    zigzag: bool = False
    kernel: str = ""
    why: list[str] = field(default_factory=list)


def _axes(ndim: int, layout: str) -> tuple[int, int]:
    # (sequence axis, head axis) of q/k/v in the given layout.
    return (ndim - 2, ndim - 3) if layout == "bhsd" else (ndim - 3, ndim - 2)


def _refuse(msg: str, cls: type[Exception] = ArgumentTypeError) -> Exception:
    return cls(msg, op=_OP, backend="torch")  # type: ignore[call-arg]


def _check_inputs(q: Any, k: Any, v: Any, mask: Any) -> None:
    if not (is_dtensor(q) and is_dtensor(k) and is_dtensor(v)):
        kinds = ", ".join(type(a).__name__ for a in (q, k, v))
        raise _refuse(f"q, k and v must all be DTensors or all plain tensors (torch refuses mixing them); got "
                      f"{kinds}; distribute the plain ones on the same mesh, e.g. "
                      "distribute_tensor(k, q.device_mesh, q.placements)")
    if not (q.device_mesh == k.device_mesh == v.device_mesh):
        raise _refuse("q, k and v are DTensors on different DeviceMeshes; redistribute them onto one mesh")
    if not (tuple(q.placements) == tuple(k.placements) == tuple(v.placements)):
        raise _refuse(f"q, k and v must have equal placements, got {tuple(q.placements)}, "
                      f"{tuple(k.placements)}, {tuple(v.placements)}; redistribute k and v to q's "
                      "(k.redistribute(q.device_mesh, q.placements))")
    if mask is not None and not (is_dtensor(mask) and mask.device_mesh == q.device_mesh
                                 and all(p.is_replicate() for p in mask.placements)):
        raise _refuse("with DTensor inputs the mask must be a DTensor replicated on q's mesh; pass "
                      "distribute_tensor(mask, q.device_mesh, [Replicate()] * q.device_mesh.ndim)")


def plan(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, layout: str) -> _Plan:
    _check_inputs(q, k, v, mask)
    mesh, placements = q.device_mesh, tuple(q.placements)
    seq, head = _axes(q.ndim, layout)
    p = _Plan("local", mesh, placements)
    for i, pl in enumerate(placements):
        if pl.is_replicate():
            continue
        if not pl.is_shard():
            raise _refuse(f"placement {pl} on mesh dimension {i} is not supported for attention; redistribute "
                          "to Shard or Replicate first (x.redistribute(mesh, [Replicate()]))")
        d = pl.dim % q.ndim
        if d == q.ndim - 1:
            raise _refuse("the head dimension D is sharded; attention needs whole rows: redistribute it to "
                          "Replicate or shard the sequence, batch or heads instead", ShapeError)
        if d == head and (q.shape[head] % mesh.size(i) or k.shape[head] % mesh.size(i)):
            raise _refuse(f"heads sharded over {mesh.size(i)} ranks need Hq ({q.shape[head]}) and Hk "
                          f"({k.shape[head]}) divisible by {mesh.size(i)}", ShapeError)
        if d == seq:
            if p.seq_mesh_dim >= 0:
                raise _refuse("the sequence is sharded over two mesh dimensions; shard it over one", ShapeError)
            p.seq_mesh_dim = i
    if p.seq_mesh_dim < 0:
        p.kernel = "per-shard"
        return p
    p.group = mesh.get_group(p.seq_mesh_dim)
    p.rank, p.size = mesh.get_local_rank(p.seq_mesh_dim), mesh.size(p.seq_mesh_dim)
    sq, sk = q.shape[seq], k.shape[seq]
    hq, hk = q.shape[head], k.shape[head]
    simple = is_causal and mask is None and sq == sk
    p.zigzag = simple and sq % (2 * p.size) == 0
    p.why = _cp_refusals(q, k, v, mask, is_causal, sq, sk, hq, hk, p)
    p.kernel = _kernel_name(q, k, v)
    if p.kernel == "math" and q.is_cuda:
        p.why.append(f"{q.dtype} on {q.device.type}")
    p.route = "torch-cp" if not p.why and _PREFER.get() != "ring" else "ring"
    return p


def _cp_options() -> Any:
    from torch.distributed.tensor.experimental._attention import _cp_options

    return _cp_options


def _cp_refusals(q: Any, k: Any, v: Any, mask: Any, causal: bool, sq: int, sk: int, hq: int, hk: int,
                 p: _Plan) -> list[str]:
    # Why torch's context-parallel ring does not apply (empty: it does).
    why = []
    balance = _cp_options().enable_load_balance
    if mask is not None:
        why.append("a mask")
    if causal and sq != sk:
        why.append("causal with Sq != Sk")
    if balance and not causal:
        why.append("non-causal with torch's load balancing on")
    if balance and causal and sq % (2 * p.size):
        why.append(f"S not divisible by 2 x {p.size} ranks")
    if not balance and (sq % p.size or sk % p.size):
        why.append(f"S not divisible by {p.size} ranks")
    if hq != hk:
        why.append("grouped-query heads")
    if q.shape[-1] != v.shape[-1]:
        why.append("Dv != D")
    if torch.is_grad_enabled() and any(a.requires_grad for a in (q, k, v)):
        why.append("gradients")
    return why


_ATEN = {"cpu-flash": "aten._scaled_dot_product_flash_attention_for_cpu",
         "cudnn": "aten._scaled_dot_product_cudnn_attention", "flash": "aten._scaled_dot_product_flash_attention",
         "efficient": "aten._scaled_dot_product_efficient_attention", "math": "float32 math"}
_CUDNN_OFF: set[tuple[Any, int]] = set()  # (dtype, D) where cuDNN refused a block: flash from then on


def _kernel_name(q: Any, k: Any, v: Any) -> str:
    # The per-block kernel: on CUDA the order of attention.py (cuDNN > flash > efficient), limited to
    # the kernels that return their log-sum-exp; float64 on CUDA takes the math block.
    if q.device.type != "cuda":
        return "cpu-flash" if q.shape[-1] == v.shape[-1] else "math"
    d = q.shape[-1]
    if q.dtype in (torch.float16, torch.bfloat16) and d == v.shape[-1] and d <= 256 and d % 8 == 0:
        return "cudnn" if (q.dtype, d) not in _CUDNN_OFF and _cudnn_takes(q) else "flash"
    return "efficient" if q.dtype is torch.float32 else "math"


def _cudnn_takes(q: Any) -> bool:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    ql = q.to_local() if is_dtensor(q) else q
    ql = ql.reshape(-1, *ql.shape[-3:])
    try:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return int(torch._fused_sdp_choice(ql, ql, ql, None, 0.0, True)) == 3  # SDPBackend.CUDNN_ATTENTION
    except RuntimeError:
        return False


def attention_plan(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str,
                   policy: str) -> Plan:
    """The DTensor call's plan: the single-device plan of each rank's shards, or a ring (torch's context
    parallel or unarray's) over the mesh dimension that shards the sequence."""
    p = plan(q, k, v, mask, is_causal, layout)
    where = f"DTensor on mesh {tuple(p.mesh.shape)} {list(p.placements)}"
    if p.route == "local":
        from unarray._backends.torch import attention as attention_torch

        m = None if mask is None else _mask_rows(mask.to_local(), q, layout)
        inner = attention_torch.plan(q.to_local(), k.to_local(), v.to_local(), m, is_causal, scale, layout, policy)
        shape = (*q.shape[:-1], v.shape[-1])

        def wrap(out: Any) -> Any:
            return DTensor.from_local(out, p.mesh, p.placements, run_check=False, shape=torch.Size(shape),
                                      stride=_contiguous_strides(shape))

        return around(inner, wrap, f"; {where}: per-shard, no communication")
    q4, k4, v4, batch = _local4(q, k, v, layout)
    m4 = None if mask is None else _mask_rows(mask.to_local(), q, layout, keep_seq=True)
    if m4 is not None and m4.ndim > 3:
        m4 = m4.expand(*batch, *m4.shape[-3:]).reshape(-1, *m4.shape[-3:])
    seq = _axes(q.ndim, layout)[0]
    args = (q4, k4, v4, m4, is_causal, scale, q.shape[seq], k.shape[seq], p)

    def call(f: Any) -> Any:
        if torch.is_grad_enabled() and any(a.requires_grad for a in (q, k, v)):
            raise UnsupportedError("gradients through sequence-sharded DTensor attention are not supported: the "
                                   "ring's P2P exchange is not differentiable; compute under torch.no_grad(), or "
                                   "train with torch's context_parallel(...) context manager", op=_OP,
                                   backend="torch")
        out = _tp.arbitrate(q4, policy, f, *args) if _tp.matters(q4) else f(*args)
        return _wrap(out, batch, layout, q, v, p)

    balance = "head-tail load balance" if p.zigzag else "contiguous shards"
    if p.route == "torch-cp":
        method = str(_cp_options().rotate_method.name).lower().replace("_", "-")
        return Plan(_torch_cp, call, f"({where}: torch context parallel (_templated_ring_attention, {method} "
                                     f"rotation, {balance}) over {p.size} ranks, {_ATEN[p.kernel]} per block)")
    not_cp = "; torch's context parallel does not take " + ", ".join(p.why) if p.why else ""
    return Plan(_ring, call, f"({where}: unarray ring attention over {p.size} ranks (P2P batch_isend_irecv of "
                             f"K/V blocks, one in flight, {_ATEN[p.kernel]} per block or float32 math for masked "
                             f"blocks, online log-sum-exp merge, {balance}){not_cp})")


def _mask_rows(m: Any, q: Any, layout: str, keep_seq: bool = False) -> Any:
    # The full (replicated) mask sliced to q's local batch and head shard. Mask dims: (*B, Hq, Sq, Sk).
    from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

    shape, offset = compute_local_shape_and_global_offset(q.shape, q.device_mesh, q.placements)
    seq, head = _axes(q.ndim, layout)
    for d in range(q.ndim - 1):
        if shape[d] == q.shape[d] or (keep_seq and d == seq):
            continue
        md = (-3 if d == head else -2) if d in (seq, head) else d - (q.ndim - 1) - 2
        if -md <= m.ndim and m.shape[md] != 1:
            m = m.narrow(md, offset[d], shape[d])
    return m


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _local4(q: Any, k: Any, v: Any, layout: str) -> tuple[Any, Any, Any, tuple[int, ...]]:
    ts = [a.to_local() for a in (q, k, v)]
    if layout == "bshd":
        ts = [a.transpose(-2, -3) for a in ts]
    batch = tuple(ts[0].shape[:-3])
    ts = [a.reshape(-1, *a.shape[-3:]) for a in ts]
    return ts[0], ts[1], ts[2], batch


def _wrap(out: Any, batch: tuple[int, ...], layout: str, q: Any, v: Any, p: _Plan) -> Any:
    out = out.reshape(*batch, *out.shape[-3:])
    if layout == "bshd":
        out = out.transpose(-2, -3)
    shape = (*q.shape[:-1], v.shape[-1])
    return DTensor.from_local(out.contiguous(), p.mesh, p.placements, run_check=False, shape=torch.Size(shape),
                              stride=_contiguous_strides(shape))


# -- shards: who holds which rows ----------------------------------------------------------------------

def _spans(n: int, size: int) -> list[tuple[int, int]]:
    # (start, length) of each rank's shard under torch's Shard rule (chunks of ceil(n / size), last ones short).
    c = -(-n // size) if size else n
    return [(min(i * c, n), max(0, min(c, n - i * c))) for i in range(size)]


def _segments(rank: int, n: int, size: int, zigzag: bool) -> list[tuple[int, int]]:
    # Global (start, length) runs of the rows a rank holds, in local order.
    if zigzag:
        h = n // (2 * size)
        return [(rank * h, h), ((2 * size - 1 - rank) * h, h)]
    return [_spans(n, size)[rank]]


def _peer(p: _Plan, r: int) -> int:
    return int(dist.get_global_rank(p.group, r))


def _exchange(x: Any, p: _Plan, to_zigzag: bool) -> Any:
    # Re-deal a (N, H, 2h, D) shard between the contiguous order (rank r: chunks 2r, 2r+1 of 2W) and the
    # head-tail order (rank r: chunks r, 2W-1-r), in either direction; one P2P batch, halves only.
    w, r = p.size, p.rank
    halves = list(x.chunk(2, dim=2))

    def contiguous(c: int) -> tuple[int, int]:
        return c // 2, c % 2

    def headtail(c: int) -> tuple[int, int]:
        return (c, 0) if c < w else (2 * w - 1 - c, 1)

    src_of, dst_of = (contiguous, headtail) if to_zigzag else (headtail, contiguous)
    out: list[Any] = [None, None]
    ops = []
    for c in range(2 * w):
        (sr, sp), (dr, dp) = src_of(c), dst_of(c)
        if sr == r and dr == r:
            out[dp] = halves[sp]
        elif sr == r:
            ops.append(dist.P2POp(dist.isend, halves[sp].contiguous(), _peer(p, dr), p.group))
        elif dr == r:
            out[dp] = torch.empty_like(halves[0], memory_format=torch.contiguous_format)
            ops.append(dist.P2POp(dist.irecv, out[dp], _peer(p, sr), p.group))
    for req in dist.batch_isend_irecv(ops) if ops else []:
        req.wait()
    return torch.cat(out, dim=2)


# -- torch's context-parallel ring ------------------------------------------------------------------

def _torch_cp(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, sq: int, sk: int, p: _Plan) -> Any:
    from torch.distributed.tensor.experimental._attention import _templated_ring_attention

    aten = torch.ops.aten
    if p.zigzag and _cp_options().enable_load_balance:
        q, k, v = (_exchange(a, p, True) for a in (q, k, v))
    kw: dict[str, Any] = {"dropout_p": 0.0, "scale": scale}
    if p.kernel == "cpu-flash":
        op = aten._scaled_dot_product_flash_attention_for_cpu
    elif p.kernel == "cudnn":
        op = aten._scaled_dot_product_cudnn_attention
        kw = {**kw, "attn_bias": None, "compute_log_sumexp": True, "return_debug_mask": False}
    elif p.kernel == "flash":
        op = aten._scaled_dot_product_flash_attention
    else:
        op, kw = aten._scaled_dot_product_efficient_attention, {**kw, "attn_bias": None, "compute_log_sumexp": True}
    out = _templated_ring_attention(p.group, 2, op, q, k, v, is_causal=causal, **kw)[0]
    if p.zigzag and _cp_options().enable_load_balance:
        out = _exchange(out, p, False)
    return out


# -- unarray's ring ---------------------------------------------------------------------------------

def _ring(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, sq: int, sk: int, p: _Plan) -> Any:
    w, r = p.size, p.rank
    if p.zigzag:
        q, k, v = (_exchange(a, p, True) for a in (q, k, v))
    if q.shape[1] != k.shape[1]:  # grouped-query: the ring carries Hk heads; each block is widened locally
        g = q.shape[1] // k.shape[1]
    else:
        g = 1
    qseg = _segments(r, sq, w, p.zigzag)
    n, hq, lq = q.shape[0], q.shape[1], q.shape[2]
    ct = torch.float64 if q.dtype is torch.float64 else torch.float32  # the merge's precision
    acc = torch.zeros(n, hq, lq, v.shape[-1], dtype=ct, device=q.device)
    lse = torch.full((n, hq, lq), _NEG, dtype=ct, device=q.device)
    kspans = _spans(sk, w)
    cur_k, cur_v = k.contiguous(), v.contiguous()
    for t in range(w):
        src = (r - t) % w
        reqs, nxt = [], None
        if t < w - 1:
            nlen = 2 * (sk // (2 * w)) if p.zigzag else kspans[(src - 1) % w][1]
            nxt = (cur_k.new_empty(*cur_k.shape[:2], nlen, cur_k.shape[3]),
                   cur_v.new_empty(*cur_v.shape[:2], nlen, cur_v.shape[3]))
            send_to, recv_from = _peer(p, (r + 1) % w), _peer(p, (r - 1) % w)
            ops = [dist.P2POp(dist.isend, cur_k, send_to, p.group), dist.P2POp(dist.isend, cur_v, send_to, p.group),
                   dist.P2POp(dist.irecv, nxt[0], recv_from, p.group),
                   dist.P2POp(dist.irecv, nxt[1], recv_from, p.group)]
            reqs = dist.batch_isend_irecv(ops)
        kseg = _segments(src, sk, w, p.zigzag)
        for rows, cols, mode in _blocks(qseg, kseg, causal, mask is not None, sq, sk, t == 0 and p.zigzag):
            kb, vb = cur_k[:, :, cols[0]:cols[1]], cur_v[:, :, cols[0]:cols[1]]
            if g > 1:
                kb, vb = kb.repeat_interleave(g, dim=1), vb.repeat_interleave(g, dim=1)
            qb = q[:, :, rows[0]:rows[1]]
            if mode == "masked":
                bias = _block_mask(mask, qseg, kseg, rows, cols, causal, sq, sk, q.device)
                o, ls = _math(qb, kb, vb, bias, scale)
            else:
                o, ls = _fused(qb, kb, vb, mode == "causal", scale, p.kernel)
            _merge(acc, lse, rows, o, ls)
        for req in reqs:
            req.wait()
        if nxt is not None:
            cur_k, cur_v = nxt
    out = acc.to(q.dtype)
    del acc, lse, cur_k, cur_v, nxt, q, k, v  # the shards' copies go before the output is re-dealt
    return _exchange(out, p, False) if p.zigzag else out


def _global(segs: list[tuple[int, int]], lo: int, hi: int) -> Any:
    # Global positions of local rows lo..hi of a shard made of segs.
    idx, at = [], 0
    for s, n in segs:
        a, b = max(lo, at), min(hi, at + n)
        if a < b:
            idx.append(torch.arange(s + a - at, s + b - at))
        at += n
    return torch.cat(idx) if idx else torch.empty(0, dtype=torch.int64)


def _blocks(qseg: list[tuple[int, int]], kseg: list[tuple[int, int]], causal: bool, masked: bool, sq: int,
            sk: int, diag: bool) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    # The kernel calls of one ring step: (local rows, local cols, "full" | "causal" | "masked"); pairs of
    # segments that causality rules out are left out, and rows/cols that share a mode are joined.
    lq, lk = sum(n for _, n in qseg), sum(n for _, n in kseg)
    if lq == 0 or lk == 0:
        return []
    if masked:
        return [((0, lq), (0, lk), "masked")]
    if not causal:
        return [((0, lq), (0, lk), "full")]
    off = sk - sq
    if diag or (qseg == kseg and off == 0 and len(qseg) == 1):
        return [((0, lq), (0, lk), "causal")]  # same rows and keys in increasing order: one top-left causal call
    rel: dict[tuple[int, int], str] = {}
    qat = [sum(n for _, n in qseg[:i]) for i in range(len(qseg))]
    kat = [sum(n for _, n in kseg[:j]) for j in range(len(kseg))]
    for i, (qs, qn) in enumerate(qseg):
        for j, (ks, kn) in enumerate(kseg):
            if qn == 0 or kn == 0 or ks > qs + qn - 1 + off:
                continue  # every key after every query: nothing to attend
            rel[i, j] = "full" if ks + kn - 1 <= qs + off else "masked"
    if not rel:
        return []
    if len(rel) == len(qseg) * len(kseg) and set(rel.values()) == {"full"}:
        return [((0, lq), (0, lk), "full")]
    cols = {j for _, j in rel}
    rows = {i for i, _ in rel}
    if len(cols) == 1 and len(rel) == len(qseg) and set(rel.values()) == {"full"}:
        j = cols.pop()
        return [((0, lq), (kat[j], kat[j] + kseg[j][1]), "full")]
    if len(rows) == 1 and len(rel) == len(kseg) and set(rel.values()) == {"full"}:
        i = rows.pop()
        return [((qat[i], qat[i] + qseg[i][1]), (0, lk), "full")]
    return [((qat[i], qat[i] + qseg[i][1]), (kat[j], kat[j] + kseg[j][1]), m) for (i, j), m in rel.items()]


def _block_mask(mask: Any, qseg: list[tuple[int, int]], kseg: list[tuple[int, int]], rows: tuple[int, int],
                cols: tuple[int, int], causal: bool, sq: int, sk: int, device: Any) -> Any:
    # Additive float32 bias (…, rows, cols) of the user's mask and causality at these global positions.
    gi = _global(qseg, *rows).to(device)
    gj = _global(kseg, *cols).to(device)
    bias = torch.zeros(len(gi), len(gj), dtype=torch.float32, device=device)
    if causal:
        bias = bias.masked_fill(gj[None, :] > gi[:, None] + (sk - sq), _NEG)
    if mask is not None:
        m = mask.index_select(-2, gi) if mask.shape[-2] != 1 else mask
        m = m.index_select(-1, gj) if mask.shape[-1] != 1 else m
        bias = bias + (torch.where(m, 0.0, _NEG) if m.dtype is torch.bool else m.to(torch.float32))
    return bias


def _fused(q: Any, k: Any, v: Any, causal: bool, scale: float, kernel: str) -> tuple[Any, Any]:
    # One block's (output, natural log-sum-exp of its scaled scores), the log-sum-exp as (N, H, Lq).
    aten = torch.ops.aten
    if kernel == "cudnn" and (q.dtype, q.shape[-1]) not in _CUDNN_OFF:
        try:
            o, ls = aten._scaled_dot_product_cudnn_attention(q.contiguous(), k, v, None, True, 0.0, causal, False,
                                                             scale=scale)[:2]
            return o, ls.reshape(o.shape[:-1])  # cuDNN keeps a trailing 1 on its log-sum-exp
        except RuntimeError:
            _CUDNN_OFF.add((q.dtype, q.shape[-1]))
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


def _merge(acc: Any, lse: Any, rows: tuple[int, int], o: Any, block_lse: Any) -> None:
    # Online log-sum-exp merge of a block's (out, lse) into rows of the accumulators (float32, or float64
    # for float64 inputs), in place.
    a, b = rows
    old = lse[:, :, a:b]
    blk = block_lse.to(lse.dtype)
    new = torch.logaddexp(old, blk)
    safe = torch.where(torch.isneginf(new), 0.0, new)
    w_old = torch.exp(old - safe)[..., None]
    w_new = torch.exp(blk - safe)[..., None]
    # Note: in place, no block-sized float32 temporaries; a block row with nothing to attend has lse -inf,
    # so weight 0, and output 0 (the math block's), never NaN; a NaN input stays NaN.
    acc[:, :, a:b].mul_(w_old).addcmul_(o, w_new)
    lse[:, :, a:b] = new


__all__ = ["attention_plan", "is_dtensor", "plan", "prefer"]
