# The standard's set functions on JAX: jnp's unique_* write every complex value with a NaN part as nan+0j
# (1+nanj comes back as nan+0j); each unique value is read back from x at its first index instead.
from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from unarray._backends._xp_shared import UniqueAllResult, UniqueCountsResult, UniqueInverseResult


def unique_all(x: Any) -> Any:
    r = jnp.unique_all(x)
    if x.dtype.kind != "c":
        return r
    return UniqueAllResult(jnp.ravel(x)[r.indices], r.indices, r.inverse_indices, r.counts)


def unique_values(x: Any) -> Any:
    return jnp.unique_values(x) if x.dtype.kind != "c" else unique_all(x).values


def unique_counts(x: Any) -> Any:
    if x.dtype.kind != "c":
        return jnp.unique_counts(x)
    r = unique_all(x)
    return UniqueCountsResult(r.values, r.counts)


def unique_inverse(x: Any) -> Any:
    if x.dtype.kind != "c":
        return jnp.unique_inverse(x)
    r = unique_all(x)
    return UniqueInverseResult(r.values, r.inverse_indices)
