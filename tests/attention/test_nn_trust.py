"""ua.nn's rules that hold on every backend beyond the float32/float64 formulas of tests/attention/test_nn.py:
float16 and bfloat16 computed in float32 and rounded once (against a float64 reference, tolerances from
the dtype), gelu and silu at +-inf and NaN, axis=() as a reduction over nothing, weight and bias promoting
with x, eps and the keyword-only arguments refused with typed errors, and ua.explain naming the kernel the
call actually enters."""

from __future__ import annotations

import functools
import importlib
import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import EPS, TestBackend
from tests.attention.test_nn import _ref
from unarray._backends._nn import resolve

OPS = ["softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm", "gelu", "silu"]
HALF = ["float16", "bfloat16"]
SHARED = [HealthCheck.function_scoped_fixture]  # the backend fixture holds no state


def _make(backend: Any, x: np.ndarray, dtype: str) -> Any:
    if dtype != "bfloat16":
        return backend.asarray(x.astype(dtype))
    if backend.name == "cupy":
        pytest.skip("CuPy has no bfloat16 dtype")
    if backend.name in ("numpy", "dask"):
        return backend.asarray(x.astype(ml_dtypes.bfloat16))
    return ua.astype(backend.asarray(x.astype(np.float32)), ua.bfloat16)


def _read(backend: Any, out: Any) -> np.ndarray:
    # bfloat16 tensors have no NumPy view in torch: read every result through float32 or float64.
    wide = ua.float64 if ua.isdtype(out.dtype, ua.float64) else ua.float32
    return np.asarray(backend.to_numpy(ua.astype(out, wide)), dtype=np.float64)


def _dtype_name(out: Any) -> str:
    return next(n for n in ("float16", "bfloat16", "float32", "float64") if ua.isdtype(out.dtype, getattr(ua, n)))


class _Dask:
    """The dask backend on NumPy chunks, in the fixture's shape (make arrays, read them back)."""

    name = "dask"

    def asarray(self, a: Any) -> Any:
        import dask.array as da

        a = np.asarray(a)
        return da.from_array(a, chunks=tuple(max(1, n // 2) for n in a.shape))

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x.compute())


def _half_data(seed: int, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    # Magnitudes whose squares overflow float16 and whose sums stall in bfloat16, an offset that makes the
    # mean large against the spread, and sometimes a constant row (its layer_norm is exactly 0).
    rng = np.random.default_rng(seed)
    scale = rng.choice([1.0, 40.0, 3000.0] if dtype == "float16" else [1.0, 40.0, 3e4])
    x = rng.standard_normal(shape) * scale + rng.choice([0.0, 5.0 * scale])
    if shape[0] > 1 and rng.random() < 0.3:
        x[0] = rng.choice([-1e4, 7.0, 3e3])
    return x


def _kwargs(op: str, axis: Any) -> dict[str, Any]:
    if op in ("gelu", "silu"):
        return {}
    return {"axis": axis} | ({"eps": 1e-5} if op in ("layer_norm", "rms_norm") else {})


def _check_half(backend: Any, op: str, seed: int, shape: tuple[int, ...], dtype: str, last: bool) -> None:
    x = _make(backend, _half_data(seed, shape, dtype), dtype)
    held = _read(backend, x)
    axis = -1 if last else 0
    kw = _kwargs(op, axis)
    out = getattr(ua.nn, op)(x, **kw)
    assert _dtype_name(out) == dtype, f"{op} on {dtype} returned {_dtype_name(out)}"
    extra = {"approximate": False} if op == "gelu" else {}
    ref = _ref(op, held, axis % held.ndim, **{k: v for k, v in kw.items() if k != "axis"}, **extra)
    got = _read(backend, out)
    assert got.shape == ref.shape
    # One rounding to the dtype (half an ulp) and the float32 computation before it, with room for a few
    # roundings inside a library's kernel; a sum accumulated in float16/bfloat16 (or a square that
    # overflows there) is off by far more. Norms carry float32's rounding of x - mean, divided by the spread.
    eps = EPS[dtype]
    bound = 4 * eps * (np.abs(ref) + 1)
    if op in ("layer_norm", "rms_norm"):
        d = held - held.mean(axis=axis, keepdims=True) if op == "layer_norm" else held
        spread = np.sqrt((d * d).mean(axis=axis, keepdims=True) + 1e-5)
        bound = bound + 16 * EPS["float32"] * np.abs(held).max(axis=axis, keepdims=True) / spread
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(got - ref) <= bound) & ~(np.isnan(ref) & np.isnan(got))
    assert not bad.any(), (op, dtype, got[bad][:5], ref[bad][:5])


@pytest.mark.parametrize("op", OPS)
@settings(max_examples=12, deadline=None, suppress_health_check=SHARED)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(3, 7), (2, 300), (4, 64)]),
       dtype=st.sampled_from(HALF), last=st.booleans())
