# Attention on MLX: mlx.core.fast.scaled_dot_product_attention where it computes the standard's answer
# (layout bhsd with one batch axis, no explicit mask, grouped-query heads included, causal aligned
# bottom-right as unarray's is_causal), else the blocked online-softmax path every backend runs (a mask,
# or a causal query with no key to attend, whose row must be zeros where MLX's kernel gives NaN).
from __future__ import annotations

from typing import Any

import mlx.core as mx

from unarray._backends._nn import Plan

# Note: float64 is left to the blocked path: MLX's kernel accumulates it in float32.
_FLOATS = frozenset({mx.float16, mx.bfloat16, mx.float32})


def fast_applies(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, layout: str) -> bool:
    if layout != "bhsd" or mask is not None or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    if not (q.dtype == k.dtype == v.dtype and q.dtype in _FLOATS):
        return False
    sq, sk = q.shape[-2], k.shape[-2]
    # (MLX's kernel refuses empty inputs: zero heads, queries or keys go the blocked path, which gives the empty answer)
    empty = 0 in (*q.shape, *k.shape, *v.shape)
    return not empty and not (is_causal and sq > sk) and q.shape[1] % k.shape[1] == 0


def fast_plan(q: Any, k: Any, v: Any, is_causal: bool, scale: float) -> Plan:
    mask = "causal" if is_causal else None
    return Plan(mx.fast.scaled_dot_product_attention, lambda f: f(q, k, v, scale=scale, mask=mask))
