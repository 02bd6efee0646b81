"""Attention at its edges, the same on every backend: NaN in is NaN out, zero-size inputs, huge logits
(eagerly and under jax.jit), NumPy scalars for ``is_causal`` and ``scale``, non-finite scales refused,
and ``tf.function`` with dimensions unknown at trace time. Compared with a float64 NumPy reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SDPA = ua.scaled_dot_product_attention


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, causal: bool = False) -> np.ndarray:
    """softmax(q k^T scale) v in float64, layout bhsd; rows with no key are 0; NaN scores give a NaN row."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    g = q.shape[-3] // k.shape[-3] if k.shape[-3] else 1
    k, v = np.repeat(k, g, axis=-3), np.repeat(v, g, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * scale
    sq, sk = s.shape[-2], s.shape[-1]
    if causal:
        s = np.where(np.tril(np.ones((sq, sk), bool), sk - sq), s, -np.inf)
    with np.errstate(all="ignore"):
        m = np.max(s, axis=-1, keepdims=True, initial=-np.inf)
        p = np.exp(s - np.where(m == -np.inf, 0.0, m))
        total = p.sum(-1, keepdims=True)
        return (p / np.where(total == 0, 1.0, total)) @ v


@st.composite
def problems(draw: Any, dv_differs: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    hk, g = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    sq, sk, d = draw(st.integers(1, 5)), draw(st.integers(1, 5)), draw(st.sampled_from([1, 4, 8]))
    dv = draw(st.sampled_from([d, 3])) if dv_differs else d
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in
               ((1, hk * g, sq, d), (1, hk, sk, d), (1, hk, sk, dv)))
    return q, k, v


def _run(backend: TestBackend, q: np.ndarray, k: np.ndarray, v: np.ndarray, **kw: Any) -> np.ndarray:
    return backend.to_numpy(SDPA(*(backend.asarray(a) for a in (q, k, v)), **kw))


def test_nan_in_is_nan_out(backend: TestBackend) -> None:
    @SETTINGS
    @given(problems(), st.sampled_from(["q", "k", "v"]), st.data())
    def check(qkv: tuple[np.ndarray, ...], where: str, data: st.DataObject) -> None:
        q, k, v = (a.copy() for a in qkv)
        target = {"q": q, "k": k, "v": v}[where]
        target.reshape(-1)[data.draw(st.integers(0, target.size - 1))] = np.nan
        # Note: causal only with NaN in q: a masked-out key's NaN may or may not reach the output by kernel.
        causal = where == "q" and data.draw(st.booleans())
        scale = 1.0 / np.sqrt(q.shape[-1])
        got = _run(backend, q, k, v, is_causal=causal)
        want = reference(q, k, v, scale, causal)
        assert causal or np.isnan(want).any()  # (a NaN query row with no key to attend is zeros)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        assert_close(got, want, "float32", n_terms=k.shape[-2] * q.shape[-1], scale=4.0)

    check()


@pytest.mark.parametrize("compiler", ["ua.jit", "torch.compile"])
def test_nan_in_is_nan_out_in_compiled_torch_code(compiler: str) -> None:
    # The eager NaN check cannot run in a compiled graph: on the CPU the graph takes the math kernel, which
    # keeps a NaN query (the CPU flash kernel gave a finite row under ua.jit, its held policy's fused path).
    torch = pytest.importorskip("torch")

    def attend(q: Any, k: Any, v: Any, causal: bool) -> Any:
        return SDPA(q, k, v, is_causal=causal)

    @SETTINGS
    @given(problems(dv_differs=False), st.sampled_from(["q", "k", "v"]), st.data())
    def check(qkv: tuple[np.ndarray, ...], where: str, data: st.DataObject) -> None:
        q, k, v = (a.copy() for a in qkv)
        target = {"q": q, "k": k, "v": v}[where]
        target.reshape(-1)[data.draw(st.integers(0, target.size - 1))] = np.nan
        causal = where == "q" and data.draw(st.booleans())
        torch._dynamo.reset()
        fn = ua.jit(attend, static_argnames="causal") if compiler == "ua.jit" else torch.compile(attend)
        got = fn(*(torch.from_numpy(a) for a in (q, k, v)), causal=causal).numpy()
        want = reference(q, k, v, 1.0 / np.sqrt(q.shape[-1]), causal)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        assert_close(got, want, "float32", n_terms=k.shape[-2] * q.shape[-1], scale=4.0)

    check()


@pytest.mark.parametrize("zero", ["B", "Hq", "Sq", "Sk", "D", "Dv"])
def test_zero_size_inputs_agree(backend: TestBackend, zero: str) -> None:
    dims = {"B": 2, "Hq": 4, "Hk": 2, "Sq": 3, "Sk": 5, "D": 8, "Dv": 6}
    dims[zero] = 0
    b, hq, hk, sq, sk, d, dv = (dims[n] for n in ("B", "Hq", "Hk", "Sq", "Sk", "D", "Dv"))
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in
               ((b, hq, sq, d), (b, hk, sk, d), (b, hk, sk, dv)))
    for layout in ("bhsd", "bshd"):
        args = (q, k, v) if layout == "bhsd" else tuple(np.swapaxes(a, 1, 2) for a in (q, k, v))
        got = _run(backend, *args, layout=layout)
        want = reference(q, k, v, 1.0 / np.sqrt(d) if d else 1.0)
        if layout == "bshd":
            want = np.swapaxes(want, 1, 2)
        assert got.shape == want.shape
        assert_close(got, want, "float32", n_terms=max(sk * d, 1), scale=4.0)


