"""ua.scaled_dot_product_attention against a float64 NumPy reference on every backend."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close
from unarray import _backends
from unarray._backends import attention_blocked as _attention
from unarray._backends.attention_masks import CAUSAL, NONE

OP = "scaled_dot_product_attention"


def reference(q: Any, k: Any, v: Any, mask: Any = None, is_causal: bool = False, scale: float | None = None,
              layout: str = "bhsd") -> np.ndarray:
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    if layout == "bshd":
        q, k, v = (np.swapaxes(a, -2, -3) for a in (q, k, v))
    hq, sq, d = q.shape[-3:]
    hk, sk = k.shape[-3], k.shape[-2]
    k, v = np.repeat(k, hq // hk, axis=-3), np.repeat(v, hq // hk, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(d) if scale is None else scale)
    allowed = np.ones(s.shape, bool)
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype == bool:
            allowed &= m
        else:
            s = s + m.astype(np.float64)
            allowed &= m != -np.inf
    if is_causal:
        allowed &= np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq
    s = np.where(allowed, s, -np.inf)
    top = s.max(-1, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(top), top, 0))
    total = p.sum(-1, keepdims=True)
    out = (p @ v) / np.where(total == 0, 1, total)
    return np.swapaxes(out, -2, -3) if layout == "bshd" else out


def cast(backend: TestBackend, x: Any, name: str) -> Any:
    if name in ("bool", "float32", "float64") or backend.name in ("numpy", "cupy") and name == "float16":
        return backend.asarray(np.asarray(x, dtype=name))
    y = backend.asarray(np.asarray(x, dtype=np.float32))
    if backend.name == "torch":
        import torch

        return y.to(getattr(torch, name))
    if backend.name == "tensorflow":
        import tensorflow as tf

        return tf.cast(y, getattr(tf, name))
    if backend.name == "mlx":
        return y.astype(getattr(backend.module, name))
    return y.astype(name)


def dtypes_of(backend: TestBackend) -> list[str]:
    out = ["float32", "float16"]
    if backend.has_float64:
        out.append("float64")
    if backend.has_bfloat16:
        out.append("bfloat16")
    return out


def to64(backend: TestBackend, x: Any) -> np.ndarray:
    if backend.name == "torch" and x.dtype.is_floating_point:
        x = x.double()
    elif backend.name == "tensorflow" and x.dtype.is_floating:
        import tensorflow as tf

        x = tf.cast(x, tf.float64)
    out = backend.to_numpy(x)
    return out if out.dtype == bool else out.astype(np.float64)


def rounded(backend: TestBackend, x: np.ndarray, name: str) -> np.ndarray:
    return to64(backend, cast(backend, x, name))


@st.composite
def problems(draw: Any) -> dict[str, Any]:
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    hk, g = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    sq, sk, d, dv = (draw(st.integers(1, n)) for n in (9, 9, 8, 8))
    layout = draw(st.sampled_from(["bhsd", "bshd"]))
    mask_kind = draw(st.sampled_from(["none", "bool", "additive", "bool-2d", "empty-row"]))
    return dict(batch=batch, hq=hk * g, hk=hk, sq=sq, sk=sk, d=d, dv=dv, layout=layout, mask_kind=mask_kind,
                causal=draw(st.booleans()), scale=draw(st.one_of(st.none(), st.floats(0.05, 2.0))),
                seed=draw(st.integers(0, 2**31 - 1)))


def build(p: dict[str, Any]) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(p["seed"])

    def shape(h: int, s: int, d: int) -> tuple[int, ...]:
        return (*p["batch"], h, s, d) if p["layout"] == "bhsd" else (*p["batch"], s, h, d)

    q = rng.standard_normal(shape(p["hq"], p["sq"], p["d"]))
    k = rng.standard_normal(shape(p["hk"], p["sk"], p["d"]))
    v = rng.standard_normal(shape(p["hk"], p["sk"], p["dv"]))
    full = (*p["batch"], p["hq"], p["sq"], p["sk"])
    kind, mask = p["mask_kind"], None
    if kind in ("bool", "empty-row"):
        mask = rng.random(full) < 0.7
        if kind == "empty-row":
            mask[..., 0, :] = False
    elif kind == "bool-2d":
        mask = rng.random(full[-2:]) < 0.7
    elif kind == "additive":
        mask = np.where(rng.random(full[-3:]) < 0.7, rng.standard_normal(full[-3:]), -np.inf)
    return q, k, v, mask


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(p=problems(), data=st.data())
def test_matches_float64_reference(backend: TestBackend, p: dict[str, Any], data: Any) -> None:
    name = data.draw(st.sampled_from(dtypes_of(backend)))
    q, k, v, mask = build(p)
    qr, kr, vr = (rounded(backend, a, name) for a in (q, k, v))
    m = None
    if mask is not None:
        m = cast(backend, mask, "bool" if mask.dtype == bool else name)
        mask = to64(backend, m)
    out = ua.scaled_dot_product_attention(cast(backend, q, name), cast(backend, k, name), cast(backend, v, name),
                                          mask=m, is_causal=p["causal"], scale=p["scale"], layout=p["layout"])
    assert backend.is_native(out)
    expected = reference(qr, kr, vr, mask, p["causal"], p["scale"], p["layout"])
    got = to64(backend, out)
    assert not np.isnan(got).any()
    assert_close(got, expected, name, n_terms=p["sk"] + p["d"], scale=float(np.abs(vr).max()))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(p=problems())
def test_blocked_path_matches_reference(backend: TestBackend, p: dict[str, Any]) -> None:
    q, k, v, mask = build(p)
    b = _backends.get(backend.name)
    arrays = [None if a is None else backend.asarray(a.astype(np.float32) if a.dtype != bool else a)
              for a in (q, k, v, mask)]
    scale = p["scale"] or 1 / math.sqrt(p["d"])
    spec = CAUSAL if p["causal"] else NONE
    out = _attention.blocked(b, *arrays[:3], arrays[3], spec, scale, p["layout"], "highest", block_q=2, block_k=3)
    expected = reference(*(a.astype(np.float32) for a in (q, k, v)), mask, p["causal"], scale, p["layout"])
    assert_close(backend.to_numpy(out), expected, "float32", n_terms=p["sk"] + p["d"],
                 scale=float(np.abs(v).max()))


@pytest.mark.parametrize(("sq", "sk"), [(6, 3), (4, 4)])
def test_rows_with_nothing_to_attend_are_zeros(backend: TestBackend, sq: int, sk: int) -> None:
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, sq, 4), (1, 2, sk, 4), (1, 2, sk, 4)))
    mask = np.ones((sq, sk), bool)
    mask[1] = False
    out = backend.to_numpy(ua.scaled_dot_product_attention(
        *(backend.asarray(a) for a in (q, k, v)), mask=backend.asarray(mask), is_causal=True))
    empty = [1] + list(range(max(0, sq - sk)))
    assert np.all(out[..., empty, :] == 0)
    assert np.all(np.abs(out[..., sq - 1, :]) > 0)


def test_explain_names_the_kernel(backend: TestBackend) -> None:
    q = backend.asarray(np.ones((1, 4, 8, 16), np.float32))
    k = backend.asarray(np.ones((1, 2, 8, 16), np.float32))
    kernel = ua.explain(OP, q, k, k, is_causal=True).kernel
    expected = {"torch": "torch._C._nn.scaled_dot_product_attention [",
                "jax": "implementation=",
                "mlx": "scaled_dot_product_attention"}.get(backend.name, "blocked online-softmax")
    if backend.device == "gpu" and backend.name not in ("torch", "jax") and "torch" in sys.modules:
        # GPU arrays without a fused kernel of their own borrow torch's, zero-copy.
        expected = "torch._C._nn.scaled_dot_product_attention ["
        assert f"reached from {backend.name} through DLPack" in kernel
    assert expected in kernel


def test_validation_errors_name_the_op(backend: TestBackend) -> None:
    q = backend.asarray(np.ones((1, 3, 4, 8), np.float32))
    k = backend.asarray(np.ones((1, 2, 4, 8), np.float32))
    with pytest.raises(ua.ShapeError, match="scaled_dot_product_attention.*multiple"):
        ua.scaled_dot_product_attention(q, k, k)
    with pytest.raises(ua.ShapeError, match="mask"):
        ua.scaled_dot_product_attention(q, q, q, mask=backend.asarray(np.ones((3, 5), bool)))
    with pytest.raises(ua.DTypeError, match="scaled_dot_product_attention"):
        ua.scaled_dot_product_attention(q, q, backend.asarray(np.ones((1, 3, 4, 8), np.float16)))


def test_jax_jit_traces_jax_kernels() -> None:
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 5, 4, 8), (2, 7, 2, 8), (2, 7, 2, 8)))
    f = jax.jit(lambda q, k, v: ua.scaled_dot_product_attention(q, k, v, is_causal=True, layout="bshd"))
    out = np.asarray(f(q, k, v))
    assert_close(out, reference(q, k, v, None, True, None, "bshd"), "float32", n_terms=16)


def _grad_problem() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s) for s in ((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 6)))
    mask = rng.random((4, 5, 7)) < 0.8
    w = rng.standard_normal((2, 4, 5, 6))
    return q, k, v, mask, w


def test_torch_gradients_match_finite_differences() -> None:
    torch = pytest.importorskip("torch")
    q, k, v, mask, _ = _grad_problem()
    args = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    m = torch.tensor(mask)
    assert torch.autograd.gradcheck(
        lambda q, k, v: ua.scaled_dot_product_attention(q, k, v, mask=m, is_causal=True), args)


def test_torch_and_jax_gradients_agree() -> None:
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    q, k, v, mask, w = _grad_problem()
    q, k, v, w = (a.astype(np.float32) for a in (q, k, v, w))
    targs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    tout = ua.scaled_dot_product_attention(*targs, mask=torch.tensor(mask), is_causal=True)
    (tout * torch.tensor(w)).sum().backward()

    def loss(q: Any, k: Any, v: Any) -> Any:
        return (ua.scaled_dot_product_attention(q, k, v, mask=jax.numpy.asarray(mask), is_causal=True) * w).sum()

    jgrads = jax.grad(loss, argnums=(0, 1, 2))(q, k, v)
    for tg, jg in zip(targs, jgrads, strict=True):
        g = np.asarray(jg)
        assert np.isfinite(g).all()
        np.testing.assert_allclose(tg.grad.numpy(), g, rtol=1e-4, atol=1e-5)
