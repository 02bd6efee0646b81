# JAX's two-device split for causal attention on a sequence sharded over a mesh axis of two devices (chosen in
# attention_ring.plan, run inside its shard_map): device 0 holds rows [0, L), device 1 rows [L, 2L), the
# torch backend's split in one SPMD program:
# - device 0's keys and values go to device 1 and the first half of device 1's rows to device 0 (ppermute,
#   issued before the causal blocks so XLA overlaps the transfers);
# - each device computes its own causal block, then a full block of half a shard's rows: device 0 those rows
#   of device 1 against its own keys, device 1 its second half against device 0's (one lax.cond, so neither
#   device selects between whole arrays);
# - device 0's full block goes back, and device 1 merges both full blocks into its causal block (online
#   log-sum-exp in float32; cuDNN's blocks are held and sent in q's dtype, which is what cuDNN computed).
# Gradients: the custom VJP lays the saved rows out zigzag and runs the ring's backward pass
# (ring_blocks.ring_bwd), which takes any causal rows with their per-row log-sum-exp.
from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from unarray._backends.jax import ring_blocks as rb


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4, 5, 6))
def split(q: Any, k: Any, v: Any, axis: str, scale: float, kernel: str, precision: Any) -> Any:
    """This device's output rows (B, L, H, Dv) of causal attention over two devices' contiguous shards."""
    return _fwd(q, k, v, axis, scale, kernel, precision)[0]


def _fwd(q: Any, k: Any, v: Any, axis: str, scale: float, kernel: str, precision: Any) -> tuple[Any, Any]:
    h = q.shape[1] // 2
    first = jax.lax.axis_index(axis) == 0
    # (device 0 receives zeros from the one-way permutes, and device 1 the same from the other)
    k0, v0 = rb.ppermute(k, axis, [(0, 1)]), rb.ppermute(v, axis, [(0, 1)])
    qa = rb.ppermute(q[:, :h], axis, [(1, 0)])

    # (cuDNN's blocks held and sent in q's dtype: see local_fwd)
    block = functools.partial(rb.local_fwd, scale=scale, kernel=kernel, precision=precision, narrow=True)
    oc, lc = block(q, k, v, causal=True)

    def on_first(q: Any, k: Any, v: Any, qa: Any, k0: Any, v0: Any) -> tuple[Any, Any]:
        return block(qa, k, v, causal=False)

    def on_second(q: Any, k: Any, v: Any, qa: Any, k0: Any, v0: Any) -> tuple[Any, Any]:
        return block(q[:, h:], k0, v0, causal=False)

    of, lf = jax.lax.cond(first, on_first, on_second, q, k, v, qa, k0, v0)
    oa, la = rb.ppermute(of, axis, [(0, 1)]), rb.ppermute(lf, axis, [(0, 1)])

    def keep(oc: Any, lc: Any, oa: Any, la: Any, of: Any, lf: Any) -> tuple[Any, Any]:
        return oc.astype(q.dtype), lc

    def merge(oc: Any, lc: Any, oa: Any, la: Any, of: Any, lf: Any) -> tuple[Any, Any]:
        ct = rb.compute_dtype(q)
        a = rb.merge(oc[:, :h].astype(ct), lc[:, :h], oa.astype(ct), la)
        b = rb.merge(oc[:, h:].astype(ct), lc[:, h:], of.astype(ct), lf)
        return jnp.concatenate([a[0], b[0]], axis=1).astype(q.dtype), jnp.concatenate([a[1], b[1]], axis=1)

    out, lse = jax.lax.cond(first, keep, merge, oc, lc, oa, la, of, lf)
    return out, (q, k, v, out, lse)


def _bwd(axis: str, scale: float, kernel: str, precision: Any, res: Any, dout: Any) -> tuple[Any, Any, Any]:
    zig = functools.partial(rb.zigzag, axis=axis, n=2)
    q, k, v, out, lse = (zig(x) for x in res)
    grads = rb.ring_bwd(axis, 2, True, scale, kernel, precision, None, (q, k, v, None, None, out, lse), zig(dout))
    return tuple(rb.unzigzag(g, axis, 2) for g in grads[:3])


split.defvjp(_fwd, _bwd)


__all__ = ["split"]
