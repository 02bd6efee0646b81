"""What does a float32-exact first call on JAX-GPU cost by route, and what does each route cost later?

Each row runs in a fresh process with JAX's backend started before the clock: the first eager call of
jit_block's transformer block (float32) through unarray, with unarray's JAX matmul and attention programs
compiled as built or under other per-program XLA options (``jax.jit(..., compiler_options=...)``: no global
flag, no JAX config). Then, per route, an 8192^3 float32 (and bfloat16) matmul: its compile time, its median
time after warm-up, and its error against a float64 product. Run on a GPU machine from the project root:

    python benchmarks/first_call_fp32_routes.py            (one JSON line per row)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import os, sys, time, json
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, "benchmarks")
import numpy as np
import jax, jax.numpy as jnp
row, opts = sys.argv[1], json.loads(sys.argv[2])
d = jax.devices("gpu")[0]
(jnp.ones(3, device=d) + 1).block_until_ready()

if opts is not None:
    _jit = jax.jit
    def jit(f=None, **kw):  # unarray's own programs take the route's options
        kw.setdefault("compiler_options", opts)
        return _jit(f, **kw) if f is not None else (lambda g: _jit(g, **kw))
    jax.jit = jit
    import unarray._backends.jax.backend as jb_mod
    _mm = {}
    def matmul(self, x1, x2, policy):
        p = jb_mod._JAX_PRECISION[policy]
        f = _mm.get(p)
        if f is None:
            f = _mm[p] = _jit(lambda a, b: jnp.matmul(a, b, precision=p), compiler_options=opts)
        return f(x1, x2)
    jb_mod.JaxBackend.matmul = matmul

import jit_block as jb, unarray as ua
if row.startswith("gemm"):
    n = 8192
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n), np.float32), rng.standard_normal((n, n), np.float32)
    dt = jnp.bfloat16 if row == "gemm_bf16" else jnp.float32
    xa, xb = jax.device_put(jnp.asarray(a, dt), d), jax.device_put(jnp.asarray(b, dt), d)
    t = time.perf_counter(); r = ua.matmul(xa, xb).block_until_ready(); first = time.perf_counter() - t
    times = []
    for _ in range(12):
        t = time.perf_counter(); ua.matmul(xa, xb).block_until_ready(); times.append(time.perf_counter() - t)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(np.asarray(r, np.float64) - exact).max() / np.abs(exact).max())
    median = sorted(times[2:])[len(times[2:]) // 2]
    print(json.dumps({"row": row, "first_s": round(first, 3), "median_ms": round(1e3 * median, 3), "rel_err": err}))
else:
    size = jb.SIZES["cuda"]
    x, p = jb.host_inputs(size)
    xj = jax.device_put(jnp.asarray(x, jnp.float32), d)
    pj = {k: jax.device_put(jnp.asarray(v, jnp.float32), d) for k, v in p.items()}
    (xj + 1).block_until_ready()
    t = time.perf_counter()
    r = jb.ua_block(xj, pj, size["heads"]).block_until_ready()
    first = time.perf_counter() - t
    exact = jb.ref_block(x, p, size["heads"])
    err = float(np.abs(np.asarray(r, np.float64) - exact).max() / np.abs(exact).max())
    print(json.dumps({"row": row, "first_s": round(first, 3), "rel_err": err}))
'''


def main() -> None:
    cache = tempfile.mkdtemp(prefix="ua-autotune-")
    routes = {
        "unarray (cuBLAS only, no Triton GEMM)": None,
        "Triton GEMM autotuned (XLA's default)": {},
        "autotune level 0": {"xla_gpu_autotune_level": 0},
        "autotune cache, cold": {"xla_gpu_per_fusion_autotune_cache_dir": cache},
        "autotune cache, warm": {"xla_gpu_per_fusion_autotune_cache_dir": cache},
    }
    for what in ("block", "gemm", "gemm_bf16"):
        for name, opts in routes.items():
            env = dict(os.environ, UNARRAY_PURE_PYTHON="1") if opts is not None else dict(os.environ)
            r = subprocess.run([sys.executable, "-c", CHILD, what, json.dumps(opts)], capture_output=True, text=True,
                               timeout=280, env=env)
            out = r.stdout.strip().splitlines()
            line = json.loads(out[-1]) if r.returncode == 0 and out else {"error": (r.stderr.strip().splitlines()
                                                                                     or ["?"])[-1][:300]}
            print(json.dumps({"route": name, **line, "what": what}), flush=True)


if __name__ == "__main__":
    main()
