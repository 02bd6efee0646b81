"""JAX's ua.at: its own functional update (x.at[idx]), or a where() for a mask with one value (traceable)."""

from __future__ import annotations

from typing import Any

from unarray._backends.updates import apply, mask_of


def update(x: Any, idx: Any, op: str, v: Any) -> Any:
    import jax.numpy as jnp

    v = jnp.asarray(v, dtype=x.dtype)
    mask = mask_of(idx, x.ndim)
    if mask is not None and v.ndim == 0:  # Note: a mask under jax.jit selects a traced count; where() does not
        return jnp.where(mask, v if op == "set" else apply(jnp, op, x, v), x)
    ref = x.at[idx]
    return getattr(ref, op)(v)
