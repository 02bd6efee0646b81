"""Why does ``ua.matmul`` on large bf16 JAX arrays differ from ``jax.jit(jnp.matmul)``?

Times one 8192^3 bf16 matmul on the GPU through each route in rounds whose order rotates, so every route runs
first equally often (median of the rounds, each the mean of a loop of calls ended by ``block_until_ready``; with
a fixed order the same GEMM measured 3.5% apart by its place): ``ua.matmul`` (unarray's default policy),
``jnp.matmul`` eager and ``jax.jit(jnp.matmul)`` at JAX's default precision and at each explicit
``precision=``, and the dot's ``preferred_element_type``. Prints TFLOP/s and the ratio to
``jax.jit(jnp.matmul)``, and the optimized HLO's custom call of each jitted route with the algorithm XLA's
autotuner selected (which GEMM runs).

    python benchmarks/gpu/jax_bf16_matmul.py --out $OUT/jax_bf16_matmul
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import statistics
import time
from collections.abc import Callable
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--loop", type=int, default=20)
    ap.add_argument("--out", type=pathlib.Path)
    a = ap.parse_args()
    import jax
    import jax.numpy as jnp

    import unarray as ua

    n = a.n
    k1, k2 = jax.random.split(jax.random.key(0))
    x = jax.random.normal(k1, (n, n), jnp.bfloat16)
    y = jax.random.normal(k2, (n, n), jnp.bfloat16)
    P = jax.lax.Precision
    routes: dict[str, Callable[[], Any]] = {
        "jax.jit(jnp.matmul)": jax.jit(jnp.matmul).__call__,
        "ua.matmul": ua.matmul,
        "jnp.matmul eager": jnp.matmul,
    }
    jitted: dict[str, Any] = {"jax.jit(jnp.matmul)": jax.jit(jnp.matmul)}
    for name, prec in (("DEFAULT", P.DEFAULT), ("HIGH", P.HIGH), ("HIGHEST", P.HIGHEST)):
        f = jax.jit(lambda a, b, prec=prec: jnp.matmul(a, b, precision=prec))
        routes[f"jax.jit(matmul, precision={name})"] = f
        jitted[f"jax.jit(matmul, precision={name})"] = f
    g = jax.jit(lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32).astype(jnp.bfloat16))
    routes["jax.jit(matmul, f32 out then bf16)"] = g
    jitted["jax.jit(matmul, f32 out then bf16)"] = g

    def ua_bf16(a: Any, b: Any) -> Any:
        with ua.precision("bf16"):
            return ua.matmul(a, b)

    routes["ua.matmul under ua.precision('bf16')"] = ua_bf16
    for fn in routes.values():  # compile and autotune outside the clock
        for _ in range(3):
            fn(x, y).block_until_ready()
    times: dict[str, list[float]] = {k: [] for k in routes}
    names = list(routes)
    for r in range(a.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = routes[name]
            t = time.perf_counter()
            for _ in range(a.loop):
                out = fn(x, y)
            out.block_until_ready()
            times[name].append((time.perf_counter() - t) / a.loop)
    flops = 2 * n**3
    base = statistics.median(times["jax.jit(jnp.matmul)"])
    rows = []
    for name, ts in times.items():
        med = statistics.median(ts)
        rows.append({"route": name, "ms": med * 1e3, "tflops": flops / med / 1e12, "ratio_to_jit": base / med})
    hlo = {}
    for name, f in jitted.items():
        text = f.lower(x, y).compile().as_text()
        calls = [ln for ln in text.splitlines() if "custom_call_target=" in ln]
        hlo[name] = sorted({ln.split("custom_call_target=")[1].split(",")[0] for ln in calls}
                           | {"fusion" for ln in text.splitlines() if "kind=kCustom" in ln and "gemm" in ln}
                           | {"selected_algorithm " + m for ln in calls
                              for m in re.findall(r'"selected_algorithm":"?(-?\d+)', ln)})
    eager_jaxpr = str(jax.make_jaxpr(lambda a, b: ua.matmul(a, b))(x, y))
    meta = {"device": str(jax.devices()[0].device_kind), "jax": jax.__version__, "n": n, "loop": a.loop,
            "rounds": a.rounds}
    for r in rows:
        print(f"{r['route']:42s} {r['ms']:8.3f} ms {r['tflops']:7.1f} TFLOP/s  speed vs jit {r['ratio_to_jit']:.3f}")
    print(json.dumps(hlo, indent=1))
    print(eager_jaxpr)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "jax_bf16_matmul.json").write_text(json.dumps({"meta": meta, "rows": rows, "gemm": hlo,
                                                                 "ua_jaxpr": eager_jaxpr}, indent=1))


if __name__ == "__main__":
    main()
