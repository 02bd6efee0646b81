# Attention for JAX arrays and tracers: jax.nn.dot_product_attention with
# implementation="cudnn" where cuDNN's fused kernel takes the inputs (NVIDIA GPU,
# float16/bfloat16, head dim a multiple of 8 up to 128, D == Dv), and elsewhere
# (CPU, TPU, ROCm, float32/64, Dv != D, zero-size inputs) the same math in jnp ops
# (what implementation="xla" runs), written here so that it is stable under jit
# and keeps NaN. Inside jax.jit the same calls trace.
# JAX's layout is (B, S, H, D), so "bshd" needs no transpose.
from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import SingleDeviceSharding

from unarray._backends._nn import HALF, Plan
from unarray._backends.attention_masks import MaskSpec
from unarray._backends.jax.compile import EAGER_OPTIONS

_JAX_PRECISION = {"highest": "highest", "tf32": "high", "bf16": "default", "fastest": "default"}


def _platform(q: Any) -> str:
    try:
        d = q.device if isinstance(q.device, jax.Device) else next(iter(q.devices()))
    except Exception:  # a tracer: it runs on the default device
        d = jax.devices()[0]
    return str(d.platform)


def choose(q: Any, v: Any) -> str:
    d, dv = q.shape[-1], v.shape[-1]
    takes = 0 not in q.shape and 0 not in v.shape and jnp.dtype(q.dtype).name in HALF and d == dv
    return "cudnn" if takes and d % 8 == 0 and d <= 128 and _platform(q) in ("gpu", "cuda") else "xla"


def _prepare(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, layout: str) -> tuple[Any, ...]:
    if layout == "bhsd":
        q, k, v = (jnp.swapaxes(a, -2, -3) for a in (q, k, v))
    batch = tuple(q.shape[:-3])
    n = math.prod(batch)  # Note: not reshape(-1, ...), which cannot infer -1 when a dimension is 0
    q, k, v = (a.reshape(n, *a.shape[-3:]) for a in (q, k, v))
    sq, sk = q.shape[1], k.shape[1]
    causal = is_causal
    if is_causal and sq != sk:
        # Note: JAX's is_causal is aligned top-left; unarray's bottom-right becomes an explicit mask.
        tri = jnp.tril(jnp.ones((sq, sk), dtype=bool), sk - sq)
        if mask is None:
            mask = tri
        elif mask.dtype == jnp.bool_:
            mask = jnp.logical_and(mask, tri)
        else:
            mask = jnp.where(tri, mask, -jnp.inf)
        causal = False
    bool_mask = bias = None
    if mask is not None:
        # JAX wants a 4-D (B, H, Sq, Sk) mask; batch dimensions are flattened like q's.
        if mask.ndim > 3 and len(batch) != 1:
            mask = jnp.broadcast_to(mask, (*batch, *mask.shape[-3:])).reshape(n, *mask.shape[-3:])
        mask = mask.reshape((1,) * (4 - mask.ndim) + tuple(mask.shape))
        if mask.dtype == jnp.bool_:
            bool_mask = mask
        else:
            bias = mask.astype(q.dtype)
    return q, k, v, bool_mask, bias, causal, batch


def _row_has_key(bool_mask: Any, bias: Any, causal: bool, sq: int, sk: int) -> Any:
    allowed = bool_mask if bool_mask is not None else jnp.ones((1, 1, sq, sk), dtype=bool)
    if bias is not None:
        allowed = jnp.logical_and(allowed, bias != -jnp.inf)
    if causal:
        allowed = jnp.logical_and(allowed, jnp.tril(jnp.ones((sq, sk), dtype=bool), sk - sq))
    # (B|1, H|1, Sq, 1) -> the output's (B, Sq, H, 1)
    return jnp.swapaxes(jnp.any(allowed, axis=-1, keepdims=True), 1, 2)


