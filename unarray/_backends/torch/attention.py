# Attention for torch tensors: torch SDPA in the order cuDNN > flash > efficient > math (torch's own prefers flash;
# cuDNN is the faster on CUDA: docs/design-notes.md), with the semantics corrected: bottom-right causal alignment,
# zeros for empty rows.
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from unarray._backends._nn import Plan
from unarray._backends.torch import precision as _tp

_CUDA_ORDER = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
               SDPBackend.MATH]
_CPU_ORDER = [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]
_NAMES = {0: "math", 1: "flash", 2: "efficient (memory-efficient)", 3: "cuDNN", 4: "overrideable"}
_FUSED_GQA: dict[tuple[Any, ...], bool] = {}


def _order(q: Any) -> list[Any]:
    return _CUDA_ORDER if q.is_cuda else _CPU_ORDER


_get_priority = getattr(torch._C, "_get_sdp_priority_order", None)
_set_priority = getattr(torch._C, "_set_sdp_priority_order", None)
_FULL_ORDER: dict[tuple[tuple[int, ...], bool], list[int]] = {}


def _call(f: Any, q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, gqa: bool) -> Any:
    # Note: sdpa_kernel() is slow Python (it rewrites every backend flag twice): the priority order alone is set,
    # where it differs, then restored.
    if _get_priority is None or _set_priority is None or _tp.compiling():
        with sdpa_kernel(_order(q), set_priority=True):
            return f(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)
    if q.is_cpu:  # torch's CPU dispatch reads no priority order: it tries flash, then math (_CPU_ORDER) always
        return f(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)
    prev = _get_priority()
    key = (tuple(prev), q.is_cuda)
    want = _FULL_ORDER.get(key)
    if want is None:
        mine = [int(b) for b in _order(q)]
        want = _FULL_ORDER[key] = mine + [b for b in prev if b not in mine]
    if list(prev) == want:
        return f(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)
    _set_priority(want)
    try:
        return f(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)
    finally:
        _set_priority(prev)


def _prepare(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, layout: str) -> tuple[Any, ...]:
    # -> 4-D (N, H, S, D) views, the mask as torch takes it, torch's is_causal, and the batch shape.
    if layout == "bshd":
        q, k, v = q.transpose(-2, -3), k.transpose(-2, -3), v.transpose(-2, -3)
    batch = tuple(q.shape[:-3])
    if len(batch) != 1:
        q, k, v = (a.reshape(-1, *a.shape[-3:]) for a in (q, k, v))
        if mask is not None and mask.ndim > 3:
            mask = mask.expand(*batch, *mask.shape[-3:]).reshape(-1, *mask.shape[-3:])
    sq, sk = q.shape[-2], k.shape[-2]
    causal = is_causal
    if is_causal and (sq != sk or mask is not None):
        # Note: torch's is_causal is aligned top-left and excludes attn_mask; then it becomes part of the mask.
        tri = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril(sk - sq)
        if mask is None:
            mask = tri
        elif mask.dtype is torch.bool:
            mask = mask & tri
        else:
            mask = mask.masked_fill(~tri, float("-inf"))
        causal = False
    if mask is not None and mask.dtype is not torch.bool and mask.dtype is not q.dtype:
        mask = mask.to(q.dtype)
    return q, k, v, mask, causal, batch


def _gqa_fused(q: Any, k: Any, v: Any, mask: Any, causal: bool) -> bool:
    # Whether a fused kernel takes Hq != Hk directly; if only math would, k and v are repeated instead.
    key = (q.device, q.dtype, q.shape[-1], v.shape[-1], mask is None, mask is not None and mask.dtype, causal)
    hit = _FUSED_GQA.get(key)
    if hit is None:
        with sdpa_kernel(_order(q), set_priority=True):
            hit = _FUSED_GQA[key] = torch._fused_sdp_choice(q, k, v, mask, 0.0, causal, enable_gqa=True) != 0
    return hit


def _route(q: Any, k: Any, v: Any, mask: Any, causal: bool) -> tuple[Any, Any, bool]:
    if q.shape[-3] == k.shape[-3]:
        return k, v, False
    if not q.is_cuda or _gqa_fused(q, k, v, mask, causal):
        return k, v, True
    g = q.shape[-3] // k.shape[-3]
    return k.repeat_interleave(g, dim=-3), v.repeat_interleave(g, dim=-3), False


def _math(f: Any, q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, gqa: bool) -> Any:
    with sdpa_kernel([SDPBackend.MATH]):
        return f(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)


