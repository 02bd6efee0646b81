"""ua.nn's building blocks around attention (softmax, log_softmax, logsumexp, layer_norm, rms_norm,
gelu, silu) on every backend against a float64 reference of the stated formulas
(unarray/_backends/_nn.py), NaN and infinities included, fresh inputs from Hypothesis."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-12, atol=1e-13),
       "float16": dict(rtol=4e-3, atol=4e-3)}
_erf = np.vectorize(math.erf)


def _ref(op: str, x: np.ndarray, axis: Any, **kw: Any) -> np.ndarray:
    with np.errstate(all="ignore"):
        if op == "softmax":
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
        if op == "log_softmax":
            s = x - x.max(axis=axis, keepdims=True)
            return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))
        if op == "logsumexp":
            m = x.max(axis=axis, keepdims=True)
            m = np.where(np.isfinite(m), m, 0.0)
            return (m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))).squeeze(axis=axis)
        if op == "layer_norm":
            d = x - x.mean(axis=axis, keepdims=True)
            return d / np.sqrt((d * d).mean(axis=axis, keepdims=True) + kw["eps"])
        if op == "rms_norm":
            return x / np.sqrt((x * x).mean(axis=axis, keepdims=True) + kw["eps"])
        if op == "gelu":
            if kw["approximate"]:
                return x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))) / 2
            return x * (1 + _erf(x / math.sqrt(2))) / 2
        if op == "silu":
            return x / (1 + np.exp(-x))
    raise AssertionError(op)


def _data(seed: int, shape: tuple[int, ...], specials: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * rng.choice([0.5, 3.0, 40.0])
    if specials and x.size:
        for value in (-np.inf, np.inf, np.nan):
            if rng.random() < 0.4:
                x.flat[rng.integers(x.size)] = value
        if x.ndim > 1 and rng.random() < 0.3:  # a whole slice masked out, as attention masks do
            x[..., 0, :] = -np.inf
    return x


def _put(backend: TestBackend, x: np.ndarray) -> tuple[Any, np.ndarray, dict[str, float]]:
    # The backend's array, the values it holds (JAX without x64 holds float64 data as float32) and the
    # tolerance of its dtype.
    arr = backend.asarray(x)
    held = backend.to_numpy(arr)
    return arr, held.astype(np.float64), TOL[str(held.dtype)]


def _check(backend: TestBackend, op: str, x64: np.ndarray, dtype: str, axis: Any, **kw: Any) -> None:
    x, held, tol = _put(backend, x64.astype(dtype))
    out = getattr(ua.nn, op)(x, **({"axis": axis} if axis is not None else {}), **kw)
    assert ua.backend_of(out) == backend.name
    ref = _ref(op, held, -1 if axis is None else axis, **kw)
    got = backend.to_numpy(out).astype(np.float64)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, equal_nan=True, **tol)


SHAPES = st.sampled_from([(7,), (3, 5), (2, 4, 6), (1, 9)])
FLOATS = st.sampled_from(["float32", "float64"])
# The backend fixture holds no state, so examples may share it.
SHARED = [HealthCheck.function_scoped_fixture]


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@settings(max_examples=30, deadline=None, suppress_health_check=SHARED)
@given(seed=st.integers(0, 2**32 - 1), shape=SHAPES, specials=st.booleans(), dtype=FLOATS)
def test_softmax_family_matches_the_formula(backend: TestBackend, op: str, seed: int, shape: tuple[int, ...],
                                            specials: bool, dtype: str) -> None:
    x = _data(seed, shape, specials)
    _check(backend, op, x, dtype, axis=-1)
    if x.ndim > 1:
        _check(backend, op, x, dtype, axis=0)


@settings(max_examples=30, deadline=None, suppress_health_check=SHARED)
@given(seed=st.integers(0, 2**32 - 1), shape=SHAPES, specials=st.booleans(), dtype=FLOATS,
       keepdims=st.booleans())
def test_logsumexp_matches_the_formula(backend: TestBackend, seed: int, shape: tuple[int, ...], specials: bool,
                                       dtype: str, keepdims: bool) -> None:
    x = _data(seed, shape, specials)
    axes = tuple(range(x.ndim))[-2:]
    arr, held, tol = _put(backend, x.astype(dtype))
    out = ua.nn.logsumexp(arr, axis=axes, keepdims=keepdims)
    ref = _ref("logsumexp", held, axes)
    if keepdims:
        ref = np.expand_dims(ref, axes)
    np.testing.assert_allclose(backend.to_numpy(out).astype(np.float64), ref, equal_nan=True, **tol)


def test_logsumexp_edges(backend: TestBackend) -> None:
    x = backend.asarray(np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0], [1000.0, 1000.0]]))
    got = backend.to_numpy(ua.nn.logsumexp(x, axis=1))
    np.testing.assert_allclose(got, [-np.inf, np.inf, np.nan, 1000 + math.log(2)], equal_nan=True)
    empty = backend.to_numpy(ua.nn.logsumexp(backend.asarray(np.zeros((3, 0))), axis=1))
    np.testing.assert_array_equal(empty, [-np.inf] * 3)
    np.testing.assert_allclose(float(backend.to_numpy(ua.nn.logsumexp(x[3:]))), 1000 + math.log(2))


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
@settings(max_examples=30, deadline=None, suppress_health_check=SHARED)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(3, 8), (2, 3, 5)]), trailing=st.booleans(),
       affine=st.booleans(), dtype=FLOATS)
def test_norms_match_the_formula(backend: TestBackend, op: str, seed: int, shape: tuple[int, ...], trailing: bool,
                                 affine: bool, dtype: str) -> None:
    x = _data(seed, shape, specials=False)
    axis: Any = (-2, -1) if trailing else 0
    eps = 1e-5
    rng = np.random.default_rng(seed + 1)
    norm_shape = tuple(shape[-2:]) if trailing else (shape[0],) + (1,) * (len(shape) - 1)
    w = rng.standard_normal(norm_shape) if affine else None
    bias = rng.standard_normal(norm_shape) if affine and op == "layer_norm" else None
    kw: dict[str, Any] = {"eps": eps}
    arr, held, tol = _put(backend, x.astype(dtype))
    ax = tuple(a % len(shape) for a in ((-2, -1) if trailing else (0,)))
    ref = _ref(op, held, ax, eps=eps)
    if w is not None:
        kw["weight"], w_held, _ = _put(backend, w.astype(dtype))
        ref = ref * w_held
    if bias is not None:
        kw["bias"], b_held, _ = _put(backend, bias.astype(dtype))
        ref = ref + b_held
    out = getattr(ua.nn, op)(arr, axis=axis, **kw)
    # The dtype's error, carried through the normalisation: (x - mean) or x rounds to about eps*|x|,
    # then divides by the slice's scale sqrt(var + eps) (sqrt(mean(x**2) + eps) for rms_norm), which
    # for a slice of nearly equal values is far smaller than |x| (a slice of 2 along axis 0, say).
    d = held - held.mean(axis=ax, keepdims=True) if op == "layer_norm" else held
    scale = np.sqrt((d * d).mean(axis=ax, keepdims=True) + eps)
    rounding = 16 * np.finfo(backend.to_numpy(arr).dtype).eps  # the dtype the backend holds
    carried = rounding * np.abs(held).max(axis=ax, keepdims=True) / scale * (1 if w is None else np.abs(w_held))
    got = backend.to_numpy(out).astype(np.float64)
    assert got.shape == ref.shape
    bound = tol["atol"] + tol["rtol"] * np.abs(ref) + carried
    assert np.all(np.abs(got - ref) <= bound), (np.abs(got - ref) - bound).max()


def test_rms_norm_default_eps_is_the_dtypes(backend: TestBackend) -> None:
    x = np.zeros((2, 3), np.float32)
    out = backend.to_numpy(ua.nn.rms_norm(backend.asarray(x)))
    np.testing.assert_array_equal(out, np.zeros((2, 3), np.float32))  # 0 / sqrt(0 + eps), not NaN


@pytest.mark.parametrize("op", ["gelu", "silu"])
@settings(max_examples=25, deadline=None, suppress_health_check=SHARED)
@given(seed=st.integers(0, 2**32 - 1), approximate=st.booleans(), dtype=FLOATS)
def test_activations_match_the_formula(backend: TestBackend, op: str, seed: int, approximate: bool,
                                       dtype: str) -> None:
    x = _data(seed, (4, 6), specials=False)
    kw = {"approximate": approximate} if op == "gelu" else {}
    _check(backend, op, x, dtype, axis=None, **kw)


def test_non_float_input_is_a_typed_refusal(backend: TestBackend) -> None:
    x = backend.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    for op in ("softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm", "gelu", "silu"):
        with pytest.raises(ua.DTypeError, match=f"{op} takes a real floating-point array"):
            getattr(ua.nn, op)(x)
    with pytest.raises(ua.AxisError):
        ua.nn.softmax(backend.asarray(np.ones((2, 3))), axis=2)


def test_inputs_are_not_mutated(backend: TestBackend) -> None:
    x = backend.asarray(_data(3, (3, 5), specials=True))
    before = backend.to_numpy(x).copy()
    for op in ("softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm", "gelu", "silu"):
        getattr(ua.nn, op)(x)
    np.testing.assert_array_equal(backend.to_numpy(x), before)
