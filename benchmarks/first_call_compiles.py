"""Which XLA compilations make a transformer block's first eager call on JAX slow, through unarray and in JAX?

The XLA compilations of a transformer block's first eager call on JAX, written with unarray or in JAX
(``jit_block.py``'s blocks): how many, how long in all, and the slowest, so that a slow first call can be
traced to the programs that cost it. One side per process (each starts cold; JAX's backend is started
before the clock).

    python benchmarks/first_call_compiles.py --side ua                 # CPU, jit_block's CPU sizes
    python benchmarks/first_call_compiles.py --side native --device cuda
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import jit_block as jb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", choices=("ua", "native"), required=True)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--top", type=int, default=8)
    a = ap.parse_args()
    import jax
    import jax.numpy as jnp
    from jax import monitoring

    dev = jax.devices("gpu" if a.device == "cuda" else "cpu")[0]
    size = jb.SIZES[a.device]
    x_h, p_h = jb.host_inputs(size)
    x = jax.device_put(jnp.asarray(x_h), dev)
    p = {k: jax.device_put(jnp.asarray(v), dev) for k, v in p_h.items()}
    x.block_until_ready()
    compiles: list[tuple[float, str]] = []
    current: list[str] = [""]

    def listener(event: str, seconds: float, **kw: Any) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append((seconds, str(kw.get("fun_name", current[0]))))

    monitoring.register_event_duration_secs_listener(listener)
    t = time.perf_counter()
    if a.side == "ua":
        out = jb.ua_block(x, p, size["heads"])
    else:
        with jax.default_matmul_precision("float32"):
            out = jb.jax_block(x, p, size["heads"])
    out.block_until_ready()
    first = time.perf_counter() - t
    compiles.sort(reverse=True)
    print(json.dumps({"side": a.side, "device": a.device, "first_call_s": round(first, 3),
                      "compilations": len(compiles), "compile_s": round(sum(s for s, _ in compiles), 3),
                      "slowest": [f"{s:.3f}s {n}" for s, n in compiles[:a.top]]}))


if __name__ == "__main__":
    main()