def plan(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str, policy: str) -> Plan:
    """The call's route: torch's SDPA on 4-D views (the kernel torch takes inside it, read for ua.explain from
    the plan's own views), or in a compiled graph that must carry the policy, attention with unarray::matmul."""
    sq, sk = (q.shape[-2], k.shape[-2]) if layout == "bhsd" else (q.shape[-3], k.shape[-3])
    if sq == 0 or sk == 0:
        return Plan(_empty, lambda f: f(q, k, v), "(a zero-size sequence: zeros, no kernel entered)")
    q4, k4, v4, m4, causal, batch = _prepare(q, k, v, mask, is_causal, layout)
    same = q4 is q and k4 is k and v4 is v and m4 is mask  # (the views are the arrays: a repeated call skips them)
    k4, v4, gqa = _route(q4, k4, v4, m4, causal)
    compiling = _tp.compiling()
    if compiling and _tp.matters(q4) and not _tp.held_for(policy, q4, k4, v4, *(() if m4 is None else (m4,))):
        # Note: fused kernels in a compiled graph would run under the global setting of run time; the
        # products go through unarray::matmul, which carries the policy (compiled.py).
        from unarray._backends.torch import compiled as _torch_compiled

        def matmuls(f: Any) -> Any:
            return _finish(f(q4, k4, v4, m4, causal, scale, gqa, policy), m4, batch, layout)

        return Plan(_torch_compiled.attention, matmuls, "(its products through unarray::matmul, under the policy)")

    def again(q: Any, k: Any, v: Any) -> Any:  # (never while compiling: such a call is planned in full)
        q4, k4, v4, m4 = (q, k, v, mask) if same else _prepare(q, k, v, mask, is_causal, layout)[:4]
        k4, v4, _ = _route(q4, k4, v4, m4, causal)
        return _sdpa(F.scaled_dot_product_attention, q4, k4, v4, m4, causal, scale, gqa, policy, batch, layout, False)

    hk = k.shape[-3 if layout == "bhsd" else -2]
    return Plan(F.scaled_dot_product_attention,
                lambda f: _sdpa(f, q4, k4, v4, m4, causal, scale, gqa, policy, batch, layout, compiling),
                lambda: _facts(q4, k4, v4, m4, causal, gqa, hk, is_causal), again)


def _sdpa(f: Any, q4: Any, k4: Any, v4: Any, m4: Any, causal: bool, scale: float, gqa: bool, policy: str,
          batch: tuple[int, ...], layout: str, compiling: bool) -> Any:
    arbitrated = _tp.matters(q4) and not compiling
    if arbitrated:
        out = _tp.arbitrate(q4, policy, _call, f, q4, k4, v4, m4, causal, scale, gqa)
    else:
        # Note: under ua.jit a held policy covers the whole graph: torch's fused kernel. In a compiled graph on
        # the CPU the NaN check below cannot run (a branch on data): the math kernel, which keeps NaN, runs.
        out = (_math if compiling and not q4.is_cuda else _call)(f, q4, k4, v4, m4, causal, scale, gqa)
    # Note: torch's CPU flash kernel drops NaN scores (a NaN in q or k can give a finite row); the math kernel keeps
    # them. A NaN in q or k (or opposite infinities: only slower) makes their sum NaN (read as floats: fewer ops).
    if not q4.is_cuda and not compiling and math.isnan(q4.sum().item() + k4.sum().item()):
        args = (f, q4, k4, v4, m4, causal, scale, gqa)
        out = _tp.arbitrate(q4, policy, _math, *args) if arbitrated else _math(*args)
    return _finish(out, m4, batch, layout)


def _empty(q: Any, k: Any, v: Any) -> Any:
    shape = (*q.shape[:-1], v.shape[-1])
    return torch.zeros(shape, dtype=q.dtype, device=q.device) + 0 * (q.sum() + k.sum() + v.sum())


def _finish(out: Any, m4: Any, batch: tuple[int, ...], layout: str) -> Any:
    if m4 is not None:
        # Note: fused kernels give NaN or a uniform average for a row with no key; the contract says zeros.
        has = (m4 if m4.dtype is torch.bool else m4 != float("-inf")).any(-1, keepdim=True)
        out = torch.where(has, out, torch.zeros((), dtype=out.dtype, device=out.device))
    if len(batch) != 1:
        out = out.reshape(*batch, *out.shape[-3:])
    return out.transpose(-2, -3) if layout == "bshd" else out


def _facts(q4: Any, k4: Any, v4: Any, m4: Any, causal: bool, gqa: bool, hk: int, is_causal: bool) -> str:
    # The SDPA kernel torch takes for the plan's views, in the order _call sets (torch decides inside the call).
    with sdpa_kernel(_order(q4), set_priority=True):
        choice = int(torch._fused_sdp_choice(q4, k4, v4, m4, 0.0, causal, enable_gqa=gqa))
    kind = _NAMES.get(choice, str(choice))
    if not q4.is_cuda and choice == 1:
        kind = "flash (CPU, blocked)"
    how = "enable_gqa" if gqa else ("k/v repeated per group" if q4.shape[-3] != hk else "")
    extra = f", grouped-query via {how}" if how else ""
    if is_causal and q4.shape[-2] != k4.shape[-2]:
        extra += ", bottom-right causal as an explicit mask"
    return f"[{kind}]{extra}"
