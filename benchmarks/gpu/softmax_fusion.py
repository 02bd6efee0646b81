"""Which written-out softmax XLA:GPU fuses into one kernel inside unarray's JAX attention (issue 19).

unarray's JAX attention for float32 writes the softmax out in jnp ops (attention_jax._xla). On the H100 its
masked max-shift and zero-total guards left the softmax as five kernels over the scores where
jax.nn.dot_product_attention's softmax is one Triton fusion. Each variant below is the same attention
(einsum, causal mask, softmax, einsum) with the softmax written differently; for each: the median time,
the kernels in the optimized HLO's entry computation, whether a Triton softmax fusion appears, and the
edge rows (no key, a NaN query, a -inf query) against the float64 reference of the tests.

    python3 benchmarks/gpu/softmax_fusion.py --out $OUT/softmax_fusion
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def scores(q: Any, k: Any, causal: bool, scale: float) -> Any:
    b, sq, h, d = q.shape
    sk = k.shape[1]
    s = jnp.einsum("bqhd,bkhd->bhqk", q * jnp.asarray(scale, q.dtype), k)
    if causal:
        s = jnp.where(jnp.tril(jnp.ones((sq, sk), dtype=bool), sk - sq), s, -jnp.inf)
    return s


def out_of(p: Any, v: Any) -> Any:
    return jnp.einsum("bhqk,bkhd->bqhd", p, v)


def v_current(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    s = scores(q, k, causal, scale)
    m = jnp.max(s, axis=-1, keepdims=True, initial=-jnp.inf)
    p = jnp.exp(s - jnp.where(m == -jnp.inf, jnp.zeros((), s.dtype), m))
    total = jnp.sum(p, axis=-1, keepdims=True)
    return out_of(p / jnp.where(total == 0, jnp.ones((), s.dtype), total), v)


def v_plain(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    return out_of(jax.nn.softmax(scores(q, k, causal, scale), axis=-1), v)


def v_maximum(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    s = scores(q, k, causal, scale)
    f = jnp.finfo(s.dtype)
    m = jnp.maximum(jnp.max(s, axis=-1, keepdims=True), jnp.asarray(f.min, s.dtype))
    p = jnp.exp(s - m)
    total = jnp.sum(p, axis=-1, keepdims=True)
    return out_of(p / jnp.maximum(total, jnp.asarray(f.tiny, s.dtype)), v)


def v_stopgrad_max(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    # jax.nn.softmax's own form with the guards: the shift as a stop_gradient max.
    s = scores(q, k, causal, scale)
    f = jnp.finfo(s.dtype)
    m = jax.lax.stop_gradient(jnp.maximum(jnp.max(s, axis=-1, keepdims=True), jnp.asarray(f.min, s.dtype)))
    p = jnp.exp(s - m)
    return out_of(p / jnp.maximum(jnp.sum(p, axis=-1, keepdims=True), jnp.asarray(f.tiny, s.dtype)), v)


def v_plain_fixed(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    s = scores(q, k, causal, scale)
    out = out_of(jax.nn.softmax(s, axis=-1), v)
    empty = jnp.swapaxes(jnp.max(s, axis=-1) == -jnp.inf, 1, 2)[..., None]  # (b, q, h, 1)
    return jnp.where(empty, jnp.zeros((), out.dtype), out)


def v_native(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    return jax.nn.dot_product_attention(q, k, v, scale=scale, is_causal=causal)


VARIANTS = {"current": v_current, "plain softmax": v_plain, "maximum guards": v_maximum,
            "maximum guards, stop_gradient": v_stopgrad_max, "plain + empty-row fix": v_plain_fixed,
            "jax.nn.dot_product_attention": v_native}


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool, scale: float) -> np.ndarray:
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    sq, sk = s.shape[-2:]
    if causal:
        s = np.where(np.tril(np.ones((sq, sk), bool), sk - sq), s, -np.inf)
    with np.errstate(all="ignore"):
        m = np.max(s, axis=-1, keepdims=True, initial=-np.inf)
        p = np.exp(s - np.where(m == -np.inf, 0.0, m))
        t = p.sum(-1, keepdims=True)
        return np.einsum("bhqk,bkhd->bqhd", p / np.where(t == 0, 1.0, t), v)


def edges(fn: Any, dev: Any) -> dict[str, Any]:
    # Small cases on the device: causal Sq > Sk (two rows with no key), a NaN query row, a -inf query row.
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, 5, 2, 8)).astype(np.float32)
    k = rng.standard_normal((1, 3, 2, 8)).astype(np.float32)
    v = rng.standard_normal((1, 3, 2, 8)).astype(np.float32)
    res = {}
    for name, (qq, causal) in {"causal Sq>Sk": (q, True), "nan query": (_put(q, np.nan), False),
                               "-inf query": (_put(q, -np.inf), False)}.items():
        want = reference(qq, k, v, causal, 0.35)
        got = np.asarray(jax.jit(fn, static_argnums=(3, 4))(*(jax.device_put(a, dev) for a in (qq, k, v)),
                                                               causal, 0.35), np.float64)
        same_nan = bool((np.isnan(got) == np.isnan(want)).all())
        fin = np.isfinite(want)
        err = float(np.abs(got[fin] - want[fin]).max()) if fin.any() else 0.0
        res[name] = {"nan_pattern_matches": same_nan, "max_abs_err": err,
                     "ok": same_nan and err < 1e-5 and bool(np.isfinite(got[fin]).all())}
    return res


def _put(q: np.ndarray, value: float) -> np.ndarray:
    q = q.copy()
    q[0, 1, 0, :] = value
    return q


def entry_kernels(hlo: str) -> list[str]:
    lines = hlo[hlo.index("\nENTRY"):].splitlines()
    out = []
    for ln in lines:
        if " fusion(" in ln or "custom-call(" in ln:
            kind = ln.split("kind=")[1].split(",")[0] if "kind=" in ln else "custom-call"
            out.append(ln.strip().split(" =")[0] + " " + kind)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--shape", default="8,1024,16,64")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    dev = jax.devices(args.device)[0]
    b, s, h, d = (int(x) for x in args.shape.split(","))
    rng = np.random.default_rng(0)
    q, k, v = (jax.device_put(rng.standard_normal((b, s, h, d)).astype(np.float32), dev) for _ in range(3))
    scale = 1 / np.sqrt(d)
    results: dict[str, Any] = {"device": str(dev.device_kind), "jax": jax.__version__, "shape": [b, s, h, d]}
    for name, fn in VARIANTS.items():
        f = jax.jit(fn, static_argnums=(3, 4))
        with jax.default_matmul_precision("tensorfloat32"):
            hlo = f.lower(q, k, v, True, scale).compile().as_text()
            times = []
            for _ in range(5):
                f(q, k, v, True, scale).block_until_ready()
            for _ in range(30):
                t = time.perf_counter()
                f(q, k, v, True, scale).block_until_ready()
                times.append((time.perf_counter() - t) * 1e3)
        kern = entry_kernels(hlo)
        results[name] = {"median_ms": statistics.median(times), "min_ms": min(times), "kernels": len(kern),
                         "triton_softmax": any("triton_softmax" in x for x in kern), "entry": kern,
                         "edges": edges(fn, dev)}
        (args.out / f"hlo_{name.replace(' ', '_').replace(',', '').replace('+', 'and')}.txt").write_text(hlo)
        print(name, round(results[name]["median_ms"], 3), "ms", len(kern), "kernels", flush=True)
    (args.out / "softmax_fusion.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
