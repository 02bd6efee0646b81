# The compute of JAX's sequence-sharded attention, inside jax.shard_map (attention_ring.py plans and compiles
# it): the ring's forward and backward passes over key/value blocks passed on by jax.lax.ppermute, the zigzag
# re-layout for causal calls, the per-block kernels (cuDNN's fused attention with its softmax statistics, or jnp
# math over key sub-blocks) and the online log-sum-exp merge; the two-device split (attention_split.py) runs on
# the same blocks and backward pass.
from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp

SUB_BLOCK = 512
_F32 = jnp.float32


def ppermute(x: Any, axis: str, perm: list[tuple[int, int]]) -> Any:
    return jax.lax.ppermute(x, axis, perm)  # type: ignore[no-untyped-call]


def _dest(chunk: int, n: int) -> int:
    return chunk if chunk < n else 2 * n - 1 - chunk


def zigzag(x: Any, axis: str, n: int) -> Any:
    # Device j holds chunks 2j and 2j+1 of 2N; chunk c goes to device c (c < N) or 2N-1-c (second slot).
    c = x.shape[1] // 2
    r0 = ppermute(x[:, :c], axis, [(j, _dest(2 * j, n)) for j in range(n)])
    r1 = ppermute(x[:, c:], axis, [(j, _dest(2 * j + 1, n)) for j in range(n)])
    # Note: chunk i has the parity of i and chunk 2N-1-i the other, so the slots follow the device's parity.
    even = jax.lax.axis_index(axis) % 2 == 0
    return jnp.concatenate([jnp.where(even, r0, r1), jnp.where(even, r1, r0)], axis=1)


def unzigzag(x: Any, axis: str, n: int) -> Any:
    c = x.shape[1] // 2
    even = jax.lax.axis_index(axis) % 2 == 0
    s0, s1 = x[:, :c], x[:, c:]
    h0 = ppermute(jnp.where(even, s0, s1), axis, [(_dest(2 * j, n), j) for j in range(n)])
    h1 = ppermute(jnp.where(even, s1, s0), axis, [(_dest(2 * j + 1, n), j) for j in range(n)])
    return jnp.concatenate([h0, h1], axis=1)


