"""JAX -> Numba/CuPy/torch on CUDA while JAX is still computing the source: does the consumer see it?

Each trial makes x depend on a long JAX matrix product (x = base + 0 * sum(big @ big)), hands x over
at once with ua.to, and reads the consumer array back on the consumer's default stream. A read that
differs from base is a stream-order bug. Run: python3 benchmarks/gpu/stream_order_jax.py [trials]
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack  # numba-cuda with NumPy 2.5

import cupy  # noqa: F401 (the consumers are imported, as a caller would)
import jax
import jax.numpy as jnp
import numba.cuda  # noqa: F401
import torch  # noqa: F401

import unarray as ua
from unarray import interop

trials = int(sys.argv[1]) if len(sys.argv) > 1 else 40
gpu = jax.devices("gpu")[0]
big = jax.device_put(np.random.default_rng(0).standard_normal((4096, 4096), np.float32), gpu)
read = {"numba": lambda y: y.copy_to_host(), "cupy": lambda y: y.get(), "torch": lambda y: y.cpu().numpy()}
out = {"ua.to": "C" if interop._speedups is not None else "Python", "trials": trials}
for dst in ("numba", "cupy", "torch"):
    for when in ("first", "third"):
        bad = 0
        for i in range(trials):
            base = np.random.default_rng(i).standard_normal((64, 34)).astype(np.float32)
            x0 = jax.device_put(base, gpu)
            jax.block_until_ready(x0)
            if when == "third":
                ua.to(x0, dst), ua.to(x0, dst)  # stored: the next handoff is a cache hit
            x = x0 + 0.0 * jnp.sum(big @ big)  # ready only after the product
            y = ua.to(x, dst)
            bad += not np.array_equal(read[dst](y), base)
        out[f"{dst} {when}"] = bad
print(json.dumps(out))
if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], f"stream_order_jax_{out['ua.to']}.json"), "w") as f:
        json.dump(out, f)
