# Structured attention masks on JAX arrays (a MaskSpec: a window, causal aligned bottom-right, segment ids), on
# jax.nn.dot_product_attention where its semantics match:
# - the keys no query reaches are sliced off K/V first (MaskSpec.key_range): a decode step (Sq = 1) then runs the
#   unmasked call (cuDNN where it takes the inputs) on the reachable keys only;
# - a causal sliding window with Sq == Sk is cuDNN's own: local_window_size=(left, 0) with is_causal. JAX aligns
#   its window and is_causal top-left (query i, key j: i - left <= j <= i + right), which is the bottom-right
#   alignment only where Sq == Sk, and its cuDNN route takes no right window without causality;
# - a band left over a few query rows (a decode step of a few tokens) is a small (Sq, Sk') mask on the sliced keys.
# Segment ids (jax.nn.dot_product_attention has none), other bands and sharded sequences return None: the
# blocked path with block skipping (or the ring) takes them.
from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from unarray._backends._nn import Plan
from unarray._backends.attention_masks import CAUSAL, NONE
from unarray._backends.jax import attention as _att
from unarray._backends.jax import attention_ring as _ring
from unarray._backends.jax.compile import EAGER_OPTIONS

SMALL_ROWS = 16  # query rows up to which a band left after slicing is an explicit (Sq, Sk') mask: O(S) memory


def plan(q: Any, k: Any, v: Any, mask: Any, spec: Any, scale: float, layout: str, policy: str) -> Plan | None:
    """The route of a structured mask on JAX's own kernels, or None where none takes it without a dense mask."""
    seq = q.ndim - 2 if layout == "bhsd" else q.ndim - 3
    sq, sk = int(q.shape[seq]), int(k.shape[seq])
    if mask is not None or spec.q_segments is not None or sq == 0 or sk == 0 or _att._spread(q) or (
            isinstance(q, jax.core.Tracer) and _ring.plan(q, k, v, None, spec.causal, layout, spec) is not None):
        return None  # (a sequence-sharded array, or a traced one of an explicit mesh: the ring's)
    lo, hi = spec.key_range(sq, sk)
    if hi <= lo:
        return None
    form, n = spec.rest(sq, sk, lo, hi), hi - lo
    keys = None if n == sk else (lo, hi)  # sliced inside the route's jitted program
    what = f"; K/V sliced to the reachable keys [{lo}, {hi})" if keys else "; every key reachable"
    if form == "none" or (form == "causal" and sq == n):
        return _noted(_att.plan(q, k, v, None, CAUSAL if form == "causal" else NONE, scale, layout, policy, keys), what)
    if sq == sk and spec.right == 0 and spec.left is not None and _att.choose(q, v) == "cudnn":
        fn = _window(spec.left, scale, layout, not isinstance(q, jax.core.Tracer))
        return Plan(jax.nn.dot_product_attention, lambda f: fn(q, k, v),
                    f"(implementation='cudnn', is_causal=True, local_window_size=({spec.left}, 0): cuDNN's sliding "
                    f"window{'' if layout == 'bshd' else ', bhsd swapped to JAX bshd'})")
    if sq > SMALL_ROWS:
        return None
    return _noted(_att.plan(q, k, v, None, NONE, scale, layout, policy, keys, (spec, 0, sq, lo, hi, sq, sk)),
                  f"{what}, a ({sq}, {n}) boolean mask over them")


def _noted(inner: Plan | None, more: str) -> Plan:
    assert inner is not None  # (an unstructured spec always has JAX's plan)
    return inner._replace(note=lambda: f"{inner.detail}{more}")


@functools.lru_cache(maxsize=64)
def _window(left: int, scale: float, layout: str, top: bool) -> Any:
    # One jitted program per window and scale: the layout swap, cuDNN's windowed kernel and the swap back.
    def run(q: Any, k: Any, v: Any) -> Any:
        q3, k3, v3, _, _, _, batch = _att._prepare(q, k, v, None, False, layout)
        try:
            out = jax.nn.dot_product_attention(q3, k3, v3, scale=scale, is_causal=True,
                                               local_window_size=(left, 0), implementation="cudnn")
        except Exception:  # cuDNN refused the window when tracing: the scores under its mask, in jnp ops
            i, j = jnp.arange(q3.shape[1])[:, None], jnp.arange(k3.shape[1])[None, :]
            band = jnp.logical_and(j <= i, j >= i - left)[None, None]
            out = _att._xla(q3, k3, v3, None, band, scale, False, False)
        out = out.reshape(*batch, *out.shape[1:])
        return jnp.swapaxes(out, -2, -3) if layout == "bhsd" else out

    return jax.jit(run, compiler_options=EAGER_OPTIONS if top else None)


__all__ = ["plan"]
