"""Structured masks on each GPU library's native kernel, against the dense-mask reference (``--devices gpu``).

Every route a window, causal aligned bottom-right or segment ids can take on a GPU: torch's flex_attention under a
block mask built from block bounds, SDPA with ``causal_lower_right``, the decode step on K/V sliced to the
reachable keys, a small band on the slice; JAX's cuDNN ``local_window_size``; cuDNN's band bounds on CuPy arrays (in
a process without torch, where cuDNN is CuPy's own route). Each compares with a float64 NumPy reference of the same
rounded inputs under the dense boolean mask, and reads ``ua.explain`` to know the route ran. A CPU run deselects
them (the ``cuda`` fixture); the routes' choices are held without a GPU in tests/attention/test_mask_reach.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import unarray as ua
from tests._support import assert_close

_RNG = np.random.default_rng(7)


def allowed(sq: int, sk: int, window: Any, causal: bool, qids: Any = None, kids: Any = None) -> np.ndarray:
    """The dense (…, Sq, Sk) boolean mask a structured mask means (positions aligned bottom-right)."""
    left, right = (window, window) if isinstance(window, int) else (window or (None, None))
    if causal:
        right = 0 if right is None else min(right, 0)
    i = np.arange(sq)[:, None] + (sk - sq)
    j = np.arange(sk)[None, :]
    m = np.ones((sq, sk), bool)
    if left is not None:
        m &= j >= i - left
    if right is not None:
        m &= j <= i + right
    if qids is not None:
        m = m & (np.asarray(qids)[..., None, :, None] == np.asarray(kids)[..., None, None, :])
    return m


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """float64 attention (bhsd) under a boolean mask; a row with nothing to attend is zeros."""
    g = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, g, axis=-3), np.repeat(v, g, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    s = np.where(mask, s, -np.inf)
    with np.errstate(all="ignore"):
        top = s.max(-1, keepdims=True)
        p = np.exp(s - np.where(np.isfinite(top), top, 0))
        total = p.sum(-1, keepdims=True)
        return (p @ v) / np.where(total == 0, 1, total)


def packed(b: int, s: int, docs: int) -> np.ndarray:
    """Segment ids of ``docs`` packed documents per row (sorted, random lengths)."""
    cuts = np.sort(_RNG.integers(1, s, size=(b, docs - 1)), axis=1)
    return (np.arange(s)[None, :, None] >= cuts[:, None, :]).sum(-1).astype(np.int32)


def inputs(b: int, hq: int, hk: int, sq: int, sk: int, d: int) -> tuple[np.ndarray, ...]:
    return (_RNG.standard_normal((b, hq, sq, d)), _RNG.standard_normal((b, hk, sk, d)),
            _RNG.standard_normal((b, hk, sk, d)))


TORCH_CASES = [
    # (name, b, hq, hk, sq, sk, d, dtype, kwargs, route named by explain)
    ("window causal", 2, 4, 2, 300, 300, 64, "bfloat16", {"window": (50, 0)}, "flex_attention"),
    ("window two-sided", 1, 4, 4, 300, 300, 64, "float16", {"window": (40, 30)}, "flex_attention"),
    ("window Sq<Sk", 2, 4, 2, 200, 333, 64, "bfloat16", {"window": (64, 8)}, "flex_attention"),
    ("segments causal", 2, 4, 2, 384, 384, 64, "bfloat16", {"segments": 3, "is_causal": True}, "flex_attention"),
    ("segments pair", 2, 4, 4, 256, 320, 64, "float16", {"segments": 2}, "flex_attention"),
    ("bottom-right causal", 2, 8, 2, 100, 300, 64, "float16", {"is_causal": True}, "causal_lower_right"),
    ("bottom-right causal fp32", 1, 4, 4, 64, 200, 32, "float32", {"is_causal": True}, "causal_lower_right"),
    ("decode", 2, 32, 8, 1, 1000, 128, "bfloat16", {"is_causal": True}, "every key reachable"),
    ("decode window", 2, 32, 8, 1, 1000, 128, "bfloat16", {"window": (256, 0), "is_causal": True},
     "reachable keys [743, 1000)"),
    ("few rows band", 1, 8, 2, 4, 1000, 64, "bfloat16", {"window": (100, 0)}, "boolean mask over them"),
]


def _call_args(case: tuple[Any, ...], lib: Any, to: Any) -> tuple[Any, ...]:
    _, b, hq, hk, sq, sk, d, dtype, kw, _ = case
    q, k, v = inputs(b, hq, hk, sq, sk, d)
    kw = dict(kw)
    qids = kids = None
    if "segments" in kw:
        docs = kw.pop("segments")
        qids = packed(b, sq, docs)
        kids = qids if sq == sk else packed(b, sk, docs)
        kw["segment_ids"] = to(qids) if sq == sk else (to(qids), to(kids))
    mask = allowed(sq, sk, kw.get("window"), kw.get("is_causal", False), qids, kids)
    return q, k, v, kw, mask, dtype


@pytest.mark.parametrize("case", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_torch_cuda_routes_match_the_dense_mask(cuda: Any, case: tuple[Any, ...]) -> None:
    torch = cuda("torch")

    def to(a: np.ndarray) -> Any:
        return torch.as_tensor(a, device="cuda")

    q, k, v, kw, mask, dtype = _call_args(case, torch, to)
    t = [torch.as_tensor(a, device="cuda").to(getattr(torch, dtype)) for a in (q, k, v)]
    rounded = [a.double().cpu().numpy() for a in t]
    plan = str(ua.explain("scaled_dot_product_attention", *t, **kw))
    assert case[-1] in plan, plan
    out = ua.scaled_dot_product_attention(*t, **kw)
    assert out.dtype == t[0].dtype and out.device == t[0].device
    # Note: two calls, the second on the cached block mask and compiled kernel, both held to the reference.
    again = ua.scaled_dot_product_attention(*t, **kw)
    expected = reference(*rounded, mask)
    for got in (out, again):
        assert_close(got.double().cpu().numpy(), expected, dtype, n_terms=case[6], scale=4.0)


def test_torch_cuda_segment_ids_changed_in_place_are_read_again(cuda: Any) -> None:
    torch = cuda("torch")
    q, k, v = (torch.as_tensor(a, device="cuda").to(torch.bfloat16) for a in inputs(1, 2, 2, 256, 256, 64))
    ids = torch.as_tensor(packed(1, 256, 2), device="cuda")
    first = ua.scaled_dot_product_attention(q, k, v, segment_ids=ids)
    ids[:, 128:] = 9  # the same tensor, new contents: the cached block mask must not be reused
    second = ua.scaled_dot_product_attention(q, k, v, segment_ids=ids)
    rounded = [a.double().cpu().numpy() for a in (q, k, v)]
    ref = reference(*rounded, allowed(256, 256, None, False, ids.cpu().numpy(), ids.cpu().numpy()))
    assert_close(second.double().cpu().numpy(), ref, "bfloat16", n_terms=64, scale=4.0)
    assert not torch.equal(first, second)


JAX_CASES = [
    ("window causal cuDNN", 2, 4, 2, 256, 256, 64, "bfloat16", {"window": (32, 0)}, "local_window_size=(32, 0)"),
    ("decode", 2, 32, 8, 1, 777, 128, "bfloat16", {"is_causal": True}, "every key reachable"),
    ("decode window", 1, 32, 8, 1, 777, 128, "bfloat16", {"window": (100, 0), "is_causal": True},
     "reachable keys [676, 777)"),
    ("few rows band", 1, 8, 2, 3, 500, 64, "float16", {"window": (64, 0)}, "boolean mask over them"),
    ("segments (blocked)", 1, 4, 2, 256, 256, 64, "bfloat16", {"segments": 3}, ""),
    ("two-sided window (blocked)", 1, 4, 4, 256, 256, 64, "bfloat16", {"window": (16, 16)}, ""),
]


@pytest.mark.parametrize("case", JAX_CASES, ids=[c[0] for c in JAX_CASES])
def test_jax_gpu_routes_match_the_dense_mask(cuda: Any, case: tuple[Any, ...]) -> None:
    jax = cuda("jax")
    import jax.numpy as jnp

    dev = jax.devices("gpu")[0]

    def to(a: np.ndarray) -> Any:
        return jax.device_put(jnp.asarray(a), dev)

    q, k, v, kw, mask, dtype = _call_args(case, jax, to)
    t = [jax.device_put(jnp.asarray(a, dtype=dtype), dev) for a in (q, k, v)]
    rounded = [np.asarray(a.astype(jnp.float32), dtype=np.float64) for a in t]
    plan = str(ua.explain("scaled_dot_product_attention", *t, **kw))
    assert case[-1] in plan, plan
    out = ua.scaled_dot_product_attention(*t, **kw)
    assert out.dtype == t[0].dtype
    assert_close(np.asarray(out.astype(jnp.float32), dtype=np.float64), reference(*rounded, mask), dtype,
                 n_terms=case[6], scale=4.0)


_CUPY_SCRIPT = r"""
import sys
import numpy as np, cupy
import unarray as ua
from tests.attention.test_mask_routes import allowed, reference, inputs
from tests._support import assert_close
cases = [((2, 4, 2, 300, 300, 64), {"window": (50, 0)}), ((1, 4, 4, 200, 333, 64), {"window": (64, 8)}),
         ((2, 8, 2, 100, 300, 64), {"window": (20, 0), "is_causal": True}),
         ((2, 32, 8, 1, 900, 128), {"window": (128, 0)})]
