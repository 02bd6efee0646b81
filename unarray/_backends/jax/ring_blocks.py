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


@functools.partial(jax.custom_vjp, nondiff_argnums=(5, 6, 7, 8, 9, 10, 11))
def ring(q: Any, k: Any, v: Any, qids: Any, kids: Any, axis: str, n: int, causal: bool, scale: float, kernel: str,
         precision: Any, band: tuple[Any, Any] | None) -> Any:
    """This device's rows (B, L, H, Dv): zigzag-causal or plain blocks, or (``band`` not None) contiguous shards
    under a window ``band`` = (least, greatest) key - query position offset (None: unbounded) and segment ids
    (``qids`` this device's (B|1, L), ``kids`` its keys' (B|1, Lk), or None), where each ring step's block runs
    only where some query reaches some key (a lax.cond on the block's positions)."""
    return _ring_fwd(q, k, v, qids, kids, axis, n, causal, scale, kernel, precision, band)[0]


def _ring_fwd(q: Any, k: Any, v: Any, qids: Any, kids: Any, axis: str, n: int, causal: bool, scale: float,
              kernel: str, precision: Any, band: tuple[Any, Any] | None) -> tuple[Any, Any]:
    i = jax.lax.axis_index(axis)
    ct, lq = compute_dtype(q), q.shape[1]
    o: Any = None
    lse: Any = None
    for t, (kt, vt, it) in _passed(axis, n, k, v, kids):

        def block(r: int, c: Any, causal: bool, keep: Any, kt: Any = kt, vt: Any = vt, it: Any = it) -> Any:
            ob, lb = local_fwd(q[:, r:], kt[:, :c], vt[:, :c], causal=causal, scale=scale, kernel=kernel,
                               precision=precision, keep=keep, kids=it)
            return _pad(ob, r, lq, 0.0), _pad(lb, r, lq, -jnp.inf)

        def skip() -> Any:
            return jnp.zeros((*q.shape[:-1], v.shape[-1]), ct), jnp.full(q.shape[:-1], -jnp.inf, ct)

        ob, lb = _step(block, skip, i, t, n, causal, band, lq, k.shape[1], qids)
        # Note: the first block covers every row (its own keys, or none): it is the accumulator, no merge with zeros.
        o, lse = (ob.astype(ct), lb.astype(ct)) if t == 0 else merge(o, lse, ob, lb)
    out = o.astype(q.dtype)
    return out, (q, k, v, qids, kids, out, lse)


def compute_dtype(x: Any) -> Any:
    # The compute dtype: float32 for half inputs, float64 kept.
    return jnp.promote_types(x.dtype, _F32)


def merge(o: Any, lse: Any, ob: Any, lb: Any) -> tuple[Any, Any]:
    new = jnp.logaddexp(lse, lb)
    safe = jnp.where(new == -jnp.inf, jnp.zeros((), new.dtype), new)
    return o * jnp.exp(lse - safe)[..., None] + ob * jnp.exp(lb - safe)[..., None], new


def _pad(x: Any, at: int, total: int, fill: float) -> Any:
    # x's rows (axis 1) placed at [at, at + len) of ``total`` rows, the others ``fill``.
    widths = [(0, 0)] * x.ndim
    widths[1] = (at, total - at - x.shape[1])
    return jnp.pad(x, widths, constant_values=fill)


def _step(block: Any, skip: Any, i: Any, t: int, n: int, causal: bool, band: tuple[Any, Any] | None, lq: int,
          lk: int, qids: Any) -> Any:
    # The block of device i at ring step t holds keys of device j = i - t, run as block(first row, end key, causal,
    # keep). Zigzag causal: t == 0 is the device's own block (causal inside); j < i: every q row sees the first key
    # chunk only; j > i: only the second q chunk sees keys, all of them. Each is half a block's work: every device
    # does the same. Under a band (contiguous shards) the block runs where some query reaches some key.
    if band is not None:
        q0, k0 = i * lq, ((i - t) % n) * lk
        keep = _keep(q0, k0, lq, _sub(lk), band, qids)
        return jax.lax.cond(_live(q0, k0, lq, lk, band), lambda: block(0, None, False, keep), skip)
    if not causal or t == 0:
        return block(0, None, causal, None)
    c = lq // 2
    return jax.lax.cond((i - t) % n < i, lambda: block(0, c, False, None), lambda: block(c, None, False, None))


