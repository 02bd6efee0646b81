# Attention on torch DTensors, imported once a DTensor reaches ua.scaled_dot_product_attention. By the placements of
# q, k and v (equal, on one DeviceMesh): where no mesh dimension shards the sequence, each rank runs the
# single-device plan on its shard, no communication; where one does, torch's context-parallel ring (where
# _cp_refusals finds nothing and ring_rules.choose_route picks it; its _cp_options are read, never changed), unarray's
# two-rank split (attention_split.py) or unarray's own ring (attention_ring_own.py), which alone takes masks,
# Sq != Sk, grouped-query heads, uneven shards and Dv != D. The output is a DTensor with q's placements.
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.distributed.tensor import DTensor

from unarray._backends._nn import Plan, around
from unarray._backends.attention_masks import MaskSpec
from unarray._backends.torch import attention as _att
from unarray._backends.torch import attention_split, ring_rules
from unarray._backends.torch import precision as _tp
from unarray._backends.torch.attention_ring_own import CUDNN_OFF, ring, start_exchange
from unarray._backends.torch.devices import is_dtensor
from unarray._errors import ArgumentTypeError, ShapeError, UnsupportedError

_OP = "scaled_dot_product_attention"
_ROUTES = ("auto", "ring", "torch", "split")
_PREFER: contextvars.ContextVar[str] = contextvars.ContextVar("unarray_dtensor_attention_route", default="auto")


@contextlib.contextmanager
def prefer(route: str) -> Iterator[None]:
    # "auto": the route ring_rules.choose_route picks; "ring": unarray's ring always (sequence-sharded inputs);
    # "torch": torch's context parallel wherever it applies; "split": the two-rank split wherever it applies.
    if route not in _ROUTES:
        raise ArgumentTypeError(f"route must be one of {_ROUTES}, got {route!r}", op=_OP, backend="torch")
    token = _PREFER.set(route)
    try:
        yield
    finally:
        _PREFER.reset(token)


@dataclass
class _Plan:
    route: str  # "local", "split", "torch-cp" or "ring"
    mesh: Any
    placements: tuple[Any, ...]
    seq_mesh_dim: int = -1
    group: Any = None
    rank: int = 0
    size: int = 1
    zigzag: bool = False
    kernel: str = ""
    why: list[str] = field(default_factory=list)
    rule: str = ""  # why this ring runs where both could
    groups: int = 1  # head groups unarray's ring walks one after the other


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


