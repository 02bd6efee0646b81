# What torch.compile needs from the torch backend, imported on first need only (it loads torch._dynamo, about
# 2 s, by an import statement inside traced code, which dynamo runs for real): the graph-break wrapper for
# handoffs, the precision custom ops and ua.jit's compiled calls.
#
# Why custom ops: a compiled graph runs its matmuls under torch's global precision of run time, so a policy read
# at trace time would be lost; unarray::matmul keeps it as an argument of one opaque node, run under precision.py's
# switch. Under ua.jit the switch is held around the whole compiled call instead, and the ops under the held policy
# are plain torch ops (precision.py, "ua.jit's boundary").
from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, cast

import torch

from unarray import _precision
from unarray._backends.torch import precision as _tp


def _to_eagerly(to: Any, x: Any, backend: Any, device: Any, copy: bool | None, op: str) -> Any:
    # to: the handoff's Python path (unarray/interop/_public.py passes it; a backend imports no handoff)
    return to(x, backend, device, copy, op)


# A handoff met inside torch.compile runs eagerly (a graph break); under fullgraph=True torch's error gives this reason.
_BREAK = ("unarray: ua.to hands the tensor to another library, which a torch.compile graph cannot hold; "
          "do the handoff outside the compiled function, or compile without fullgraph=True")
try:
    outside_trace = torch.compiler.disable(_to_eagerly, recursive=True, reason=_BREAK)  # type: ignore[no-untyped-call]
except TypeError:  # torch < 2.7: no reason argument
    outside_trace = torch.compiler.disable(_to_eagerly, recursive=True)  # type: ignore[no-untyped-call]


@torch.library.custom_op("unarray::matmul", mutates_args=())
def _matmul_op(x1: torch.Tensor, x2: torch.Tensor, policy: str) -> torch.Tensor:
    # policy "": none was scoped inside the compiled function; the caller's, as the graph runs.
    if not _tp.matters(x1):
        return torch.matmul(x1, x2)
    return cast(torch.Tensor, _tp.arbitrate(x1, policy or _precision.current(), torch.matmul, x1, x2))


@_matmul_op.register_fake
def _(x1: torch.Tensor, x2: torch.Tensor, policy: str) -> torch.Tensor:
    return torch.matmul(x1, x2)


def _setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x1, x2, policy = inputs
    ctx.save_for_backward(x1, x2)
    ctx.policy = policy


def _backward(ctx: Any, grad: Any) -> tuple[Any, Any, None]:
    x1, x2 = ctx.saved_tensors
    # As 2-D-or-more operands ((K,) -> (1, K) and (K, 1)), the batch dimensions summed back.
    a = x1.unsqueeze(0) if x1.ndim == 1 else x1
    b = x2.unsqueeze(-1) if x2.ndim == 1 else x2
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])  # type: ignore[no-untyped-call]
    g = grad.reshape(*batch, a.shape[-2], b.shape[-1])
    g1 = g2 = None
    if ctx.needs_input_grad[0]:
        g1 = _matmul_op(g, b.mH, ctx.policy).sum_to_size(a.shape).reshape(x1.shape)
    if ctx.needs_input_grad[1]:
        g2 = _matmul_op(a.mH, g, ctx.policy).sum_to_size(b.shape).reshape(x2.shape)
    return g1, g2, None


_matmul_op.register_autograd(_backward, setup_context=_setup)


def matmul(x1: Any, x2: Any, policy: str) -> Any:
    if x1.dtype is not x2.dtype:
        dt = torch.promote_types(x1.dtype, x2.dtype)
        x1, x2 = x1.to(dt), x2.to(dt)
    return _matmul_op(x1, x2, policy)


def tensordot(x1: Any, x2: Any, axes: Any, policy: str) -> Any:
    # The contraction as one (M, K) @ (K, N) unarray::matmul.
    from unarray._backends.torch.gaps import contract

    return contract(x1, x2, axes, lambda a, b: _matmul_op(a, b, policy))


def vecdot(x1: Any, x2: Any, axis: int) -> Any:
    # Note: a product and a sum (no GEMM, so no reduced-precision pass under any setting).
    return torch.sum(x1.conj() * x2, dim=axis)