@pytest.mark.parametrize("magnitude", [1.0, 1e6, 1e12, 1e18])
def test_huge_logits_give_the_softmax(backend: TestBackend, magnitude: float) -> None:
    @SETTINGS
    @given(problems())
    def check(qkv: tuple[np.ndarray, ...]) -> None:
        q, k, v = qkv
        q = (q * magnitude).astype(np.float32)
        scale = 1.0 / np.sqrt(q.shape[-1])
        got = _run(backend, q, k, v)
        want = reference(q, k, v, scale)
        assert np.isfinite(got).all()
        # Scores of ~1e18 round to float32 with an error far below their gaps: the softmax is one-hot, exact.
        assert_close(got, want, "float32", n_terms=k.shape[-2] * q.shape[-1],
                     scale=4.0 if magnitude == 1.0 else 1e-30)

    check()


@pytest.mark.parametrize("magnitude", [1.0, 1e12, 1e18])
def test_huge_logits_under_jax_jit(magnitude: float) -> None:
    jax = pytest.importorskip("jax")

    @SETTINGS
    @given(problems())
    def check(qkv: tuple[np.ndarray, ...]) -> None:
        q, k, v = qkv
        q = (q * magnitude).astype(np.float32)
        f = jax.jit(lambda q, k, v: SDPA(q, k, v))
        got = np.asarray(f(*(jax.numpy.asarray(a) for a in (q, k, v))))
        want = reference(q, k, v, 1.0 / np.sqrt(q.shape[-1]))
        assert np.isfinite(got).all()
        assert_close(got, want, "float32", n_terms=k.shape[-2] * q.shape[-1],
                     scale=4.0 if magnitude == 1.0 else 1e-30)

    check()


def test_numpy_scalars_are_accepted_arrays_refused(backend: TestBackend) -> None:
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((1, 2, 4, 8)).astype(np.float32) for _ in range(3))
    args = tuple(backend.asarray(a) for a in (q, k, v))
    for causal in (True, False):
        want = reference(q, k, v, 0.3, causal)
        for is_causal, scale in [(np.bool_(causal), np.float32(0.3)), (causal, np.float64(0.3)),
                                 (np.bool_(causal), 0.3)]:
            got = backend.to_numpy(SDPA(*args, is_causal=is_causal, scale=scale))
            assert_close(got, want, "float32", n_terms=32, scale=4.0)
    np.testing.assert_allclose(backend.to_numpy(SDPA(*args, scale=np.int64(1))), reference(q, k, v, 1.0),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(ua.ArgumentTypeError, match="scale must be a real number.*float\\(x\\)"):
        SDPA(*args, scale=backend.asarray(np.float32(0.3)))
    with pytest.raises(ua.ArgumentTypeError, match="is_causal must be a bool.*bool\\(x\\)"):
        SDPA(*args, is_causal=backend.asarray(np.bool_(True)))
    for bad in (1, "yes", None):
        with pytest.raises(ua.ArgumentTypeError, match="is_causal"):
            SDPA(*args, is_causal=bad)
    for bad in (True, np.bool_(False), "0.5"):
        with pytest.raises(ua.ArgumentTypeError, match="scale"):
            SDPA(*args, scale=bad)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -float("inf"), np.float32("nan")])
def test_non_finite_scale_is_refused(backend: TestBackend, scale: float) -> None:
    q = backend.asarray(np.ones((1, 1, 2, 4), np.float32))
    with pytest.raises(ua.ArgumentError, match="scale must be finite"):
        SDPA(q, q, q, scale=scale)


def test_tf_function_with_unknown_dimensions() -> None:
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((1, 4, 3, 8), (1, 2, 5, 8), (1, 2, 5, 6)))
    tensors = [tf.constant(a) for a in (q, k, v)]
    f = tf.function(lambda q, k, v: SDPA(q, k, v, scale=0.25, is_causal=True))
    assert_close(f(*tensors).numpy(), reference(q, k, v, 0.25, True), "float32", n_terms=40, scale=4.0)
    spec = tf.TensorSpec([None, None, None, None], tf.float32)
    # D unknown: the default scale 1/sqrt(D) cannot be set while tracing; a typed error, not None % None.
    g = tf.function(lambda q, k, v: SDPA(q, k, v), input_signature=[spec] * 3)
    with pytest.raises(ua.ShapeError, match="head dimension D .* unknown while tracing"):
        g(*tensors)
    # Other dimensions unknown: the blocked kernel needs them, and says so with a typed error.
    h = tf.function(lambda q, k, v: SDPA(q, k, v, scale=0.25), input_signature=[spec] * 3)
    with pytest.raises(ua.ShapeError, match="unknown while tracing.*every dimension known"):
        h(*tensors)
    # Dimensions known at trace time are checked there, with the eager typed error.
    e = tf.function(lambda q, k: SDPA(q, k, k))
    with pytest.raises(ua.ShapeError, match="multiple"):
        e(tf.constant(np.ones((1, 3, 2, 4), np.float32)), tf.constant(np.ones((1, 2, 2, 4), np.float32)))