def _passed(axis: str, n: int, *blocks: Any) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Each ring step's blocks (a None stays None): the next step's are sent on before this step's work, so the
    transfer can overlap it."""
    right = [(j, (j + 1) % n) for j in range(n)]
    for t in range(n):
        sent = tuple(None if b is None else ppermute(b, axis, right) for b in blocks) if t < n - 1 else blocks
        yield t, blocks
        blocks = sent


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4, 5, 6, 7, 8))
def ring(q: Any, k: Any, v: Any, axis: str, n: int, causal: bool, scale: float, kernel: str,
          precision: Any) -> Any:
    return _ring_fwd(q, k, v, axis, n, causal, scale, kernel, precision)[0]


def _ring_fwd(q: Any, k: Any, v: Any, axis: str, n: int, causal: bool, scale: float, kernel: str,
              precision: Any) -> tuple[Any, Any]:
    i = jax.lax.axis_index(axis)
    ct = compute_dtype(q)
    o: Any = None
    lse: Any = None
    for t, (kt, vt) in _passed(axis, n, k, v):
        ob, lb = _step(q, kt, vt, i, t, n, causal, scale, kernel, precision)
        # Note: the first block covers every row (its own keys): it is the accumulator, no merge with zeros.
        o, lse = (ob.astype(ct), lb.astype(ct)) if t == 0 else merge(o, lse, ob, lb)
    out = o.astype(q.dtype)
    return out, (q, k, v, out, lse)


def compute_dtype(x: Any) -> Any:
    # The compute dtype: float32 for half inputs, float64 kept.
    return jnp.promote_types(x.dtype, _F32)


def merge(o: Any, lse: Any, ob: Any, lb: Any) -> tuple[Any, Any]:
    new = jnp.logaddexp(lse, lb)
    safe = jnp.where(new == -jnp.inf, jnp.zeros((), new.dtype), new)
    return o * jnp.exp(lse - safe)[..., None] + ob * jnp.exp(lb - safe)[..., None], new


def _step(q: Any, k: Any, v: Any, i: Any, t: int, n: int, causal: bool, scale: float, kernel: str,
          precision: Any) -> tuple[Any, Any]:
    # The block of device i at ring step t holds keys of device j = i - t. Zigzag causal: t == 0 is the
    # device's own block (causal inside); j < i: every q row sees the first key chunk only; j > i: only the
    # second q chunk sees keys, all of them. Each is half a block's work: every device does the same.
    local = functools.partial(local_fwd, scale=scale, kernel=kernel, precision=precision)
    if not causal:
        return local(q, k, v, causal=False)
    if t == 0:
        return local(q, k, v, causal=True)
    c = q.shape[1] // 2

    def before(q: Any, k: Any, v: Any) -> tuple[Any, Any]:
        return local(q, k[:, :c], v[:, :c], causal=False)

    def after(q: Any, k: Any, v: Any) -> tuple[Any, Any]:
        o2, l2 = local(q[:, c:], k, v, causal=False)
        return (jnp.concatenate([jnp.zeros_like(o2), o2], axis=1),
                jnp.concatenate([jnp.full_like(l2, -jnp.inf), l2], axis=1))

    j = (i - t) % n
    return jax.lax.cond(j < i, before, after, q, k, v)  # type: ignore[no-any-return]


def local_fwd(q: Any, k: Any, v: Any, *, causal: bool, scale: float, kernel: str, precision: Any,
              narrow: bool = False) -> tuple[Any, Any]:
    """One block: (output normalised over this block's keys in float32, per-row log-sum-exp (B, S, H)).

    ``narrow``: cuDNN's output in q's dtype instead, which is exact (cuDNN computed it there) and halves what
    is held and sent; the jnp block's output stays float32 (it was computed there).
    """
    if kernel == "cudnn":
        try:
            o, lse = _local_cudnn(q, k, v, causal, scale)
            return (o.astype(q.dtype) if narrow else o), lse
        except Exception:  # cuDNN refused this configuration at trace time: the jnp blocks take it
            pass
    return _local_xla(q, k, v, causal, scale, precision)


def _local_cudnn(q: Any, k: Any, v: Any, causal: bool, scale: float) -> tuple[Any, Any]:
    from jax._src.cudnn import fused_attention_stablehlo as fa

    mask = fa.MaskType.CAUSAL if causal else fa.MaskType.NO_MASK
    out, stats = fa.dot_product_attention(q, k, v, scale=scale, mask_type=mask, qkv_layout="BTNH",
                                          return_residual=True)
    # Note: the statistics are cuDNN's per-row log-sum-exp of the scaled scores, (B, H, Sq) float32.
    return out.astype(_F32), jnp.swapaxes(stats.reshape(q.shape[0], q.shape[2], q.shape[1]), 1, 2).astype(_F32)


def _sub(sk: int) -> int:
    blk = min(SUB_BLOCK, sk)
    return blk if sk % blk == 0 else sk


def _local_xla(q: Any, k: Any, v: Any, causal: bool, scale: float, precision: Any, keep: Any = None,
               kids: Any = None) -> tuple[Any, Any]:
    # keep(start, ids of the sub-block's keys or None) -> (b|1, sq, blk) booleans: a structured mask's element rule.
    b, sq, h, d = q.shape
    sk, hk, dv = k.shape[1], k.shape[2], v.shape[-1]
    g, blk, ct = h // hk, _sub(sk), compute_dtype(q)
    qg = q.reshape(b, sq, hk, g, d).astype(ct) * jnp.asarray(scale, ct)
    ks = jnp.moveaxis(k.reshape(b, sk // blk, blk, hk, d), 1, 0)
    vs = jnp.moveaxis(v.reshape(b, sk // blk, blk, hk, dv), 1, 0)
    rows = jnp.arange(sq)[:, None]

    def body(carry: Any, xs: Any) -> Any:
        m, total, acc = carry
        kc, vc, start, *kid = xs
        s = jnp.einsum("bqhgd,bkhd->bhgqk", qg, kc.astype(ct), precision=precision)
        if causal:
            s = jnp.where(start + jnp.arange(blk)[None, :] <= rows, s, -jnp.inf)
        if keep is not None:
            s = jnp.where(keep(start, kid[0] if kid else None)[:, None, None], s, -jnp.inf)
        m_new = jnp.maximum(m, jnp.max(s, axis=-1))
        safe = jnp.where(m_new == -jnp.inf, jnp.zeros((), ct), m_new)
        p = jnp.exp(s - safe[..., None])
        alpha = jnp.exp(m - safe)
        total = alpha * total + jnp.sum(p, axis=-1)
        acc = alpha[..., None] * acc + jnp.einsum("bhgqk,bkhd->bhgqd", p, vc.astype(ct), precision=precision)
        return (m_new, total, acc), None

    init = (jnp.full((b, hk, g, sq), -jnp.inf, ct), jnp.zeros((b, hk, g, sq), ct),
            jnp.zeros((b, hk, g, sq, dv), ct))
    starts = jnp.arange(0, sk, blk)
    (m, total, acc), _ = jax.lax.scan(body, init, (ks, vs, starts, *_id_blocks(kids, sk, blk)))
    empty = total == 0
    out = acc / jnp.where(empty, jnp.ones((), ct), total)[..., None]
    lse = jnp.where(empty, -jnp.inf, m + jnp.log(jnp.where(empty, jnp.ones((), ct), total)))
    # (b, hk, g, sq, ...) -> (b, sq, h, ...)
    out = jnp.moveaxis(out, 3, 1).reshape(b, sq, h, dv)
    return out, jnp.moveaxis(lse, 3, 1).reshape(b, sq, h)


def ring_bwd(axis: str, n: int, causal: bool, scale: float, kernel: str, precision: Any, res: Any,
              dout: Any) -> tuple[Any, Any, Any]:
    q, k, v, out, lse = res
    i = jax.lax.axis_index(axis)
    right = [(j, (j + 1) % n) for j in range(n)]
    delta = jnp.sum(dout.astype(compute_dtype(q)) * out.astype(compute_dtype(q)), axis=-1)
    dq = jnp.zeros(q.shape, compute_dtype(q))
    dk, dv = jnp.zeros(k.shape, compute_dtype(q)), jnp.zeros(v.shape, compute_dtype(q))
    for t, (kt, vt) in _passed(axis, n, k, v):
        gq, gk, gv = _step_bwd(q, kt, vt, dout, lse, delta, i, t, n, causal, scale, precision)
        dq, dk, dv = dq + gq, dk + gk, dv + gv
        # Note: a block's dK/dV accumulator travels with it; after N moves it is home again.
        dk, dv = ppermute(dk, axis, right), ppermute(dv, axis, right)
    return dq.astype(q.dtype), dk.astype(k.dtype), dv.astype(v.dtype)


ring.defvjp(_ring_fwd, ring_bwd)


def _step_bwd(q: Any, k: Any, v: Any, do: Any, lse: Any, delta: Any, i: Any, t: int, n: int, causal: bool,
              scale: float, precision: Any) -> tuple[Any, Any, Any]:
    local = functools.partial(_local_bwd, scale=scale, precision=precision)
    if not causal:
        return local(q, k, v, do, lse, delta, causal=False)
    if t == 0:
        return local(q, k, v, do, lse, delta, causal=True)
    c = q.shape[1] // 2

    def before(q: Any, k: Any, v: Any, do: Any, lse: Any, delta: Any) -> tuple[Any, Any, Any]:
        gq, gk, gv = local(q, k[:, :c], v[:, :c], do, lse, delta, causal=False)
        return gq, jnp.concatenate([gk, jnp.zeros_like(gk)], 1), jnp.concatenate([gv, jnp.zeros_like(gv)], 1)

    def after(q: Any, k: Any, v: Any, do: Any, lse: Any, delta: Any) -> tuple[Any, Any, Any]:
        gq, gk, gv = local(q[:, c:], k, v, do[:, c:], lse[:, c:], delta[:, c:], causal=False)
        return jnp.concatenate([jnp.zeros_like(gq), gq], 1), gk, gv

    j = (i - t) % n
    return jax.lax.cond(j < i, before, after, q, k, v, do, lse, delta)  # type: ignore[no-any-return]


def _id_blocks(kids: Any, sk: int, blk: int) -> tuple[Any, ...]:
    # The keys' segment ids (b|1, sk) as scanned sub-blocks (sk // blk, b|1, blk), or nothing.
    if kids is None:
        return ()
    return (jnp.moveaxis(kids.reshape(kids.shape[0], sk // blk, blk), 1, 0),)


def _local_bwd(q: Any, k: Any, v: Any, do: Any, lse: Any, delta: Any, *, causal: bool, scale: float,
               precision: Any, keep: Any = None, kids: Any = None) -> tuple[Any, Any, Any]:
    # Flash-attention backward over key sub-blocks: P = exp(S - lse) from the saved global statistics.
    b, sq, h, d = q.shape
    sk, hk, dv = k.shape[1], k.shape[2], v.shape[-1]
    g, blk, ct = h // hk, _sub(sk), compute_dtype(q)
    qg = q.reshape(b, sq, hk, g, d).astype(ct)
    dog = do.reshape(b, sq, hk, g, dv).astype(ct)
    lse_g = jnp.moveaxis(lse.reshape(b, sq, hk, g), 1, 3)  # (b, hk, g, sq)
    dl_g = jnp.moveaxis(delta.reshape(b, sq, hk, g), 1, 3)
    lse_safe = jnp.where(lse_g == -jnp.inf, jnp.zeros((), ct), lse_g)
    ks = jnp.moveaxis(k.reshape(b, sk // blk, blk, hk, d), 1, 0)
    vs = jnp.moveaxis(v.reshape(b, sk // blk, blk, hk, dv), 1, 0)
    rows = jnp.arange(sq)[:, None]
    sc = jnp.asarray(scale, ct)

    def body(dq: Any, xs: Any) -> Any:
        kc, vc, start, *kid = xs
        kc, vc = kc.astype(ct), vc.astype(ct)
        s = jnp.einsum("bqhgd,bkhd->bhgqk", qg * sc, kc, precision=precision)
        p = jnp.exp(s - lse_safe[..., None])
        ok = (lse_g != -jnp.inf)[..., None]
        if causal:
            ok = jnp.logical_and(ok, start + jnp.arange(blk)[None, :] <= rows)
        if keep is not None:
            ok = jnp.logical_and(ok, keep(start, kid[0] if kid else None)[:, None, None])
        p = jnp.where(ok, p, jnp.zeros((), ct))
        gv = jnp.einsum("bhgqk,bqhgd->bkhd", p, dog, precision=precision)
        dp = jnp.einsum("bqhgd,bkhd->bhgqk", dog, vc, precision=precision)
        ds = p * (dp - dl_g[..., None])
        dq = dq + jnp.einsum("bhgqk,bkhd->bqhgd", ds, kc, precision=precision) * sc
        gk = jnp.einsum("bhgqk,bqhgd->bkhd", ds, qg, precision=precision) * sc
        return dq, (gk, gv)

    dq, (gk, gv) = jax.lax.scan(body, jnp.zeros(qg.shape, ct), (ks, vs, jnp.arange(0, sk, blk),
                                                                 *_id_blocks(kids, sk, blk)))
    gk = jnp.moveaxis(gk, 0, 1).reshape(b, sk, hk, d)
    gv = jnp.moveaxis(gv, 0, 1).reshape(b, sk, hk, dv)
    return dq.reshape(b, sq, h, d), gk, gv


# -- the ring under a structured mask (a window on global positions, segment ids): contiguous shards ----------
@functools.partial(jax.custom_vjp, nondiff_argnums=(5, 6, 7, 8, 9))
def ring_masked(q: Any, k: Any, v: Any, qids: Any, kids: Any, axis: str, n: int, band: tuple[Any, Any], scale: float,
                precision: Any) -> Any:
    """This device's rows (B, L, H, Dv) under a window ``band`` = (least, greatest) key - query position offset
    (None: unbounded) and segment ids (``qids`` this device's (B|1, L), ``kids`` its keys' (B|1, Lk), or None):
    each ring step's block runs only where some query reaches some key (a lax.cond on the block's positions)."""
    return _masked_fwd(q, k, v, qids, kids, axis, n, band, scale, precision)[0]


def _keep(q0: Any, k0: Any, lq: int, blk: int, band: tuple[Any, Any], qids: Any) -> Any:
    # The element rule of a block whose rows start at global position q0 and keys at k0 (plus a sub-block start).
    lo, hi = band
    rows = q0 + jnp.arange(lq)[:, None]

    def keep(start: Any, kid: Any) -> Any:
        d = k0 + start + jnp.arange(blk)[None, :] - rows
        ok = jnp.ones(d.shape, bool)
        if lo is not None:
            ok = jnp.logical_and(ok, d >= lo)
        if hi is not None:
            ok = jnp.logical_and(ok, d <= hi)
        ok = ok[None]
        if qids is not None:
            ok = jnp.logical_and(ok, qids[:, :, None] == kid[:, None, :])
        return ok

    return keep


def _live(q0: Any, k0: Any, lq: int, lk: int, band: tuple[Any, Any]) -> Any:
    lo, hi = band
    live = jnp.asarray(True)
    if hi is not None:
        live = jnp.logical_and(live, k0 - (q0 + lq - 1) <= hi)
    if lo is not None:
        live = jnp.logical_and(live, k0 + lk - 1 - q0 >= lo)
    return live


def _masked_fwd(q: Any, k: Any, v: Any, qids: Any, kids: Any, axis: str, n: int, band: tuple[Any, Any], scale: float,
                precision: Any) -> tuple[Any, Any]:
    i = jax.lax.axis_index(axis)
    ct, lq, lk = compute_dtype(q), q.shape[1], k.shape[1]
    o = jnp.zeros((*q.shape[:-1], v.shape[-1]), ct)
    lse = jnp.full(q.shape[:-1], -jnp.inf, ct)
    for t, (kt, vt, it) in _passed(axis, n, k, v, kids):
        q0, k0 = i * lq, ((i - t) % n) * lk

        def block(q: Any, kt: Any, vt: Any, it: Any, q0: Any = q0, k0: Any = k0) -> tuple[Any, Any]:
            return _local_xla(q, kt, vt, False, scale, precision, _keep(q0, k0, lq, _sub(lk), band, qids), it)

        def skip(q: Any, kt: Any, vt: Any, it: Any) -> tuple[Any, Any]:
            return jnp.zeros((*q.shape[:-1], vt.shape[-1]), ct), jnp.full(q.shape[:-1], -jnp.inf, ct)

        ob, lb = jax.lax.cond(_live(q0, k0, lq, lk, band), block, skip, q, kt, vt, it)
        o, lse = merge(o, lse, ob, lb)
    out = o.astype(q.dtype)
    return out, (q, k, v, qids, kids, out, lse)


def _masked_bwd(axis: str, n: int, band: tuple[Any, Any], scale: float, precision: Any, res: Any,
                dout: Any) -> tuple[Any, ...]:
    q, k, v, qids, kids, out, lse = res
    i = jax.lax.axis_index(axis)
    right = [(j, (j + 1) % n) for j in range(n)]
    ct, lq, lk = compute_dtype(q), q.shape[1], k.shape[1]
    delta = jnp.sum(dout.astype(ct) * out.astype(ct), axis=-1)
    dq, dk, dv = jnp.zeros(q.shape, ct), jnp.zeros(k.shape, ct), jnp.zeros(v.shape, ct)
    for t, (kt, vt, it) in _passed(axis, n, k, v, kids):
        q0, k0 = i * lq, ((i - t) % n) * lk

        def block(kt: Any, vt: Any, it: Any, q0: Any = q0, k0: Any = k0) -> tuple[Any, Any, Any]:
            return _local_bwd(q, kt, vt, dout, lse, delta, causal=False, scale=scale, precision=precision,
                              keep=_keep(q0, k0, lq, _sub(lk), band, qids), kids=it)

        def skip(kt: Any, vt: Any, it: Any) -> tuple[Any, Any, Any]:
            return jnp.zeros(q.shape, ct), jnp.zeros(kt.shape, ct), jnp.zeros(vt.shape, ct)

        gq, gk, gv = jax.lax.cond(_live(q0, k0, lq, lk, band), block, skip, kt, vt, it)
        dq, dk, dv = dq + gq.astype(ct), dk + gk.astype(ct), dv + gv.astype(ct)
        dk, dv = ppermute(dk, axis, right), ppermute(dv, axis, right)
    return dq.astype(q.dtype), dk.astype(k.dtype), dv.astype(v.dtype), None, None


ring_masked.defvjp(_masked_fwd, _masked_bwd)


__all__ = ["SUB_BLOCK", "compute_dtype", "local_fwd", "merge", "ppermute", "ring", "ring_bwd", "ring_masked",
           "unzigzag", "zigzag"]