def test_half_precision_is_computed_in_float32(backend: TestBackend, op: str, seed: int, shape: tuple[int, ...],
                                               dtype: str, last: bool) -> None:
    _check_half(backend, op, seed, shape, dtype, last)


@pytest.mark.parametrize("op", OPS)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(HALF), last=st.booleans())
def test_half_precision_on_dask(op: str, seed: int, dtype: str, last: bool) -> None:
    pytest.importorskip("dask.array")
    _check_half(_Dask(), op, seed, (4, 64), dtype, last)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("op", ["gelu", "gelu-tanh", "silu"])
def test_activations_at_infinities_and_nan(backend: TestBackend, op: str, dtype: str) -> None:
    # 40 elements: the vectorised body of a kernel and its scalar tail both meet +-inf and NaN.
    rng = np.random.default_rng(sum(map(ord, op + dtype)))
    x = rng.standard_normal(40) * 3
    x[rng.permutation(40)[:12]] = np.repeat([np.inf, -np.inf, np.nan], 4)
    name, _, form = op.partition("-")
    kw = {"approximate": form == "tanh"} if name == "gelu" else {}
    arr = _make(backend, x, dtype)
    out = getattr(ua.nn, name)(arr, **kw)
    got = _read(backend, out)
    held = _read(backend, arr)
    assert _dtype_name(out) == _dtype_name(arr)
    # The formula in IEEE arithmetic: +inf stays +inf, -inf is -inf * 0 = NaN, NaN stays NaN.
    np.testing.assert_array_equal(got[held == np.inf], np.inf)
    assert np.isnan(got[held == -np.inf]).all() and np.isnan(got[np.isnan(held)]).all()
    finite = np.isfinite(held)
    ref = _ref(name, held[finite], None, **kw)
    # The dtype's error carried by x (1 + erf or 1 + tanh is rounded to the dtype, then multiplied by x); JAX
    # without x64 holds float64 data as float32.
    bound = 4 * EPS[_dtype_name(arr)] * (np.abs(ref) + np.abs(held[finite]))
    assert (np.abs(got[finite] - ref) <= bound).all(), (got[finite], ref)


@settings(max_examples=10, deadline=None, suppress_health_check=SHARED)
@given(seed=st.integers(0, 2**32 - 1), keepdims=st.booleans(), dtype=st.sampled_from(["float32", "float16"]))
def test_axis_empty_tuple_reduces_over_nothing(backend: TestBackend, seed: int, keepdims: bool, dtype: str) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4)) * 10
    arr = _make(backend, x, dtype)
    held = _read(backend, arr)
    tol = {"rtol": 4 * EPS[dtype], "atol": 4 * EPS[dtype]}
    lse = ua.nn.logsumexp(arr, axis=(), keepdims=keepdims)  # each element its own slice: log(exp(x)) = x
    np.testing.assert_allclose(_read(backend, lse), held, **tol)
    w = _make(backend, rng.standard_normal(4) + 2, dtype)
    bias = _make(backend, rng.standard_normal(4), dtype)
    ln = ua.nn.layer_norm(arr, axis=(), weight=w, bias=bias)  # mean = x, variance 0: 0 * weight + bias
    np.testing.assert_allclose(_read(backend, ln), np.broadcast_to(_read(backend, bias), x.shape), **tol)
    rms = ua.nn.rms_norm(arr, axis=(), eps=1e-3)
    np.testing.assert_allclose(_read(backend, rms), held / np.sqrt(held * held + 1e-3), **tol)


PROMOTIONS = [("float32", "float64", "float64"), ("float64", "float32", "float64"),
              ("float16", "float32", "float32"), ("bfloat16", "float32", "float32"), ("float16", "float16", "float16")]