def plan(q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str, policy: str,
         keys: tuple[int, int] | None = None, band: tuple[Any, ...] | None = None) -> Plan | None:
    """The call's route: a ring over the mesh axis that shards the sequence, or one jitted program around
    ``jax.nn.dot_product_attention(implementation="cudnn")`` where cuDNN takes the inputs, else :func:`_xla`;
    None for a structured mask off a ring (JAX's kernels for it are attention_masks.py's, else the blocked path).
    ``keys`` (a slice of K/V) and ``band`` (a small mask's bounds, :func:`_sdpa`) are done inside that program."""
    spread, is_causal = _spread(q), spec.causal
    # Note: a tracer may wrap a sharded array (eager jax.grad) or carry an Explicit mesh type: the ring's plan
    # looks. A concrete array on one device is the common call and costs two isinstance checks.
    if spread or isinstance(q, jax.core.Tracer):
        from unarray._backends.jax import attention_ring as ring

        p = ring.plan(q, k, v, mask, is_causal, layout, spec)  # a sequence sharded over a mesh axis runs a ring
        if p is not None:
            ids = ring.segment_ids(spec, q, layout)
            return Plan(ring.run, lambda f: f(p, q, k, v, is_causal, scale, layout, policy, ids), f"({p.describe()})")
    if spec.structured:
        return None
    impl = "xla" if spread else choose(q, v)
    # Note: the scores are written out between the dot and the softmax on the CPU only (_xla); a tracer's
    # platform is the default device's (a CPU computation traced on a machine whose default is a GPU
    # keeps XLA:CPU's fusion there).
    barrier = _platform(q) == "cpu"
    # (the policy is for float32; XLA:CPU rejects it on half dots)
    precision = _JAX_PRECISION[policy] if q.dtype == jnp.float32 else None
    # Note: one jitted function per configuration: outside jit the slicing, mask, reshapes and kernel run as one
    # compiled program (eager op-by-op dispatch would add launches); inside jit it simply inlines.
    static = (impl, is_causal, scale, layout, barrier, not isinstance(q, jax.core.Tracer), precision, keys, band)
    if impl == "cudnn":
        sq, sk = (q.shape[-2], k.shape[-2]) if layout == "bhsd" else (q.shape[-3], k.shape[-3])
        sk = sk if keys is None else keys[1] - keys[0]
        extra = ("" if layout == "bshd" else ", bhsd swapped to JAX's bshd") + (
            ", bottom-right causal as an explicit mask" if is_causal and sq != sk else "")
        kernel: Any = jax.nn.dot_product_attention
        note = f"(implementation='cudnn'{extra})"
    else:
        kernel, note = _xla, ("(the math of jax.nn.dot_product_attention(implementation='xla') in jnp ops: einsum "
                              "and a max-shifted softmax over scores computed once; any Dv, float64 logits kept in "
                              "float64, NaN kept)")

    fn = _compiled(kernel, *static)  # (the route's program: a repeated call enters it with its arrays alone)
    return Plan(kernel, lambda f: _compiled(f, *static)(q, k, v, mask), note, lambda q, k, v: fn(q, k, v, None))


def _sdpa(q: Any, k: Any, v: Any, mask: Any, kernel: Any, impl: str, is_causal: bool, scale: float, layout: str,
          barrier: bool, precision: str | None = None, keys: tuple[int, int] | None = None,
          band: tuple[Any, ...] | None = None) -> Any:
    if precision is not None:  # read while tracing: the program carries the policy, no context around each call
        with jax.default_matmul_precision(precision):
            return _sdpa(q, k, v, mask, kernel, impl, is_causal, scale, layout, barrier, None, keys, band)
    if keys is not None:
        k, v = (jax.lax.slice_in_dim(a, *keys, axis=a.ndim - (2 if layout == "bhsd" else 3)) for a in (k, v))
    if band is not None:  # (spec, *its block): MaskSpec.allowed's mask over a few rows, built while tracing
        mask = band[0].allowed(jnp, *band[1:])
    q3, k3, v3, bool_mask, bias, causal, batch = _prepare(q, k, v, mask, is_causal, layout)
    out = _call(kernel, impl, q3, k3, v3, bias, bool_mask, scale, causal, barrier)
    if impl == "cudnn" and (bool_mask is not None or bias is not None):
        # Note: the xla kernel gives a uniform average (or NaN) for a row with no key; the contract says zeros.
        has = _row_has_key(bool_mask, bias, causal, q3.shape[1], k3.shape[1])
        out = jnp.where(has, out, jnp.zeros((), out.dtype))
    out = out.reshape(*batch, *out.shape[1:])
    return jnp.swapaxes(out, -2, -3) if layout == "bhsd" else out


@functools.cache
def _compiled(kernel: Any, impl: str, is_causal: bool, scale: float, layout: str, barrier: bool, top: bool,
              precision: str | None, keys: tuple[int, int] | None, band: tuple[Any, ...] | None) -> Any:
    # Note: one jitted callable per static configuration, called with arrays only: JAX's C++ dispatch fast path;
    # compiler options for a top-level program only (see EAGER_OPTIONS).
    return jax.jit(functools.partial(_sdpa, kernel=kernel, impl=impl, is_causal=is_causal, scale=scale, layout=layout,
                                     barrier=barrier, precision=precision, keys=keys, band=band),
                   compiler_options=EAGER_OPTIONS if top else None)