def attention(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float, gqa: bool, policy: str) -> Any:
    # (its two products under the policy; torch's fused kernels would run under the run-time global setting)
    if gqa:
        g = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(g, dim=-3), v.repeat_interleave(g, dim=-3)
    s = _matmul_op(q, k.transpose(-2, -1), policy) * scale
    allowed = None
    if causal:
        allowed = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    if mask is not None:
        if mask.dtype is torch.bool:
            allowed = mask if allowed is None else allowed & mask
        else:
            s = s + mask
    if allowed is not None:
        s = s.masked_fill(~allowed, float("-inf"))
    # Note: a row with no key gets zeros (sdpa's contract); a finite row keeps softmax's gradient.
    has = (s != float("-inf")).any(-1, keepdim=True)
    p = torch.softmax(torch.where(has, s, torch.zeros((), dtype=s.dtype, device=s.device)), dim=-1)
    return _matmul_op(p, v, policy)


# ua.jit's guards (docs/design-notes.md): an entry drops Dynamo's guards on unarray's modules and array-api-compat's
# torch namespace, but for its precision module: what they hold is fixed once imported or only grows, and what a
# trace reads that can change (the policy, the default backend, the device) is ua.jit's cache key. A user's own
# torch.compile keeps them all.
_INTERNAL = ("G['__import_unarray_dot_", "G['__import_unarray']", "G['__import_array_api_compat_dot_torch")
_KEPT = "G['__import_unarray_dot__precision']"


def _root(name: str) -> str:
    return name[max(name.find("G['"), 0):]  # (past a wrapper such as list(dict.keys(...)))


def _internal(entries: Any) -> list[bool]:
    keep = []
    for e in entries:
        root = _root(e.name)
        if e.guard_type == "DUPLICATE_INPUT":
            # "b is a": one object reached two ways; dropped where either way runs through unarray's modules
            made = getattr(e.orig_guard, "create_fn", None)
            other = getattr(getattr(made, "keywords", {}).get("source_b"), "name", "")
            keep.append(not (root.startswith(_INTERNAL) or _root(str(other)).startswith(_INTERNAL)))
        else:
            keep.append(not (root.startswith(_INTERNAL) and not root.startswith(_KEPT)))
    return keep


def _without_internal_guards(options: dict[str, Any]) -> dict[str, Any]:
    if "mode" in options:  # Note: torch.compile takes options= only without mode=: all guards then
        return options
    inner = dict(options.get("options") or {})
    theirs = inner.get("guard_filter_fn")
    if theirs is None:
        inner["guard_filter_fn"] = _internal
    else:  # the caller's filter too: a guard is kept where both keep it
        inner["guard_filter_fn"] = lambda es: [a and b for a, b in zip(_internal(es), theirs(es), strict=True)]
    return {**options, "options": inner}


def compile_held(fn: Callable[..., Any], want: tuple[str, str] | None, **options: Any) -> Callable[..., Any]:
    # torch.compile of fn for one ua.jit entry, called as run(args, kwargs): traced under the marker of ``want``
    # and run inside the switch held at it; None: as a user's own torch.compile (the custom ops carry the policy).
    held, is_compiling = _tp.HELD, _tp.compiling

    def traced(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # (reads no global: a global of this module would be a guard of its own, kept)
        if want is None:
            return fn(*args, **kwargs)
        compiling = is_compiling()
        if compiling:
            held.append(want)
        # Note: the try block makes a graph break inside fn run this frame eagerly; outside one, dynamo would write
        # the push to the real list before the break, where other threads' traces could read it.
        try:
            return fn(*args, **kwargs)
        finally:
            if compiling:
                held.pop()

    # Note: a code object per entry: dynamo keeps its cache and its recompile limit per code object.
    name = "ua_jit_" + "".join(c if c.isalnum() else "_" for c in getattr(fn, "__name__", "fn"))
    code = traced.__code__.replace(co_name=name)
    traced.__code__ = code.replace(co_qualname=name) if sys.version_info >= (3, 11) else code
    compiled = torch.compile(traced, **_without_internal_guards(options))
    if want is None:
        return compiled
    if want[0] != "cpu":
        return functools.partial(_tp.hold, want, compiled)  # Note: a C partial: no Python frame of its own

    def call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not (_tp.CPU_REDUCES or _precision.FORCE_ARBITRATION):
            return compiled(args, kwargs)  # the CPU has no reduced-precision matmul: nothing to hold
        return _tp.hold(want, compiled, args, kwargs)

    return call
