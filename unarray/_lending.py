"""Another library's kernels for a call: the front end's plan, composed from what the libraries declare.

A backend without fused attention kernels of its own (``Backend.borrows_attention``) gets, for a GPU array, the
kernels of a library that lends them on that device (``Library.lends_attention``: torch's), where the caller has
imported it: the operands go over on the pair's fastest zero-copy path and the result comes back. No backend imports
another: the registry names the lender, the handoff hub hands the arrays over, and the plan is the lender's."""

from __future__ import annotations

from typing import Any

from unarray import _backends
from unarray.interop._routes import pair

__all__ = ["attention_plan"]


def attention_plan(b: Any, q: Any, k: Any, v: Any, mask: Any, spec: Any, scale: float, layout: str,
                   policy: str) -> Any:
    """The plan of an attention call on ``b``'s arrays: a lender's kernels where one takes them, else ``b``'s own;
    ``ua.explain`` names a structured mask's form (``spec``, an attention_masks.MaskSpec) after the kernel."""
    lender = _backends.attention_lender(b, q)
    if lender is not None:
        plan = _borrowed(b, lender, q, k, v, mask, spec, scale, layout, policy)
    else:
        plan = _hinted(b, q, b.attention_plan(q, k, v, mask, spec, scale, layout, policy))
    return plan._replace(note=lambda: f"{plan.detail}; mask: {spec.describe()}") if spec.structured else plan


def _borrowed(b: Any, name: str, q: Any, k: Any, v: Any, mask: Any, spec: Any, scale: float, layout: str,
              policy: str) -> Any:
    # The pair's fastest zero-copy, stream-ordered path (no cache: attention inputs are new each call).
    there, back = pair(b.name, name).convert, pair(name, b.name).convert
    t = [None if a is None else there(a) for a in (q, k, v, mask, spec.q_segments, spec.kv_segments)]
    spec = spec if t[4] is None else type(spec)(spec.causal, spec.left, spec.right, t[4], t[5])
    inner = _backends.get(name).attention_plan(t[0], t[1], t[2], t[3], spec, scale, layout, policy)
    from unarray._backends._nn import around  # (a GPU route: kept off import unarray)

    return around(inner, back, f", reached from {b.name} through DLPack (zero-copy, stream-ordered)")


def _hinted(b: Any, q: Any, plan: Any) -> Any:
    # The blocked path, where a lender's fused kernels would take these arrays once the caller imports it: said when
    # explained (the plan's facts are read then only).
    if not b.borrows_attention:
        return plan

    def note() -> str:
        from unarray._backends.attention_blocked import blocked

        name = _backends.attention_lender(b, q, imported=False) if plan.kernel is blocked else None
        return str(plan.detail) + ("" if name is None else f"; import {name} to run {name}'s fused kernels on these "
                                   "arrays zero-copy")

    return plan._replace(note=note)