def plan(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, layout: str, structured: bool = False) -> _Plan:
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
    p.zigzag = is_causal and mask is None and sq == sk and not structured and sq % (2 * p.size) == 0
    p.why = _cp_refusals(q, k, v, mask, is_causal, sq, sk, hq, hk, p) + ["a window or segment ids"] * structured
    p.kernel = _kernel_name(q, k, v)
    if p.kernel == "math" and q.is_cuda:
        p.why.append(f"{q.dtype} on {q.device.type}")
    p.route, p.rule = _choose(q, sq // p.size, p)
    if p.route == "ring":
        p.groups = _groups(q, k, v, seq, head, p)
    return p


def _choose(q: Any, local_seq: int, p: _Plan) -> tuple[str, str]:
    pref = _PREFER.get()
    can_split = attention_split.applies(p)
    if pref == "split" and can_split:
        return "split", "unarray's two-rank split asked for (prefer('split'))"
    if pref == "torch" and not p.why:
        return "torch-cp", "torch's context parallel asked for (prefer('torch'))"
    if pref != "auto":  # the route asked for does not take the call, or is unarray's ring
        return "ring", {"split": "the two-rank split asked for (prefer('split')) does not take the call (it needs two "
                                 "ranks, causal, no mask, Sq == Sk, S divisible by 4): unarray's ring",
                        "ring": "unarray's ring asked for (prefer('ring'))", "torch": ""}[pref]
    d = q.device
    name = torch.cuda.get_device_name(d) if d.type == "cuda" else str(d.type)
    return ring_rules.choose_route(local_seq, name, p.size, split=can_split, torch_cp=not p.why)


def _groups(q: Any, k: Any, v: Any, seq: int, head: int, p: _Plan) -> int:
    # The head groups that keep this rank's peak under one device's for the whole sequence.
    ql, kl = q.to_local(), k.to_local()
    n = math.prod(ql.shape[:-3])
    hq, hk, lq, lk = ql.shape[head], kl.shape[head], ql.shape[seq], kl.shape[seq]
    d, dv, item = ql.shape[-1], v.shape[-1], ql.element_size()
    acc_item = 8 if q.dtype is torch.float64 else 4
    extra = ring_rules.ring_extra_bytes(n, hq, hk, lq, lk, d, dv, item, acc_item, p.zigzag)
    io = n * (hq * lq * (d + dv) + hk * lk * (d + dv)) * item
    return ring_rules.head_groups(hk, extra, io, p.size)


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


# The keywords each kernel takes beyond dropout_p and scale in torch's context-parallel ring.
_CP_KW: dict[str, dict[str, Any]] = {
    "cpu-flash": {}, "flash": {}, "efficient": {"attn_bias": None, "compute_log_sumexp": True},
    "cudnn": {"attn_bias": None, "compute_log_sumexp": True, "return_debug_mask": False}}


def _kernel_name(q: Any, k: Any, v: Any) -> str:
    # The per-block kernel: on CUDA the order of attention.py (cuDNN > flash > efficient), limited to
    # the kernels that return their log-sum-exp; float64 on CUDA takes the math block.
    if q.device.type != "cuda":
        return "cpu-flash" if q.shape[-1] == v.shape[-1] else "math"
    d = q.shape[-1]
    if q.dtype in (torch.float16, torch.bfloat16) and d == v.shape[-1] and d <= 256 and d % 8 == 0:
        return "cudnn" if (q.dtype, d) not in CUDNN_OFF and _cudnn_takes(q) else "flash"
    return "efficient" if q.dtype is torch.float32 else "math"


def _cudnn_takes(q: Any) -> bool:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    ql = q.to_local()
    ql = ql.reshape(-1, *ql.shape[-3:])
    try:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return int(torch._fused_sdp_choice(ql, ql, ql, None, 0.0, True)) == 3  # SDPBackend.CUDNN_ATTENTION
    except RuntimeError:
        return False


def attention_plan(q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                   policy: str, single: Any) -> Plan:
    """The DTensor call's plan: the single-device plan of each rank's shards (``single``, the backend's
    attention_plan), or a ring (torch's context parallel or unarray's) over the mesh dimension that shards the
    sequence."""
    is_causal = spec.causal
    p = plan(q, k, v, mask, is_causal, layout, spec.structured)
    where = f"DTensor on mesh {tuple(p.mesh.shape)} {list(p.placements)}"
    if p.route == "local":
        m = None if mask is None else _mask_rows(mask.to_local(), q, layout)
        local = _local_ids(spec, q, layout, False, None)
        inner = single(q.to_local(), k.to_local(), v.to_local(), m, local, scale, layout, policy)
        return around(inner, lambda out: _dtensor(out, q, v, p), f"; {where}: per-shard, no communication")
    q4, k4, v4, _, _, batch = _att._prepare(q.to_local(), k.to_local(), v.to_local(), None, False, layout)
    m4 = None if mask is None else _mask_rows(mask.to_local(), q, layout, keep_seq=True)
    if m4 is not None and m4.ndim > 3:
        m4 = m4.expand(*batch, *m4.shape[-3:]).reshape(-1, *m4.shape[-3:])
    seq = _axes(q.ndim, layout)[0]
    args: tuple[Any, ...] = (q4, k4, v4, m4, is_causal, scale, q.shape[seq], k.shape[seq], p)
    if spec.structured:  # only unarray's ring takes a window or segment ids: at each block's global positions
        args = (*args, _local_ids(spec, q, layout, True, batch))

    def call(f: Any) -> Any:
        if torch.is_grad_enabled() and any(a.requires_grad for a in (q, k, v)):
            raise UnsupportedError("gradients through sequence-sharded DTensor attention are not supported: the "
                                   "ring's P2P exchange is not differentiable; compute under torch.no_grad(), or "
                                   "train with torch's context_parallel(...) context manager", op=_OP,
                                   backend="torch")
        out = _tp.arbitrate(q4, policy, f, *args) if _tp.matters(q4) else f(*args)
        return _dtensor(_att._finish(out, None, batch, layout).contiguous(), q, v, p)

    balance = "head-tail load balance" if p.zigzag else "contiguous shards"
    if p.route == "split":
        return Plan(attention_split.split, call, f"({where}: unarray two-rank split (rank 0's keys and values to "
                                                 f"rank 1, half of rank 1's rows to rank 0 and their output back, "
                                                 f"one P2P batch each way; two {_ATEN[p.kernel]} calls per rank, "
                                                 f"online log-sum-exp merge); route: {p.rule})")
    if p.route == "torch-cp":
        method = str(_cp_options().rotate_method.name).lower().replace("_", "-")
        return Plan(_torch_cp, call, f"({where}: torch context parallel (_templated_ring_attention, {method} "
                                     f"rotation, {balance}) over {p.size} ranks, {_ATEN[p.kernel]} per block; "
                                     f"route: {p.rule})")
    not_cp = "; torch's context parallel does not take " + ", ".join(p.why) if p.why else ""
    not_cp += f"; route: {p.rule}" if p.rule else ""
    heads = f", {p.groups} head groups in turn" if p.groups > 1 else ""
    return Plan(ring, call, f"({where}: unarray ring attention over {p.size} ranks (P2P batch_isend_irecv of "
                            f"K/V blocks, one in flight, {_ATEN[p.kernel]} per block or float32 math for masked "
                            f"blocks, online log-sum-exp merge, {balance}{heads}){not_cp})")


def _local_ids(spec: MaskSpec, q: Any, layout: str, keep_seq: bool, batch: tuple[int, ...] | None) -> MaskSpec:
    # The spec with its segment ids as this rank's tensors: cut to q's local batch (and, off a ring, its sequence
    # shard); for the ring (batch given) the whole sequence, flattened to (N|1, S) as the ring's q is to N.
    if spec.q_segments is None:
        return spec
    cut = []
    for ids in (spec.q_segments, spec.kv_segments):
        if is_dtensor(ids):
            if not all(pl.is_replicate() for pl in ids.placements):
                raise _refuse("with DTensor inputs segment ids must be plain tensors or DTensors replicated on q's "
                              "mesh; pass ids.full_tensor()")
            ids = ids.to_local()
        ids = torch.as_tensor(ids, device=q.to_local().device)
        s = ids.shape[-1]
        ids = _mask_rows(ids.reshape(*ids.shape[:-1], 1, s, 1), q, layout, keep_seq)
        ids = ids.reshape(*ids.shape[:-3], ids.shape[-2])
        if batch is not None:
            full = ids.reshape((1,) * (len(batch) + 1 - ids.ndim) + tuple(ids.shape))
            ids = full.reshape(1, s) if all(d == 1 for d in full.shape[:-1]) else full.expand(*batch, s).reshape(-1, s)
        cut.append(ids)
    return dataclasses.replace(spec, q_segments=cut[0], kv_segments=cut[1])


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


def _dtensor(out: Any, q: Any, v: Any, p: _Plan) -> Any:
    # This rank's output as the DTensor of q's placements, its global shape and (contiguous) strides given.
    shape = torch.Size((*q.shape[:-1], v.shape[-1]))
    return DTensor.from_local(out, p.mesh, p.placements, run_check=False, shape=shape,
                              stride=torch.empty(shape, device="meta").stride())


# -- torch's context-parallel ring ------------------------------------------------------------------

def _torch_cp(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, sq: int, sk: int, p: _Plan) -> Any:
    from torch.distributed.tensor.experimental._attention import _templated_ring_attention

    if p.zigzag and _cp_options().enable_load_balance:
        q, k, v = start_exchange([q, k, v], p, True)()
    kernel = p.kernel if p.kernel in _CP_KW else "efficient"
    op = getattr(torch.ops.aten, _ATEN[kernel].removeprefix("aten."))
    out = _templated_ring_attention(p.group, 2, op, q, k, v, is_causal=causal, dropout_p=0.0, scale=scale,
                                    **_CP_KW[kernel])[0]
    if p.zigzag and _cp_options().enable_load_balance:
        out = start_exchange([out], p, False)()[0]
    return out


__all__ = ["attention_plan", "is_dtensor", "plan", "prefer"]
