"""Neural-network ops beyond the standard: scaled-dot-product attention."""

from __future__ import annotations

from typing import Any

from unarray._dispatch import fail as _fail
from unarray._dispatch import many as _many
from unarray._typing import Array

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(
    q: Array, k: Array, v: Array, /, *, mask: Array | None = None, is_causal: bool = False,
    scale: float | None = None, layout: str = "bhsd", precision: Any = None,
) -> Array:
    """Scaled-dot-product attention (placeholder signature; see the attention issue)."""
    b, (q, k, v, mask) = _many("scaled_dot_product_attention", (q, k, v, mask), skip_none=True)
    try:
        return b.scaled_dot_product_attention(q, k, v, mask, is_causal, scale, layout, precision)
    except Exception as e:
        raise _fail("scaled_dot_product_attention", b, e) from e
