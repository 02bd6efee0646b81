"""Does a consumer read finished data when a JAX array still being computed on the GPU is handed over?

Each trial makes x depend on 40 chained matrix products in one jitted call (milliseconds of GPU work
queued at once), hands x over at once with ua.to, and reads the consumer array back on the consumer's
default stream. A read that differs from base is a stream-order bug; "native" is the consumer's own
import (numba.cuda.as_cuda_array, cupy.from_dlpack, torch.from_dlpack) for comparison.
Run: python3 benchmarks/gpu/stream_order_jax.py [trials]

The work is queued in one jitted call so that x is still being computed at the handoff (eager ops
dispatched one by one would finish first, and the check could not fail).
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
from unarray.interop import _routes

trials = int(sys.argv[1]) if len(sys.argv) > 1 else 40
gpu = jax.devices("gpu")[0]
big = jax.device_put(np.full((2048, 2048), 1 / 2048, np.float32), gpu)  # big @ big == big


@jax.jit
def late(v, m):
    m = jax.lax.fori_loop(0, 40, lambda i, m: m @ big, m)
    return v + 0.0 * m[0, 0]


late(jnp.zeros((64, 34), jnp.float32), big).block_until_ready()  # compiled outside the trials
read = {"numba": lambda y: y.copy_to_host(), "cupy": lambda y: y.get(), "torch": lambda y: y.cpu().numpy()}
native = {"numba": numba.cuda.as_cuda_array, "cupy": cupy.from_dlpack, "torch": torch.from_dlpack}
out = {"ua.to": "C" if _routes.speedups is not None else "Python", "trials": trials}
for dst in ("numba", "cupy", "torch"):
    for when in ("first", "third", "native"):
        bad = 0
        for i in range(trials):
            base = np.random.default_rng(i).standard_normal((64, 34)).astype(np.float32)
            x0 = jax.device_put(base, gpu)
            jax.block_until_ready(x0)
            if when == "third":
                ua.to(x0, dst), ua.to(x0, dst)  # stored: the next handoff is a cache hit
            x = late(x0, big)  # ready only after the products
            y = native[dst](x) if when == "native" else ua.to(x, dst)
            bad += not np.array_equal(read[dst](y), base)
        out[f"{dst} {when}"] = bad
print(json.dumps(out))
if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], f"stream_order_jax_{out['ua.to']}.json"), "w") as f:
        json.dump(out, f)