def _spread(q: Any) -> bool:
    # A concrete array over several devices that the ring did not take (a mask, Sq != Sk causal): cuDNN's
    # custom partitioner refuses a sharded sequence when compiling, so the jnp math runs (XLA partitions it).
    return not isinstance(q, jax.core.Tracer) and not isinstance(q.sharding, SingleDeviceSharding)


def _call(kernel: Any, impl: str, q: Any, k: Any, v: Any, bias: Any, mask: Any, scale: float, causal: bool,
          barrier: bool = True) -> Any:
    if impl == "cudnn":
        try:
            return kernel(q, k, v, bias, mask, scale=scale, is_causal=causal, implementation="cudnn")
        except Exception:  # cuDNN refused this configuration at trace time: the jnp path takes it
            return _xla(q, k, v, bias, mask, scale, causal, barrier)
    return kernel(q, k, v, bias, mask, scale, causal, barrier)


def _xla(q: Any, k: Any, v: Any, bias: Any, mask: Any, scale: float, causal: bool, barrier: bool = True) -> Any:
    # The math of jax.nn.dot_product_attention(implementation="xla"), for any Dv, in the compute dtype.
    b, sq, hq, _ = q.shape
    hk, sk = k.shape[2], k.shape[1]
    g = hq // hk
    # Note: half inputs are upcast (XLA:CPU has no f16 x f16 -> f32 dot); float64 stays float64 (jax.nn
    # computes float64 logits in float32).
    ct = jnp.promote_types(q.dtype, jnp.float32)
    # Note: q is scaled before the dot, so the scores are the dot's own output. Scaled after it, XLA:CPU
    # contracts (dot * scale) - max into one fused multiply-add in one fusion and not in the other: with
    # logits ~1e18 the row's maximum came out 1e10 away from itself and the softmax gave NaN or zeros.
    qg = q.reshape(b, sq, hk, g, q.shape[-1]).astype(ct) * jnp.asarray(scale, ct)
    kc = k.astype(ct)
    if q.shape[-1] == 1:
        # Note: a dot over D == 1 becomes a plain multiply, which XLA:CPU contracts with the subtraction in
        # the same way; a zero column keeps it a dot (the scores are unchanged: 0 * 0 adds nothing).
        qg, kc = (jnp.concatenate([a, jnp.zeros_like(a)], axis=-1) for a in (qg, kc))
    if g == 1:
        # Note: one query head per key head written 4-D: XLA:GPU runs the 5-D form with a unit group axis
        # slower (docs/design-notes.md).
        s = jnp.einsum("bqhd,bkhd->bhqk", qg.reshape(b, sq, hq, qg.shape[-1]), kc)
    else:
        s = jnp.einsum("bqhgd,bkhd->bhgqk", qg, kc).reshape(b, hq, sq, sk)
    if bias is not None:
        s = s + bias.astype(ct)
    if mask is not None:
        s = jnp.where(mask, s, -jnp.inf)
    if causal:
        s = jnp.where(jnp.tril(jnp.ones((sq, sk), dtype=bool), sk - sq), s, -jnp.inf)
    # Note: and on the CPU the scores are materialised once, so that no fusion recomputes the dot in another
    # order. Elsewhere the dot's output is a library GEMM's, and the barrier only cost the softmax its fusion.
    if barrier:
        s = jax.lax.optimization_barrier(s)  # type: ignore[no-untyped-call]
    # Note: the guards are maximum()s, not where()s: a row with no key has m = -inf, raised to the dtype's
    # lowest finite value, so s - m stays -inf and exp gives 0, and a zero total is raised to the smallest
    # normal, so the row is 0 / tiny = 0. NaN scores keep m = NaN (maximum propagates it): NaN in, NaN out. In
    # this form XLA:GPU fuses the softmax into one Triton kernel, as jax.nn.softmax's; select guards split it
    # into several. The shift is a constant of the gradient, as in jax.nn.softmax (it cancels in the exact derivative).
    low = jnp.finfo(ct)  # type: ignore[no-untyped-call]
    top = jnp.max(s, axis=-1, keepdims=True, initial=-jnp.inf if sk == 0 else None)  # (no key at all: Sk == 0)
    m = jax.lax.stop_gradient(jnp.maximum(top, jnp.asarray(low.min, ct)))
    p = jnp.exp(s - m)
    total = jnp.sum(p, axis=-1, keepdims=True)
    p = p / jnp.maximum(total, jnp.asarray(low.tiny, ct))
    if g == 1:
        out = jnp.einsum("bhqk,bkhd->bqhd", p, v.astype(ct))
    else:
        out = jnp.einsum("bhgqk,bkhd->bqhgd", p.reshape(b, hk, g, sq, sk), v.astype(ct))
    return out.reshape(b, sq, hq, v.shape[-1]).astype(q.dtype)