dts = ["float16"]
try:
    cupy.zeros(2, dtype="bfloat16")
    dts.append("bfloat16")
except Exception:
    pass
for dt in dts:
    for shape, kw in cases:
        q, k, v = (cupy.asarray(a).astype(dt) for a in inputs(*shape))
        plan = str(ua.explain("scaled_dot_product_attention", q, k, v, **kw))
        assert "band bounds" in plan, plan
        out = ua.scaled_dot_product_attention(q, k, v, **kw)
        rounded = [cupy.asnumpy(a.astype("float32")).astype(np.float64) for a in (q, k, v)]
        mask = allowed(shape[3], shape[4], kw["window"], kw.get("is_causal", False))
        assert_close(cupy.asnumpy(out.astype("float32")).astype(np.float64), reference(*rounded, mask), dt,
                     n_terms=shape[5], scale=4.0)
ids = cupy.asarray(np.repeat(np.arange(4), 64)[None].astype(np.int32))
q, k, v = (cupy.asarray(a).astype("float16") for a in inputs(1, 2, 2, 256, 256, 64))
out = ua.scaled_dot_product_attention(q, k, v, segment_ids=ids)
rounded = [cupy.asnumpy(a.astype("float32")).astype(np.float64) for a in (q, k, v)]
ref = reference(*rounded, allowed(256, 256, None, False, cupy.asnumpy(ids), cupy.asnumpy(ids)))
assert_close(cupy.asnumpy(out.astype("float32")).astype(np.float64), ref, "float16", n_terms=64, scale=4.0)
assert "torch" not in sys.modules
print("cupy masks: all checks passed")
"""


def test_cupy_band_bounds_through_cudnn_without_torch(cuda: Any) -> None:
    cuda("cupy")
    pytest.importorskip("cudnn")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _CUPY_SCRIPT], cwd=root, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "cupy masks: all checks passed" in done.stdout