@pytest.mark.parametrize(("x_dtype", "w_dtype", "out_dtype"), PROMOTIONS)
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("axis", [-1, 0])  # torch's fused kernel (trailing axes) and the formula
def test_weight_and_bias_promote_with_x(backend: TestBackend, op: str, axis: int, x_dtype: str, w_dtype: str,
                                        out_dtype: str) -> None:
    if "float64" in (x_dtype, w_dtype) and not backend.has_float64:
        pytest.skip("no float64 arrays on this backend (JAX without x64)")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 6)) * 3 + 1
    pshape = (6,) if axis == -1 else (5, 1)
    arr = _make(backend, x, x_dtype)
    params = {"weight": _make(backend, rng.standard_normal(pshape), w_dtype)}
    if op == "layer_norm":
        params["bias"] = _make(backend, rng.standard_normal(pshape), w_dtype)
    out = getattr(ua.nn, op)(arr, axis=axis, eps=1e-5, **params)
    assert _dtype_name(out) == out_dtype, f"{x_dtype} x with {w_dtype} weight gave {_dtype_name(out)}"
    held = _read(backend, arr)
    ref = _ref(op, held, axis % 2, eps=1e-5) * _read(backend, params["weight"])
    if "bias" in params:
        ref = ref + _read(backend, params["bias"])
    eps = max(EPS[x_dtype], EPS[out_dtype])
    np.testing.assert_allclose(_read(backend, out), ref, rtol=8 * eps, atol=8 * eps * 4)


def test_weight_promotes_by_the_one_rule_and_a_non_floating_one_is_refused(backend: TestBackend) -> None:
    x = _make(backend, np.ones((2, 3)), "float16")
    # bfloat16 with float16 is float32 on every backend (unarray's rule for mixed dtypes), as result_type says.
    out = ua.nn.layer_norm(x, weight=_make(backend, np.full(3, 2.0), "bfloat16"))
    assert ua.result_type(ua.float16, ua.bfloat16) == ua.float32 == out.dtype  # ua.DType first (MLX: its own only)
    np.testing.assert_array_equal(_read(backend, out), np.zeros((2, 3)))
    with pytest.raises(ua.DTypeError, match="bias has dtype int32"):
        ua.nn.layer_norm(x, bias=backend.asarray(np.ones(3, np.int32)))


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
def test_eps_is_checked_once_for_every_backend(backend: TestBackend, op: str) -> None:
    x = backend.asarray(np.arange(6.0).reshape(2, 3))
    for bad in ("1e-5", True, [1e-5], backend.asarray(np.float64(1e-5))):
        with pytest.raises(ua.ArgumentTypeError, match=rf"ua\.nn\.{op} \[{backend.name}\]: eps must be a real number.*"
                                                       "pass a float"):
            getattr(ua.nn, op)(x, eps=bad)
    for bad in (-1e-5, math.nan, math.inf):
        with pytest.raises(ua.ArgumentError, match="eps must be finite and >= 0"):
            getattr(ua.nn, op)(x, eps=bad)
    a, b = (_read(backend, getattr(ua.nn, op)(x, eps=e)) for e in (np.float32(0.5), 0.5))
    np.testing.assert_allclose(a, b, rtol=1e-6)


# A torch-habit call of each function, and the keyword its error must name.
TORCH_HABITS = [
    ("softmax", lambda x: ua.nn.softmax(x, -1), "axis="),
    ("log_softmax", lambda x: ua.nn.log_softmax(x, 0), "axis="),
    ("logsumexp", lambda x: ua.nn.logsumexp(x, 1, True), "keepdims="),
    ("layer_norm", lambda x: ua.nn.layer_norm(x, (3,)), "normalized_shape is torch's"),
    ("rms_norm", lambda x: ua.nn.rms_norm(x, (3,), None, 1e-6), "normalized_shape is torch's"),
    ("gelu", lambda x: ua.nn.gelu(x, "tanh"), "approximate=True"),
    ("silu", lambda x: ua.nn.silu(x, False), "inplace"),
    ("scaled_dot_product_attention", lambda x: ua.nn.scaled_dot_product_attention(x, x, x, None, 0.0, True),
     "mask=... (torch's attn_mask)"),
]


