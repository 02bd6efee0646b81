# Attention shared by every backend: the blocked online-softmax path written in
# array-API ops through a backend's namespace (the fallback everywhere, and the
# kernel of backends without a fused one), plus the small helpers the native
# paths share (causal offset, rows with nothing to attend).
# Each route is a Plan (_nn.py): the kernel it enters and the call that enters it.
# The backend base class calls it; it imports the base class for types only. Another library's fused
# kernels, borrowed for a GPU array, are the front end's plan (unarray/nn.py), not this module's.
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from unarray._backends._nn import Plan
from unarray._errors import ShapeError

if TYPE_CHECKING:
    from unarray._backends._base import Backend

BLOCK_Q = 512
BLOCK_K = 512
_HALF = ("float16", "bfloat16")


def blocked_plan(b: Backend, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str,
                 policy: str) -> Plan:
    """The blocked online-softmax path on ``b``'s own ops: what every backend without a fused kernel runs."""
    return Plan(blocked, lambda f: f(b, q, k, v, mask, is_causal, scale, layout, policy), lambda: _facts(b, q))


def _facts(b: Backend, q: Any) -> str:
    xp = getattr(b.xp, "__name__", b.name)
    acc = "float32" if b.dtype_name(q) in _HALF else b.dtype_name(q)
    return (f"(unarray blocked online-softmax: {xp} ops, {BLOCK_Q}x{BLOCK_K} blocks, {acc} accumulation, "
            "memory linear in sequence length)")


def blocked(b: Backend, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str,
            policy: str, block_q: int = BLOCK_Q, block_k: int = BLOCK_K) -> Any:
    _static(b, q, k, v)
    return _blocked(b, q, k, v, mask, is_causal, scale, layout, policy, block_q, block_k)


def _blocked(b: Backend, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str,
             policy: str, block_q: int, block_k: int) -> Any:
    xp = b.xp
    if layout == "bshd":
        q, k, v = (_swap_sh(b, a) for a in (q, k, v))
    *batch, hq, sq, d = (int(n) for n in q.shape)
    hk, sk, dv = int(k.shape[-3]), int(k.shape[-2]), int(v.shape[-1])
    g = hq // hk
    name = b.dtype_name(q)
    out_dtype = q.dtype
    ct = xp.float32 if name in _HALF else q.dtype
    # Note: grouped-query heads become an extra axis so k and v broadcast without a copy.
    q = xp.reshape(q, (*batch, hk, g, sq, d))
    k = xp.reshape(k, (*batch, hk, 1, sk, d))
    v = xp.reshape(v, (*batch, hk, 1, sk, dv))
    mask, additive = _grouped_mask(b, mask, len(batch), hk, g)
    offset = sk - sq
    dev = b.creation_device(q)  # new arrays go where q lives (torch/cupy default to the CPU / device 0)
    outs = []
    for qs in range(0, sq, block_q):
        qe = min(sq, qs + block_q)
        qb = xp.astype(q[..., qs:qe, :], ct) * scale
        m = xp.full((*batch, hk, g, qe - qs, 1), -math.inf, dtype=ct, **dev)
        lsum = xp.zeros((*batch, hk, g, qe - qs, 1), dtype=ct, **dev)
        acc = xp.zeros((*batch, hk, g, qe - qs, dv), dtype=ct, **dev)
        # Note: with is_causal, key blocks right of the last query row's diagonal are skipped.
        k_end = min(sk, qe + offset) if is_causal else sk
        for ks in range(0, max(k_end, 0), block_k):
            ke = min(k_end, ks + block_k)
            kb = xp.astype(k[..., ks:ke, :], ct)
            s = b.matmul(qb, b.matrix_transpose(kb), policy)
            allowed = None
            if is_causal and ke - 1 > qs + offset:
                rows = xp.reshape(xp.arange(qs + offset, qe + offset, **dev), (qe - qs, 1))
                allowed = xp.reshape(xp.arange(ks, ke, **dev), (1, ke - ks)) <= rows
            if mask is not None:
                mb = _slice2(mask, qs, qe, ks, ke)
                if additive:
                    s = s + xp.astype(mb, ct)
                else:
                    allowed = mb if allowed is None else xp.logical_and(allowed, mb)
            if allowed is not None:
                s = xp.where(allowed, s, -math.inf)
            m_new = xp.maximum(m, b.max(s, -1, True))
            # Note: a row that has seen no key keeps m = -inf; shifting by 0 keeps exp() at 0, not NaN.
            m_safe = xp.where(m_new == -math.inf, 0.0, m_new)
            p = xp.exp(s - m_safe)
            alpha = xp.exp(m - m_safe)
            lsum = alpha * lsum + b.sum(p, -1, None, True)
            acc = alpha * acc + b.matmul(p, xp.astype(v[..., ks:ke, :], ct), policy)
            m = m_new
        # Note: rows with nothing to attend have lsum == 0 and acc == 0: they come out as zeros.
        outs.append(acc / xp.where(lsum == 0.0, 1.0, lsum))
    if not outs:
        out = xp.zeros((*batch, hk, g, 0, dv), dtype=ct, **dev)
    else:
        out = outs[0] if len(outs) == 1 else xp.concat(outs, axis=-2)
    out = xp.astype(xp.reshape(out, (*batch, hq, sq, dv)), out_dtype)
    return _swap_sh(b, out) if layout == "bshd" else out


def _static(b: Backend, *arrays: Any) -> None:
    # The blocks are laid out in Python from the shapes; a dimension unknown while tracing (None inside
    # tf.function) cannot be, and is refused with a typed error rather than a TypeError from int(None).
    shapes = [tuple(a.shape) for a in arrays]
    if any(n is None for s in shapes for n in s):
        raise ShapeError(f"q, k, v have dimensions unknown while tracing ({', '.join(map(str, shapes))}); the "
                         f"{b.name} attention lays out its blocks from the shapes: trace with every dimension "
                         "known (an input_signature without None, or none at all)",
                         op="scaled_dot_product_attention", backend=b.name)


def _swap_sh(b: Backend, x: Any) -> Any:
    n = x.ndim
    return b.permute_dims(x, (*range(n - 3), n - 2, n - 3, n - 1))


def _grouped_mask(b: Backend, mask: Any, nbatch: int, hk: int, g: int) -> tuple[Any, bool]:
    if mask is None:
        return None, False
    xp = b.xp
    additive = b.dtype_name(mask) != "bool"
    full = nbatch + 3
    shape = (1,) * (full - mask.ndim) + tuple(int(n) for n in mask.shape)
    *mb, mh, msq, msk = shape
    heads = (1, 1) if mh == 1 else (hk, g)
    return xp.reshape(mask, (*mb, *heads, msq, msk)), additive


def _slice2(mask: Any, qs: int, qe: int, ks: int, ke: int) -> Any:
    rows = slice(None) if mask.shape[-2] == 1 else slice(qs, qe)
    cols = slice(None) if mask.shape[-1] == 1 else slice(ks, ke)
    return mask[..., rows, cols]


def empty_rows_possible(mask: Any, is_causal: bool, sq: int, sk: int) -> bool:
    """Whether some query row may have no key to attend (so the native kernel's row needs fixing)."""
    return mask is not None or (is_causal and sq > sk)