def local_fwd(q: Any, k: Any, v: Any, *, causal: bool, scale: float, kernel: str, precision: Any,
              narrow: bool = False, keep: Any = None, kids: Any = None) -> tuple[Any, Any]:
    """One block: (output normalised over this block's keys in float32, per-row log-sum-exp (B, S, H)).

    ``narrow``: cuDNN's output in q's dtype instead, which is exact (cuDNN computed it there) and halves what
    is held and sent; the jnp block's output stays float32 (it was computed there). ``keep``, ``kids``: a
    structured mask's element rule and key segment ids (_local_xla), on the jnp block only.
    """
    if kernel == "cudnn" and keep is None:
        try:
            o, lse = _local_cudnn(q, k, v, causal, scale)
            return (o.astype(q.dtype) if narrow else o), lse
        except Exception:  # cuDNN refused this configuration at trace time: the jnp blocks take it
            pass
    return _local_xla(q, k, v, causal, scale, precision, keep, kids)


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


def _sub_blocks(k: Any, v: Any, kids: Any) -> tuple[int, tuple[Any, ...]]:
    # The sub-block length and what the scans walk: keys, values, starts (and the keys' segment ids) by sub-block.
    b, sk, hk = k.shape[:3]
    blk = _sub(sk)
    xs = [jnp.moveaxis(a.reshape(b, sk // blk, blk, hk, a.shape[-1]), 1, 0) for a in (k, v)]
    xs.append(jnp.arange(0, sk, blk))
    if kids is not None:
        xs.append(jnp.moveaxis(kids.reshape(kids.shape[0], sk // blk, blk), 1, 0))
    return blk, tuple(xs)


def _allowed(start: Any, blk: int, sq: int, causal: bool, keep: Any, kid: list[Any]) -> Any:
    # Which (query, key) pairs of a sub-block may attend, broadcastable to (b, hk, g, sq, blk); None: all of them.
    ok = None
    if causal:
        ok = start + jnp.arange(blk)[None, :] <= jnp.arange(sq)[:, None]
    if keep is not None:
        kept = keep(start, kid[0] if kid else None)[:, None, None]
        ok = kept if ok is None else jnp.logical_and(ok, kept)
    return ok


def _local_xla(q: Any, k: Any, v: Any, causal: bool, scale: float, precision: Any, keep: Any = None,
               kids: Any = None) -> tuple[Any, Any]:
    # keep(start, ids of the sub-block's keys or None) -> (b|1, sq, blk) booleans: a structured mask's element rule.
    b, sq, h, d = q.shape
    hk, dv = k.shape[2], v.shape[-1]
    g, ct = h // hk, compute_dtype(q)
    qg = q.reshape(b, sq, hk, g, d).astype(ct) * jnp.asarray(scale, ct)
    blk, xs = _sub_blocks(k, v, kids)

    def body(carry: Any, xs: Any) -> Any:
        m, total, acc = carry
        kc, vc, start, *kid = xs
        s = jnp.einsum("bqhgd,bkhd->bhgqk", qg, kc.astype(ct), precision=precision)
        ok = _allowed(start, blk, sq, causal, keep, kid)
        if ok is not None:
            s = jnp.where(ok, s, -jnp.inf)
        m_new = jnp.maximum(m, jnp.max(s, axis=-1))
        safe = jnp.where(m_new == -jnp.inf, jnp.zeros((), ct), m_new)
        p = jnp.exp(s - safe[..., None])
        alpha = jnp.exp(m - safe)
        total = alpha * total + jnp.sum(p, axis=-1)
        acc = alpha[..., None] * acc + jnp.einsum("bhgqk,bkhd->bhgqd", p, vc.astype(ct), precision=precision)
        return (m_new, total, acc), None

    init = (jnp.full((b, hk, g, sq), -jnp.inf, ct), jnp.zeros((b, hk, g, sq), ct),
            jnp.zeros((b, hk, g, sq, dv), ct))
    (m, total, acc), _ = jax.lax.scan(body, init, xs)
    empty = total == 0
    out = acc / jnp.where(empty, jnp.ones((), ct), total)[..., None]
    lse = jnp.where(empty, -jnp.inf, m + jnp.log(jnp.where(empty, jnp.ones((), ct), total)))
    # (b, hk, g, sq, ...) -> (b, sq, h, ...)
    out = jnp.moveaxis(out, 3, 1).reshape(b, sq, h, dv)
    return out, jnp.moveaxis(lse, 3, 1).reshape(b, sq, h)


def ring_bwd(axis: str, n: int, causal: bool, scale: float, kernel: str, precision: Any, band: tuple[Any, Any] | None,
             res: Any, dout: Any) -> tuple[Any, ...]:
    q, k, v, qids, kids, out, lse = res
    i = jax.lax.axis_index(axis)
    right = [(j, (j + 1) % n) for j in range(n)]
    ct, lq, lk = compute_dtype(q), q.shape[1], k.shape[1]
    delta = jnp.sum(dout.astype(ct) * out.astype(ct), axis=-1)
    dq, dk, dv = jnp.zeros(q.shape, ct), jnp.zeros(k.shape, ct), jnp.zeros(v.shape, ct)
    for t, (kt, vt, it) in _passed(axis, n, k, v, kids):

        def block(r: int, c: Any, causal: bool, keep: Any, kt: Any = kt, vt: Any = vt, it: Any = it) -> Any:
            gq, gk, gv = _local_bwd(q[:, r:], kt[:, :c], vt[:, :c], dout[:, r:], lse[:, r:], delta[:, r:],
                                    causal=causal, scale=scale, precision=precision, keep=keep, kids=it)
            return _pad(gq, r, lq, 0.0), _pad(gk, 0, lk, 0.0), _pad(gv, 0, lk, 0.0)

        def skip() -> Any:
            return jnp.zeros(q.shape, ct), jnp.zeros(k.shape, ct), jnp.zeros(v.shape, ct)

        gq, gk, gv = _step(block, skip, i, t, n, causal, band, lq, lk, qids)
        dq, dk, dv = dq + gq, dk + gk, dv + gv
        # Note: a block's dK/dV accumulator travels with it; after N moves it is home again.
        dk, dv = ppermute(dk, axis, right), ppermute(dv, axis, right)
    return dq.astype(q.dtype), dk.astype(k.dtype), dv.astype(v.dtype), None, None


ring.defvjp(_ring_fwd, ring_bwd)


def _local_bwd(q: Any, k: Any, v: Any, do: Any, lse: Any, delta: Any, *, causal: bool, scale: float,
               precision: Any, keep: Any = None, kids: Any = None) -> tuple[Any, Any, Any]:
    # Flash-attention backward over key sub-blocks: P = exp(S - lse) from the saved global statistics.
    b, sq, h, d = q.shape
    sk, hk, dv = k.shape[1], k.shape[2], v.shape[-1]
    g, ct = h // hk, compute_dtype(q)
    qg = q.reshape(b, sq, hk, g, d).astype(ct)
    dog = do.reshape(b, sq, hk, g, dv).astype(ct)
    lse_g = jnp.moveaxis(lse.reshape(b, sq, hk, g), 1, 3)  # (b, hk, g, sq)
    dl_g = jnp.moveaxis(delta.reshape(b, sq, hk, g), 1, 3)
    lse_safe = jnp.where(lse_g == -jnp.inf, jnp.zeros((), ct), lse_g)
    blk, xs = _sub_blocks(k, v, kids)
    sc = jnp.asarray(scale, ct)

    def body(dq: Any, xs: Any) -> Any:
        kc, vc, start, *kid = xs
        kc, vc = kc.astype(ct), vc.astype(ct)
        s = jnp.einsum("bqhgd,bkhd->bhgqk", qg * sc, kc, precision=precision)
        p = jnp.exp(s - lse_safe[..., None])
        ok = (lse_g != -jnp.inf)[..., None]
        allowed = _allowed(start, blk, sq, causal, keep, kid)
        ok = ok if allowed is None else jnp.logical_and(ok, allowed)
        p = jnp.where(ok, p, jnp.zeros((), ct))
        gv = jnp.einsum("bhgqk,bqhgd->bkhd", p, dog, precision=precision)
        dp = jnp.einsum("bqhgd,bkhd->bhgqk", dog, vc, precision=precision)
        ds = p * (dp - dl_g[..., None])
        dq = dq + jnp.einsum("bhgqk,bkhd->bqhgd", ds, kc, precision=precision) * sc
        gk = jnp.einsum("bhgqk,bqhgd->bkhd", ds, qg, precision=precision) * sc
        return dq, (gk, gv)

    dq, (gk, gv) = jax.lax.scan(body, jnp.zeros(qg.shape, ct), xs)
    gk = jnp.moveaxis(gk, 0, 1).reshape(b, sk, hk, d)
    gv = jnp.moveaxis(gv, 0, 1).reshape(b, sk, hk, dv)
    return dq.reshape(b, sq, h, d), gk, gv


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


__all__ = ["SUB_BLOCK", "compute_dtype", "local_fwd", "merge", "ppermute", "ring", "ring_bwd", "unzigzag",
           "zigzag"]