@pytest.mark.parametrize(("op", "call", "keyword"), TORCH_HABITS, ids=[h[0] for h in TORCH_HABITS])
def test_torch_style_positional_arguments_are_typed_errors(backend: TestBackend, op: str, call: Any,
                                                           keyword: str) -> None:
    x = backend.asarray(np.ones((1, 1, 2, 3), np.float32))
    with pytest.raises(ua.ArgumentTypeError, match=rf"ua\.nn\.{op} \[{backend.name}\]: .*keyword-only") as e:
        call(x)
    assert isinstance(e.value, TypeError) and keyword in str(e.value)


@pytest.mark.parametrize("value", ["tanh", "none", 1, None])
def test_gelu_approximate_is_a_bool(backend: TestBackend, value: Any) -> None:
    with pytest.raises(ua.ArgumentTypeError, match="approximate must be a bool.*approximate=True for torch's"):
        ua.nn.gelu(backend.asarray(np.ones(3, np.float32)), approximate=value)


# -- ua.explain names the kernel that runs -----------------------------------------------------------
_OWN = [f"unarray._backends._nn.{f}" for f in ("softmax_formula", "logsumexp_formula", "layer_norm_formula",
                                               "rms_norm_formula", "gelu_formula", "silu_formula")]
CANDIDATES = {
    "torch": ["torch.softmax", "torch.log_softmax", "torch.logsumexp", *(f"torch.nn.functional.{f}" for f in (
        "layer_norm", "rms_norm", "gelu", "silu", "softmax", "log_softmax"))],
    "jax": [*(f"jax.nn.{f}" for f in ("softmax", "log_softmax", "gelu", "silu", "logsumexp")),
            "jax.scipy.special.logsumexp"],
    "tensorflow": [*(f"tensorflow.nn.{f}" for f in ("softmax", "log_softmax", "gelu", "silu")),
                   "tensorflow.math.reduce_logsumexp", "tensorflow.reduce_logsumexp"],
}
# Each op with the arguments that steer the choice: dtype, trailing or other axes, axis=(), a weight of
# another dtype.
CASES = [(op, dtype, kw) for op in ("softmax", "log_softmax", "gelu", "silu") for dtype in ("float32", "float16")
         for kw in ({},)] + [
    ("gelu", "float32", {"approximate": True}),
    ("logsumexp", "float32", {"axis": 1}), ("logsumexp", "float16", {"axis": (0, 1)}),
    ("logsumexp", "float32", {"axis": ()}),
    *((op, dtype, kw) for op in ("layer_norm", "rms_norm") for dtype in ("float32", "float16")
      for kw in ({}, {"axis": 0}, {"axis": ()}, {"weight": "float32"}, {"weight": "same"})),
]


def _recording(monkeypatch: pytest.MonkeyPatch, paths: list[str], entered: list[str]) -> None:
    for path in paths:
        module_name, _, attr = path.rpartition(".")
        try:
            owner = importlib.import_module(module_name)
        except ImportError:
            owner = functools.reduce(getattr, module_name.split(".")[1:], importlib.import_module("tensorflow"))
        original = getattr(owner, attr, None)
        if original is None:
            continue

        def record(*args: Any, _fn: Any = original, **kwargs: Any) -> Any:
            entered.append(_fn)
            return _fn(*args, **kwargs)

        recorder: Any = functools.wraps(original)(record)
        recorder.recorded = original
        monkeypatch.setattr(owner, attr, recorder)


@pytest.mark.parametrize(("op", "dtype", "kw"), CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_explain_names_the_kernel_the_call_enters(backend: TestBackend, monkeypatch: pytest.MonkeyPatch, op: str,
                                                 dtype: str, kw: dict[str, Any]) -> None:
    x = _make(backend, np.random.default_rng(0).standard_normal((2, 3)), dtype)
    if "weight" in kw:
        kw = dict(kw, weight=_make(backend, np.ones(3), dtype if kw["weight"] == "same" else kw["weight"]))
    entered: list[Any] = []
    _recording(monkeypatch, _OWN + CANDIDATES.get(backend.name, []), entered)
    kernel = ua.explain(f"nn.{op}", x, **kw).kernel
    assert entered == [], f"explain ran {entered}"
    getattr(ua.nn, op)(x, **kw)
    named = resolve(kernel.split(" ")[0])  # the object the name imports to (the kernel itself, not a recorder)
    assert entered == [getattr(named, "recorded", named)], f"the call entered {entered}; ua.explain says {kernel!r}"
