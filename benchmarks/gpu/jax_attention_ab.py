"""A/B of unarray's written-out JAX attention inside the transformer block on a GPU (issue 19, the "tf32" row).

Variants of ``attention_jax._xla`` patched in for one run each: as it is (q scaled before the dot), the scores
scaled after the dot, and each of those with the dots written 4-D when there is one query head per key head.
Each run is ``benchmarks/jit_block.py``'s ua.jit and native jax.jit side by side under "tf32"; the optimized HLO
of both blocks is written for the first variant.

    python3 benchmarks/gpu/jax_attention_ab.py --out $OUT/jax_ab
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any

import jax
import jax.numpy as jnp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import jit_block  # noqa: E402

from unarray._backends.jax import attention as attention_jax  # noqa: E402

ORIGINAL = attention_jax._xla


def variant(scale_after: bool, four_d: bool) -> Any:
    def _xla(q: Any, k: Any, v: Any, bias: Any, mask: Any, scale: float, causal: bool, barrier: bool = True) -> Any:
        b, sq, hq, _ = q.shape
        hk, sk = k.shape[2], k.shape[1]
        g = hq // hk
        ct = jnp.promote_types(q.dtype, jnp.float32)
        sc = jnp.asarray(scale, ct)
        if four_d and g == 1:
            s = jnp.einsum("bqhd,bkhd->bhqk", q.astype(ct) if scale_after else q.astype(ct) * sc, k.astype(ct))
        else:
            qg = q.reshape(b, sq, hk, g, q.shape[-1]).astype(ct)
            s = jnp.einsum("bqhgd,bkhd->bhgqk", qg if scale_after else qg * sc, k.astype(ct)).reshape(b, hq, sq, sk)
        if scale_after:
            s = s * sc
        if bias is not None:
            s = s + bias.astype(ct)
        if mask is not None:
            s = jnp.where(mask, s, -jnp.inf)
        if causal:
            s = jnp.where(jnp.tril(jnp.ones((sq, sk), dtype=bool), sk - sq), s, -jnp.inf)
        low = jnp.finfo(ct)
        m = jax.lax.stop_gradient(jnp.maximum(jnp.max(s, axis=-1, keepdims=True), jnp.asarray(low.min, ct)))
        p = jnp.exp(s - m)
        p = p / jnp.maximum(jnp.sum(p, axis=-1, keepdims=True), jnp.asarray(low.tiny, ct))
        if four_d and g == 1:
            out = jnp.einsum("bhqk,bkhd->bqhd", p, v.astype(ct))
        else:
            out = jnp.einsum("bhgqk,bkhd->bqhgd", p.reshape(b, hk, g, sq, sk), v.astype(ct))
        return out.reshape(b, sq, hq, v.shape[-1]).astype(q.dtype)

    return _xla


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--precision", default="tf32")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    res: dict[str, Any] = {"device": jax.devices()[0].device_kind, "jax": jax.__version__}
    cases = {"as it is": ORIGINAL, "scaled after": variant(True, False), "4-D, scaled before": variant(False, True),
             "4-D, scaled after": variant(True, True), "as it is (again)": ORIGINAL}
    for name, fn in cases.items():
        attention_jax._xla = fn
        attention_jax._JITTED.clear()
        r = jit_block.run("jax", "cuda", jit_block.SIZES["cuda"], "float32", 10, 40, args.precision,
                          ("ua.jit", "native compiled"))
        v = r["variants"]
        res[name] = {"ratio": r["ua.jit / native compiled"], "ratio_min": r["ua.jit / native compiled (min)"],
                     "ua.jit_ms": v["ua.jit"]["median_ms"], "native_ms": v["native compiled"]["median_ms"],
                     "err_vs_f64": v["ua.jit"]["max_rel_err_vs_float64"]}
        print(name, {k: round(x, 4) if isinstance(x, float) else x for k, x in res[name].items()}, flush=True)
    attention_jax._xla = ORIGINAL
    (args.out / "jax_attention_ab.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
