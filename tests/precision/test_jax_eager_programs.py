"""unarray's own eager JAX programs (matmul, tensordot, vecdot, attention) compile with per-program XLA options
(no Triton GEMM autotuning): float32-exact values eager and traced (on a CPU bitwise JAX's own functions at the
same precision; on a GPU cuBLAS's kernel, which may round otherwise than Triton's), and no global setting of the
user's changed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unarray as ua

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
ROOT = Path(__file__).resolve().parents[2]
HIGHEST = jax.lax.Precision.HIGHEST


def _draw(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _exact(got: np.ndarray, want: np.ndarray, bound: np.ndarray, k: int) -> None:
    # float32 accumulation of k products: at most k+1 roundings of the sum of |products| (bound) per element
    err = np.abs(got.astype(np.float64) - want)
    assert (err <= (k + 1) * np.finfo(np.float32).eps * bound + 1e-30).all(), float(err.max())


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 9), k=st.integers(1, 9), n=st.integers(1, 9), seed=st.integers(0, 2**31 - 1))
def test_eager_and_traced_contractions_are_float32_exact(m: int, k: int, n: int, seed: int) -> None:
    a, b = jnp.asarray(_draw(seed, m, k)), jnp.asarray(_draw(seed + 1, k, n))
    c = jnp.asarray(_draw(seed + 2, m, k))
    na, nb, nc = (np.asarray(x, np.float64) for x in (a, b, c))
    ab, ac = np.abs(na) @ np.abs(nb), (np.abs(na) * np.abs(nc)).sum(-1)
    for got in (ua.matmul(a, b), jax.jit(ua.matmul)(a, b), ua.tensordot(a, b, axes=[[1], [0]]),
                ua.tensordot(a, b, axes=1)):
        _exact(np.asarray(got), na @ nb, ab, k)
    _exact(np.asarray(ua.vecdot(a, c)), (na * nc).sum(-1), ac, k)
    if a.device.platform == "cpu":  # the same XLA:CPU dot as JAX's own function at that precision
        np.testing.assert_array_equal(np.asarray(ua.matmul(a, b)), np.asarray(jnp.matmul(a, b, precision=HIGHEST)))
    g = jax.grad(lambda x: ua.sum(ua.matmul(x, b)))(a)
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(np.asarray(b).sum(1), (m, k)), rtol=1e-5, atol=1e-5)


def test_eager_and_traced_attention_agree() -> None:
    q = jnp.asarray(_draw(3, 2, 3, 17, 8))
    eager = ua.nn.scaled_dot_product_attention(q, q, q, is_causal=True)
    traced = jax.jit(lambda x: ua.nn.scaled_dot_product_attention(x, x, x, is_causal=True))(q)
    np.testing.assert_allclose(np.asarray(eager), np.asarray(traced), rtol=2e-6, atol=2e-6)


def test_the_programs_options_change_no_global_setting() -> None:
    code = """
        import os, jax, jax.numpy as jnp, numpy as np, unarray as ua
        before = (os.environ.get("XLA_FLAGS"), jax.config.jax_default_matmul_precision)
        a = jnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
        ua.matmul(a, a.T); ua.nn.scaled_dot_product_attention(a[None, None], a[None, None], a[None, None])
        assert (os.environ.get("XLA_FLAGS"), jax.config.jax_default_matmul_precision) == before
        print("ok")
    """
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


@pytest.mark.gpu
def test_a_float32_exact_first_gemm_on_a_gpu_skips_the_triton_autotuning(cuda: Any) -> None:
    cuda("jax")
    # The same GEMM compiled as JAX compiles it eagerly (with Triton autotuning) and as unarray does.
    code = """
        import time, jax, jax.numpy as jnp, numpy as np, unarray as ua
        d = jax.devices("gpu")[0]
        w = jax.device_put(np.ones((64, 64), np.float32), d)  # CUDA, cuBLAS and the first compile started
        ua.matmul(w, w).block_until_ready(); jnp.matmul(w, w, precision="highest").block_until_ready()
        a = jax.device_put(np.random.default_rng(0).standard_normal((4096, 4096), np.float32), d)
        b = jax.device_put(np.random.default_rng(1).standard_normal((4096, 4096), np.float32), d)
        t = time.perf_counter(); ua.matmul(a, b).block_until_ready(); mine = time.perf_counter() - t
        t = time.perf_counter(); jnp.matmul(a, b, precision="highest").block_until_ready()
        theirs = time.perf_counter() - t
        print(mine, theirs)
    """
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    mine, theirs = map(float, r.stdout.split())
    assert mine < theirs / 2, (mine, theirs)
