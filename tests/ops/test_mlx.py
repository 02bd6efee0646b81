"""MLX's own facts: handoff with NumPy, torch and JAX (MLX copies what it imports and exports read-only),
attention through mlx.core.fast, float64 refused on MLX's GPU (a fake device), data-dependent shapes
refused inside mx.compile, and ua.at on MLX's value arrays. The equivalence properties run on MLX
through the backend fixture (tests/ops/test_one_answer.py), the conformance suite through
``python -m unarray check --backends mlx``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import assert_close
from unarray.conformance import deviations

mx = pytest.importorskip("mlx.core")


@pytest.fixture(autouse=True)
def _fresh(fresh_handoff: None) -> None:
    return None


def _data(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_numpy_to_mlx_is_one_counted_copy_that_keeps_the_dtype(dtype: str) -> None:
    n = _data((3, 4), dtype) if dtype != "bool" else _data((3, 4)) > 0
    m = ua.to(n, "mlx")
    assert isinstance(m, mx.array)
    np.testing.assert_array_equal(np.array(m), n)
    assert np.array(m).dtype == n.dtype  # (mx.array alone would make float64 float32)
    assert ua.stats()["copies"] == 1
    n[0, 0] = not n[0, 0] if dtype == "bool" else n[0, 0] + 1  # a copy: the MLX array does not see the write
    assert np.array(m)[0, 0] != n[0, 0]


def test_import_into_mlx_is_refused_under_copy_false() -> None:
    with pytest.raises(ua.HandoffError, match="copy"):
        ua.to(_data((4,)), "mlx", copy=False)


def test_mlx_to_numpy_is_a_zero_copy_read_only_view() -> None:
    m = mx.array(_data((5, 3)))
    n = ua.to(m, "numpy")
    assert not n.flags.writeable
    assert n.__array_interface__["data"][0] == ua.to(m, "numpy").__array_interface__["data"][0]
    assert ua.stats()["copies"] == 0
    np.testing.assert_array_equal(n, np.array(m))


@pytest.mark.parametrize("target", ["torch", "jax"])
def test_mlx_hands_over_to_torch_and_jax_without_a_writable_alias(target: str) -> None:
    lib = pytest.importorskip(target)
    m = mx.array(_data((4, 4)))
    before = np.array(m)
    out = ua.to(m, target)
    assert ua.backend_of(out) == target
    np.testing.assert_array_equal(np.asarray(out), before)
    if target == "torch":
        assert ua.stats()["copies"] == 1  # torch has no read-only tensors: the MLX buffer is never aliased writable
        out[0, 0] = 100.0
        np.testing.assert_array_equal(np.array(m), before)
    assert lib is not None


@pytest.mark.parametrize("source", ["torch", "jax"])
def test_torch_and_jax_arrays_join_an_mlx_call(source: str) -> None:
    pytest.importorskip(source)
    x = _data((3, 3))
    other = ua.asarray(x, backend=source)
    out = ua.add(mx.array(x), other)
    assert isinstance(out, mx.array)
    assert_close(np.array(out), x.astype(np.float64) * 2, "float32")


def test_complex128_is_refused_on_import() -> None:
    with pytest.raises(ua.DTypeError, match="complex128"):
        ua.asarray(np.ones(3, np.complex128), backend="mlx")


@pytest.mark.parametrize("device", [ua.Device("cuda"), ua.Device("mps")])
def test_float64_is_refused_on_mlx_gpu(device: ua.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake device, listed as MLX's: the refusal comes before MLX is asked to place anything there.
    from unarray import _backends

    monkeypatch.setattr(type(_backends.get("mlx")), "devices", lambda self: [ua.Device("cpu"), device])
    with pytest.raises(ua.DTypeError, match="float64"):
        ua.asarray(np.ones(3), backend="mlx", device=device)
    with pytest.raises(ua.DTypeError, match="float64"):
        ua.zeros(3, dtype=ua.float64, backend="mlx", device=device)
    b = ua.array_namespace(mx.array([1.0])).__array_namespace_info__()
    assert "float64" in b.dtypes(device="cpu")
    assert "float64" not in _backends.get("mlx").dtype_names(device)


def test_attention_runs_mlx_fast_kernel_and_matches_the_reference() -> None:
    q, k, v = _data((2, 4, 6, 8), seed=1), _data((2, 2, 6, 8), seed=2), _data((2, 2, 6, 8), seed=3)
    args = [mx.array(t) for t in (q, k, v)]
    assert "mlx.core.fast.scaled_dot_product_attention" in ua.explain("scaled_dot_product_attention", *args,
                                                                      is_causal=True).kernel
    out = ua.scaled_dot_product_attention(*args, is_causal=True)
    want = ua.scaled_dot_product_attention(*(t.astype(np.float64) for t in (q, k, v)), is_causal=True)
    assert_close(np.array(out), want, "float32", n_terms=8)
    masked = ua.explain("scaled_dot_product_attention", *args, mask=mx.array(np.tril(np.ones((6, 6), bool))))
    assert "fast" not in masked.kernel  # a mask goes the blocked path (an empty row gives zeros there)


def test_unique_inside_mx_compile_is_a_typed_refusal() -> None:
    x = mx.array([3, 1, 3, 2])
    assert np.array(ua.unique_values(x)).tolist() == [1, 2, 3]
    with pytest.raises(ua.UnsupportedError, match="mx.compile"):
        mx.compile(lambda a: ua.unique_values(a))(x)


def test_at_returns_a_new_array_and_refuses_in_place() -> None:
    x = mx.array(np.zeros(5, np.float32))
    out = ua.at(x, mx.array([1, 1, 3])).add(1.0)
    np.testing.assert_array_equal(np.array(out), [0, 2, 0, 1, 0])
    np.testing.assert_array_equal(np.array(x), np.zeros(5))
    with pytest.raises(ua.ArgumentError, match="in place"):
        ua.at(x, 0).set(1.0, copy=False)


def test_elementwise_runs_inside_mx_compile() -> None:
    x = mx.array(_data((4, 4)))
    f = mx.compile(lambda a: ua.sum(ua.exp(a) * 2, axis=0))
    assert_close(np.array(f(x)), np.exp(np.array(x).astype(np.float64)).sum(0) * 2, "float32", n_terms=4)


# -- ua.jit through mx.compile -------------------------------------------------------------------------------------

def _block(x: Any, w: Any, s: float) -> Any:
    # a projection, reductions and one element-wise step with a Python scalar (element-wise chains are what MLX
    # builds kernels for on the CPU, with a compiler: seconds each, so the suite draws one)
    return ua.add(ua.multiply(ua.matmul(x, w), s), ua.max(ua.abs(x), axis=-1, keepdims=True))


def _ref_block(x: np.ndarray, w: np.ndarray, s: float) -> np.ndarray:
    return (x @ w) * s + np.abs(x).max(-1, keepdims=True)


_JITTED_BLOCK = ua.jit(_block)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(2, 4), d=st.sampled_from([3, 8]))
def test_a_compiled_call_equals_eager_and_the_float64_reference(seed: int, rows: int, d: int) -> None:
    s = 0.5  # one value: a Python number is compiled into the kernel
    rng = np.random.default_rng(seed)
    x = (rng.uniform(0.5, 2.0, (rows, d)) * rng.choice([-1.0, 1.0], (rows, d))).astype(np.float32)
    w = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    got = _JITTED_BLOCK(mx.array(x), mx.array(w), s)
    assert isinstance(got, mx.array)
    ref = _ref_block(x.astype(np.float64), w.astype(np.float64), s)
    assert_close(np.array(got), ref, "float32", n_terms=d, scale=float(np.abs(ref).max()))
    np.testing.assert_allclose(np.array(got), np.array(_block(mx.array(x), mx.array(w), s)), rtol=1e-5, atol=1e-6)
    e = ua.explain(_JITTED_BLOCK, mx.array(x), mx.array(w), s)
    assert (e.compiler, e.kernel, e.cache) == ("mlx", "mx.compile()", "hit")


def test_a_new_shape_traces_anew_and_a_seen_one_does_not() -> None:
    traces: list[tuple[int, ...]] = []

    @ua.jit
    def f(x: Any) -> Any:
        traces.append(tuple(x.shape))  # runs while mx.compile traces only
        return ua.multiply(ua.exp(x), 2.0)

    for shape in ((3,), (3,), (2, 4), (3,), (2, 4)):
        host = _data(shape, seed=len(traces))
        assert_close(np.array(f(mx.array(host))), 2 * np.exp(host.astype(np.float64)), "float32")
    assert traces == [(3,), (2, 4)]
    assert f.cache_info()["entries"] == 1  # one ua.jit entry: mx.compile keys its traces on shapes itself


def test_static_arguments_and_python_values_are_compiled_in_by_type_and_value() -> None:
    traces: list[Any] = []

    def branchy(x: Any, n: Any, axis: int) -> Any:
        traces.append((type(n), n, axis))
        if isinstance(n, bool):  # 1, True and 1.0 are equal with one hash, and three traces here
            return ua.max(x, axis=axis)
        return ua.min(x, axis=axis) if isinstance(n, float) else ua.sum(x[:, :n], axis=axis)

    x = mx.array(_data((2, 3), seed=4))
    calls = ((1, 0), (True, 0), (1.0, 0), (True, 0), (1, 1), (1, 0), (2, 0))
    want = [np.array(branchy(x, n, axis)) for n, axis in calls]
    traces.clear()
    f = ua.jit(branchy, static_argnames="axis")  # n is not static: mx.compile alone keys 1 and True as one
    for (n, axis), w in zip(calls, want, strict=True):
        np.testing.assert_allclose(np.array(f(x, n, axis=axis)), w, rtol=1e-6, err_msg=repr((n, axis)))
    assert traces == [(int, 1, 0), (bool, True, 0), (float, 1.0, 0), (int, 1, 1), (int, 2, 0)]
    assert f.cache_info()["entries"] == 2 and ua.explain(f, x, 1, axis=1).static == (("axis", 1),)


def test_a_rebound_closure_array_is_seen_as_eagerly() -> None:
    bias = mx.array(np.full(3, 0.5, np.float32))

    def f(x: Any) -> Any:
        return ua.add(x, bias)  # mx.compile alone bakes the array read while tracing

    g = ua.jit(f)
    x = mx.array(_data((3,), seed=5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ua.JitStateWarning)  # MLX arrays are values: keyed by identity, silently
        for b in (0.5, 2.0, -3.0):
            bias = mx.array(np.full(3, b, np.float32))
            np.testing.assert_allclose(np.array(g(x)), np.array(x) + b, rtol=1e-6)
    assert g.cache_info()["misses"] == 3


def test_arguments_mx_compile_cannot_take_run_eagerly_with_a_warning() -> None:
    x = mx.array(_data((4,), seed=6))
    f = ua.jit(lambda a, b: ua.add(a, ua.asarray(b, backend="mlx")))
    other = _data((4,), seed=7)  # a NumPy array: compiled in, a change made to it would not be seen
    with pytest.warns(ua.JitFallbackWarning, match=r"mx\.compile\(\) could not compile .*numpy\.ndarray"):
        got = f(x, other)
    np.testing.assert_allclose(np.array(got), np.array(x) + other, rtol=1e-6)
    g = ua.jit(lambda a, s: ua.multiply(a, max(s["k"])))
    with pytest.warns(ua.JitFallbackWarning, match="not hashable"):
        np.testing.assert_allclose(np.array(g(x, {"k": {2.0}})), np.array(x) * 2.0, rtol=1e-6)
    h = ua.jit(lambda a, s: ua.multiply(ua.sum(a), s["k"][0]))  # dicts and lists are structure: values compile in
    with warnings.catch_warnings():
        warnings.simplefilter("error", ua.JitFallbackWarning)
        np.testing.assert_allclose(np.array(h(x, {"k": [3.0]})), np.array(x).sum() * 3.0, rtol=1e-5)


def test_data_dependent_shapes_fall_back_or_raise_under_fullgraph() -> None:
    x = mx.array([3, 1, 3, 2])
    f = ua.jit(lambda a: ua.unique_values(a))
    with pytest.warns(ua.JitFallbackWarning, match="UnsupportedError"):
        assert np.array(f(x)).tolist() == [1, 2, 3]
    with pytest.raises(ua.UnsupportedError, match="mx.compile"):
        ua.jit(lambda a: ua.unique_values(a), fullgraph=True)(x)


def test_shapeless_is_refused_because_a_shapeless_trace_keeps_a_read_shape() -> None:
    # The deviation row's reason, held: mx.compile(shapeless=True) gives a wrong answer for a new shape.
    plain = mx.compile(lambda a: mx.sum(a) + a.shape[0], shapeless=True)
    plain(mx.zeros((3,)))
    assert float(plain(mx.zeros((5,)))) == 3.0  # eager: 5.0
    from unarray.conformance.deviations import lookup

    assert lookup("jit", "mlx", "cpu", "float32") is not None
    with pytest.raises(ua.ArgumentError, match=r"refused the option shapeless=True .*wrong answer"):
        ua.jit(lambda a: ua.add(ua.sum(a), a.shape[0]), shapeless=True)(mx.zeros((3,)))
    f = ua.jit(lambda a: ua.add(ua.sum(a), a.shape[0]), mlx={"shapeless": False})
    assert float(f(mx.zeros((3,)))) == 3.0 and float(f(mx.zeros((5,)))) == 5.0
    assert ua.explain(f, mx.zeros((5,))).kernel == "mx.compile(shapeless=False)"


def test_numpy_inputs_through_a_named_mx_compile_come_back_as_numpy() -> None:
    f = ua.jit(lambda a: ua.max(a, axis=-1), compiler="mlx")
    host = _data((2, 5), seed=8)
    e = ua.explain(f, host)
    assert (e.compiler, e.cache) == ("mlx", "miss") and "numpy -> mlx" in e.handoffs[0]
    got = f(host)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, host.max(-1))
    assert ua.explain(f, host).cache == "hit"


def test_a_jitted_function_inside_a_users_mx_compile() -> None:
    f = ua.jit(lambda a: ua.max(a, axis=0))
    host = _data((3, 4), seed=9)
    outer = mx.compile(lambda a: ua.sum(f(a)))  # mx.compile nests: the inner entry is traced into the outer graph
    assert_close(np.array(outer(mx.array(host))), host.astype(np.float64).max(0).sum(), "float32", n_terms=4)
    np.testing.assert_array_equal(np.array(f(mx.array(host))), host.max(0))


@pytest.mark.parametrize("name", ["bool", "int8", "int64", "uint32", "float32", "float64", "complex64"])
def test_dtypes_compare_with_unarrays_on_the_left(name: str) -> None:
    x = ua.ones(2, dtype=getattr(ua, name), backend="mlx")
    assert getattr(ua, name) == x.dtype and ua.isdtype(x.dtype, getattr(ua, name))
    assert ua.float16 != x.dtype
    # The listed deviation: MLX's Dtype answers False to any other object, so the reflected form is never asked.
    assert not (x.dtype == getattr(ua, name))
    assert any(d.op == "dtype ==" and d.backend == "mlx" for d in deviations.DEVIATIONS)


@pytest.mark.parametrize("op", ["set", "add", "subtract", "multiply", "min", "max"])
def test_at_takes_an_mlx_boolean_mask(op: str) -> None:
    # MLX's boolean dtype is not named "bool": its own full-shape mask must take the where path too.
    x = np.array([[1.0, -2.0], [3.5, 4.0]], np.float32)
    m = np.array([[True, False], [False, True]])
    v = np.float32(0.5)
    updated = {"set": np.full_like(x, v), "add": x + v, "subtract": x - v, "multiply": x * v,
               "min": np.minimum(x, v), "max": np.maximum(x, v)}[op]
    got = getattr(ua.at(mx.array(x), mx.array(m)), op)(0.5)
    np.testing.assert_array_equal(np.array(got), np.where(m, updated, x))


_EMPTY_REDUCTIONS = r'''
import numpy as np, mlx.core as mx, unarray as ua
for rep in range(20):
    for shape, axis in [((0, 3), 0), ((0, 3), 1), ((0, 3, 2), 0), ((0, 3, 2), (0, 2)), ((3, 0), -1), ((0, 3), None),
                        ((2, 0, 4), 1)]:
        cases = []  # results are read back together: MLX evaluates lazily, and the hang showed that way
        for dtype in ["float32", "int32", "bool", "complex64"]:
            n = np.ones(shape, dtype=dtype)
            x = mx.array(n)
            cases += [(ua.sum(x, axis=axis), np.sum(n, axis=axis)), (ua.prod(x, axis=axis), np.prod(n, axis=axis)),
                      (ua.count_nonzero(x, axis=axis), np.count_nonzero(n, axis=axis)),
                      (ua.linalg.trace(x) if x.ndim == 2 else ua.sum(x), np.trace(n) if n.ndim == 2 else np.sum(n)),
                      (ua.any(x, axis=axis), np.any(n, axis=axis)), (ua.all(x, axis=axis), np.all(n, axis=axis))]
            if dtype != "complex64" and 0 not in [shape[i] for i in np.atleast_1d(axis if axis is not None else
                                                                                   range(len(shape)))]:
                cases += [(ua.max(x, axis=axis), np.max(n, axis=axis)), (ua.min(x, axis=axis), np.min(n, axis=axis))]
            if dtype in ("float32", "complex64"):
                with np.errstate(all="ignore"):
                    cases += [(ua.mean(x, axis=axis), np.mean(n, axis=axis)),
                              (ua.var(x, axis=axis), np.var(n, axis=axis)),
                              (ua.std(x, axis=axis), np.std(n, axis=axis)),
                              (ua.linalg.vector_norm(x, axis=axis), np.linalg.vector_norm(n, axis=axis))]
        for got, want in cases:
            got = np.array(got)
            assert got.shape == np.shape(want), (shape, axis, got.shape, np.shape(want))
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} {axis}")
print("done")
'''


def test_reductions_over_zero_elements_return_the_identity_and_never_hang() -> None:
    # MLX's CPU reduce kernel can spin forever on a zero-size input (about one process in three); a
    # subprocess with a deadline turns a hang into a failure, and 20 rounds make a miss unlikely.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _EMPTY_REDUCTIONS], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]
