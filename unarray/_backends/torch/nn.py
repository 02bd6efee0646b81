# torch's fused ua.nn kernels (the generic definitions: unarray/_backends/_nn.py). Each function takes the
# backend and the op's arguments and returns the plan the call runs; torch's kernels accumulate float16 and
# bfloat16 in float32 themselves, so they run on the inputs as they are, except where noted.
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unarray._backends._nn import EPS, HALF, NNOps, Plan, cast, precisions, trailing_shape


def softmax(b: Any, x: Any, axis: int) -> Plan:
    return Plan(torch.softmax, lambda k: k(x, axis))


def log_softmax(b: Any, x: Any, axis: int) -> Plan:
    return Plan(torch.log_softmax, lambda k: k(x, axis))


def logsumexp(b: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Plan:
    if not axes:  # torch takes dim=() as "all axes": the formula serves ()
        return NNOps.nn_logsumexp(b, x, axes, keepdims)
    return Plan(torch.logsumexp, lambda k: k(x, dim=axes, keepdim=keepdims))


def layer_norm(b: Any, x: Any, axes: tuple[int, ...], weight: Any, bias: Any, eps: float, out: str) -> Plan:
    shape = trailing_shape(x, axes, weight, bias)
    if shape is None:
        return NNOps.nn_layer_norm(b, x, axes, weight, bias, eps, out)
    ops = (x, weight, bias)
    # Note: torch's CPU kernel for float16/bfloat16 folds the mean into a float32 bias (x * rstd - mean * rstd),
    # which leaves about 0.08 where a constant row of -1e4 is 0: it runs on float32 there.
    if all(p is None or p.dtype == x.dtype for p in ops) and (out not in HALF or x.device.type != "cpu"):
        return Plan(F.layer_norm, lambda k: k(x, shape, weight, bias, eps))
    compute, result, note = precisions(b, x, out, ops)
    return Plan(F.layer_norm, lambda k: cast(b.xp, k(
        cast(b.xp, x, compute), shape, cast(b.xp, weight, compute), cast(b.xp, bias, compute), eps), result), note)


def rms_norm(b: Any, x: Any, axes: tuple[int, ...], weight: Any, eps: float | None, out: str) -> Plan:
    fused: Any = getattr(F, "rms_norm", None)
    shape = trailing_shape(x, axes, weight) if fused is not None else None
    if shape is None:
        return NNOps.nn_rms_norm(b, x, axes, weight, eps, out)
    e = EPS[b.dtype_name(x)] if eps is None else eps
    if weight is None or weight.dtype == x.dtype:  # torch's kernel accumulates half dtypes in float32
        return Plan(fused, lambda k: k(x, shape, weight, e))
    result = b.dtype(out)
    return Plan(fused, lambda k: k(cast(b.xp, x, result), shape, cast(b.xp, weight, result), e), f"(in {out})")


def gelu(b: Any, x: Any, approximate: bool) -> Plan:
    form = "tanh" if approximate else "none"
    if approximate or x.device.type != "cpu":
        return Plan(F.gelu, lambda k: k(x, approximate=form))
    # Note: torch's vectorised CPU erf makes the exact form NaN at +inf: +inf is put back.
    return Plan(F.gelu, lambda k: torch.where(x == float("inf"), x, k(x, approximate=form)),
                "(+inf kept where torch's CPU kernel gives NaN)")


def silu(b: Any, x: Any) -> Plan:
    return Plan(F.silu, lambda k: k(x))
