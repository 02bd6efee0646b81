"""Are the JAX ring attention's local kernels right, and as fast as cuDNN's, on one GPU?

One GPU: the ring attention's local kernels and the ring on a 1-device mesh.

1. LSE correctness: cuDNN's fused attention with its softmax statistics (``jax._src.cudnn``,
   ``return_residual=True``) against the jnp blocked kernel at HIGHEST precision (float32 math): the output and
   the per-row log-sum-exp, causal and not, H=16 with 16 and 4 key/value heads, S=2048.
2. Speed, causal bf16 B1 H16 D128 at S=16k and 32k: ``jax.nn.dot_product_attention(implementation="cudnn")``
   against the two local kernels (TFLOP/s = 2*B*H*S*S*D / t, wall clock around ``block_until_ready``, median).
3. The ring on a 1-device mesh (zigzag over one device, local kernel cuDNN and jnp): time and error against
   ``jax.nn`` cuDNN at S=32k; gradients at S=1024 float32 against ``jax.grad`` of ``jax.nn``'s XLA path.

    python benchmarks/gpu/ring_kernel_check.py > $OUT/ring_kernel_check.json
"""

# ruff: noqa: T201, B023  (the jitted lambdas run inside the iteration that binds their loop variables)
from __future__ import annotations

import json
import pathlib
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from unarray._backends.jax import attention_ring as R  # noqa: E402
from unarray._backends.jax import ring_blocks as RB  # noqa: E402

HI = jax.lax.Precision.HIGHEST
OUT: dict[str, Any] = {"jax": jax.__version__, "device": str(jax.devices()[0].device_kind)}


def timed(fn: Any, *args: Any) -> float:
    for _ in range(2):
        jax.block_until_ready(fn(*args))
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def inputs(s: int, hk: int, dtype: Any, seed: int = 0) -> tuple[Any, Any, Any]:
    ks = jax.random.split(jax.random.key(seed), 3)
    return (jax.random.normal(ks[0], (1, s, 16, 128), dtype), jax.random.normal(ks[1], (1, s, hk, 128), dtype),
            jax.random.normal(ks[2], (1, s, hk, 128), dtype))


def lse_check() -> None:
    rows = []
    scale = 128 ** -0.5
    for causal in (False, True):
        for hk in (16, 4):
            q, k, v = inputs(2048, hk, jnp.bfloat16)
            try:
                oc, lc = jax.jit(lambda q, k, v: RB._local_cudnn(q, k, v, causal, scale))(q, k, v)
            except Exception as e:  # noqa: BLE001
                rows.append({"causal": causal, "hk": hk, "error": f"{type(e).__name__}: {str(e)[:300]}"})
                continue
            ox, lx = jax.jit(lambda q, k, v: RB._local_xla(q, k, v, causal, scale, HI))(q, k, v)
            rows.append({"causal": causal, "hk": hk, "out_max_err": float(jnp.max(jnp.abs(oc - ox))),
                         "lse_max_err": float(jnp.max(jnp.abs(lc - lx))),
                         "lse_range": [float(lx.min()), float(lx.max())]})
    OUT["lse_check"] = rows


def speed() -> None:
    rows = []
    scale = 128 ** -0.5
    for s in (16384, 32768):
        q, k, v = inputs(s, 16, jnp.bfloat16)
        flops = 2.0 * 16 * s * s * 128
        fns = {
            "jax.nn cudnn": jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                                                                 implementation="cudnn")),
            "local cudnn+lse": jax.jit(lambda q, k, v: RB._local_cudnn(q, k, v, True, scale)),
            "local jnp blocked": jax.jit(lambda q, k, v: RB._local_xla(q, k, v, True, scale,
                                                                      jax.lax.Precision.DEFAULT)),
        }
        for name, fn in fns.items():
            try:
                t = timed(fn, q, k, v)
                rows.append({"S": s, "kernel": name, "ms": t * 1e3, "tflops": flops / t / 1e12})
            except Exception as e:  # noqa: BLE001
                rows.append({"S": s, "kernel": name, "error": f"{type(e).__name__}: {str(e)[:300]}"})
    OUT["speed"] = rows


def ring_one_device() -> None:
    mesh = Mesh(np.array(jax.devices()[:1]), ("s",))
    sh = NamedSharding(mesh, P(None, "s"))
    rows = []
    s = 32768
    q, k, v = (jax.device_put(a, sh) for a in inputs(s, 16, jnp.bfloat16))
    ref = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                                               implementation="cudnn"))(q, k, v)
    for kernel in ("cudnn", "xla"):
        plan = R.Plan(mesh, (None, "s", None, None), "s", 1, True, kernel)
        try:
            fn = R._compiled(plan, True, 128 ** -0.5, "bshd", "fastest")[0]
            t = timed(fn, q, k, v)
            err = float(jnp.max(jnp.abs(fn(q, k, v).astype(jnp.float32) - ref.astype(jnp.float32))))
            rows.append({"S": s, "kernel": kernel, "ms": t * 1e3, "tflops": 2.0 * 16 * s * s * 128 / t / 1e12,
                         "max_abs_err_vs_cudnn": err})
        except Exception as e:  # noqa: BLE001
            rows.append({"S": s, "kernel": kernel, "error": f"{type(e).__name__}: {str(e)[:400]}"})
    # gradients, float32 (the jnp local kernel; cuDNN takes half dtypes only)
    q, k, v = (jax.device_put(a, sh) for a in inputs(1024, 4, jnp.float32, 1))
    w = jax.random.normal(jax.random.key(9), q.shape)
    plan = R.Plan(mesh, (None, "s", None, None), "s", 1, True, "xla")
    fn = R._compiled(plan, True, 128 ** -0.5, "bshd", "highest")[1]
    with jax.default_matmul_precision("highest"):
        g = jax.jit(jax.grad(lambda q, k, v: jnp.sum(fn(q, k, v) * w), argnums=(0, 1, 2)))(q, k, v)
        r = jax.jit(jax.grad(lambda q, k, v: jnp.sum(jax.nn.dot_product_attention(
            q, k, v, is_causal=True, implementation="xla") * w), argnums=(0, 1, 2)))(q, k, v)
    rows.append({"grad_max_abs_err": [float(jnp.max(jnp.abs(a - b))) for a, b in zip(g, r, strict=True)],
                 "grad_max_abs": [float(jnp.max(jnp.abs(b))) for b in r]})
    OUT["ring_1_device"] = rows


if __name__ == "__main__":
    for step in (lse_check, speed, ring_one_device):
        t0 = time.perf_counter()
        try:
            step()
        except Exception as e:  # noqa: BLE001
            OUT[step.__name__ + "_error"] = f"{type(e).__name__}: {str(e)[:600]}"
        OUT[step.__name__ + "_s"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(OUT), flush=True)
