"""dask arrays of CuPy chunks (run with ``--devices gpu``; skipped where no GPU is visible): the device is the
chunks', every op stays lazy and matches a float64 NumPy reference, float32 matmul keeps the call's precision
policy when the graph runs later, and ``ua.to`` refuses to move a CUDA-chunked array to NumPy without
``device=``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
pytest.importorskip("cupy")

import unarray as ua  # noqa: E402
from tests._support import assert_close  # noqa: E402
from tests.ops.test_dask import _attention_ref, _refuse  # noqa: E402


@pytest.fixture
def cp(request: pytest.FixtureRequest) -> Any:
    if str(request.config.getoption("--devices")) != "gpu":
        pytest.skip("GPU-side dask check: run with --devices gpu")
    import cupy

    if cupy.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device visible")
    return cupy


def _host(x: Any) -> np.ndarray:
    out = x.compute()
    return np.asarray(out.get() if hasattr(out, "get") else out)


def test_cupy_chunks_live_on_cuda_and_ops_stay_there_lazily(cp: Any) -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (64, 48)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (48, 40)).astype(np.float32)
    x = ua.to(cp.asarray(a), "dask", chunks=(16, 16))
    y = ua.to(cp.asarray(b), "dask", chunks=(16, 8))
    assert ua.device(x) == ua.Device("cuda", 0)
    with dask.config.set(scheduler=_refuse):
        m = ua.matmul(x, y)
        v = ua.var(x, axis=(0, 1), correction=1)
        s = ua.sum(x, axis=0)
        p = ua.permute_dims(x, (1, 0))
    assert type(m._meta).__module__.startswith("cupy")
    assert_close(_host(m), a.astype(np.float64) @ b, "float32", n_terms=48, scale=4.0 * 48)
    assert_close(_host(v), np.var(a.astype(np.float64), ddof=1), "float32", n_terms=a.size)
    assert_close(_host(s), a.astype(np.float64).sum(0), "float32", n_terms=64, scale=2.0)
    np.testing.assert_array_equal(_host(p), a.T)


def test_float32_matmul_keeps_the_call_policy_when_the_graph_runs_later(cp: Any) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    x = ua.to(cp.asarray(a), "dask", chunks=(128, 128))
    with ua.precision("highest"):
        exact = ua.matmul(x, x)
    with ua.precision("tf32"):
        rough = ua.matmul(x, x)
    ref = a.astype(np.float64) @ a.astype(np.float64)
    err_exact = np.abs(_host(exact) - ref).max() / np.abs(ref).max()
    err_rough = np.abs(_host(rough) - ref).max() / np.abs(ref).max()
    # The policy of each call, though both graphs run outside its scope (H100: 3.3e-7 against 3.2e-4; plain
    # CuPy gives the same two figures).
    assert err_exact < 1e-5 < err_rough
    assert "per chunk when the graph runs" in ua.explain("matmul", x, x).precision


def test_attention_on_cupy_chunks_matches_numpy(cp: Any) -> None:
    rng = np.random.default_rng(2)
    q = rng.standard_normal((1, 4, 96, 32)).astype(np.float32)
    k = rng.standard_normal((1, 2, 80, 32)).astype(np.float32)
    v = rng.standard_normal((1, 2, 80, 16)).astype(np.float32)
    dq, dk, dv = (ua.to(cp.asarray(t), "dask", chunks=(1, 2, 32, 32)) for t in (q, k, v))
    with dask.config.set(scheduler=_refuse):
        out = ua.scaled_dot_product_attention(dq, dk, dv, is_causal=True)
    expected = _attention_ref(q, k, v, None, True, 1 / math.sqrt(32))
    assert_close(_host(out), expected, "float32", n_terms=80 * 32, scale=4.0)


def test_to_numpy_of_cuda_chunks_needs_a_device_and_counts_the_compute(cp: Any) -> None:
    x = ua.to(cp.arange(12.0).reshape(3, 4), "dask", chunks=(2, 2))
    before = ua.stats()["computes"]
    with pytest.raises(ua.HandoffError, match="device='cpu'"):
        ua.to(x, "numpy")
    assert ua.stats()["computes"] == before  # refused before anything ran
    out = ua.to(x, "numpy", device="cpu")
    assert isinstance(out, np.ndarray) and np.array_equal(out, np.arange(12.0).reshape(3, 4))
    assert ua.stats()["computes"] == before + 1
    with pytest.raises(ua.DeviceMismatchError):
        ua.add(x, np.ones((3, 4)))  # a NumPy array cannot join CUDA chunks without a move
