"""No silently wrong answer: every backend gives the standard's answer or the same typed refusal.

Hypothesis draws shapes (empty ones included), axes (negative, out of range, repeated, ``True``,
on 0-d arrays), corrections, dtypes and NaN placement; each backend is compared with a float64
NumPy reference computed here, or must raise the same :class:`ua.UnarrayError` subclass. Also:
NumPy masked arrays are refused and ``np.matrix`` gives standard shapes on every op and mix; empty
reductions inside ``tf.function``; an eager constant joining a JAX or TensorFlow trace; typed errors
inside ``tf.function``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
REDUCTIONS = ["sum", "prod", "mean", "var", "std", "min", "max", "count_nonzero", "any", "all"]
ONE_AXIS = ["argmax", "argmin", "sort", "argsort", "cumulative_sum", "cumulative_prod"]
NO_IDENTITY = {"min", "max", "argmin", "argmax"}


def _dtype(backend: TestBackend, draw: Any, ints: bool) -> str:
    names = ["float32", "float64"] if backend.has_float64 else ["float32"]
    return draw(st.sampled_from(names + (["int32", "int8"] if ints else [])))


@st.composite
def arrays(draw: Any, backend: TestBackend, min_dims: int = 0, nan: bool = True, ints: bool = False) -> np.ndarray:
    """Arrays of 0-4 dims (sides 0-4), never all zero; floats get NaN and inf at drawn places."""
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=min_dims, max_size=4)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = _dtype(backend, draw, ints)
    if dtype.startswith("int"):
        return rng.integers(-3, 4, shape).astype(dtype)
    x = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    if x.size and nan:
        for value in draw(st.lists(st.sampled_from([math.nan, math.inf, -math.inf]), max_size=2)):
            x.reshape(-1)[draw(st.integers(0, x.size - 1))] = value
    return x.astype(dtype)


EXACT_ON_INTS = {"sum", "min", "max", "count_nonzero", "any", "all", "argmax", "argmin", "sort", "argsort",
                 "cumulative_sum"}


@st.composite
def axis_forms(draw: Any, ndim: int, tuples: bool = True) -> Any:
    """Any axis a caller might pass: in range, negative, out of range, repeated, in a tuple or a list."""
    one = st.integers(-ndim - 2, ndim + 1)
    forms = [st.none(), one]
    if tuples:
        forms.append(st.lists(one, max_size=3).map(tuple))
    return draw(st.one_of(*forms))


def _normalized(axis: Any, ndim: int) -> Any:
    """The axis as the standard reads it, or None where it must be refused (AxisError)."""
    axes = (axis,) if isinstance(axis, int) else axis
    if any(not -ndim <= a < ndim for a in axes):
        return None
    out = tuple(a % ndim for a in axes)
    return out if len(set(out)) == len(out) else None


def _reference(op: str, x: np.ndarray, axes: tuple[int, ...], correction: float = 0.0) -> np.ndarray:
    """float64 reference with the standard's special cases (NaN propagates; var of N - c <= 0 is NaN)."""
    x = x.astype(np.float64)
    n = math.prod(x.shape[a] for a in axes)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if op == "sum":
            return np.sum(x, axis=axes)
        if op == "prod":
            return np.prod(x, axis=axes)
        if op == "count_nonzero":
            return np.count_nonzero(x, axis=axes)
        if op in ("any", "all"):
            return getattr(np, op)(x, axis=axes)
        if op in ("min", "max"):
            return (np.min if op == "min" else np.max)(x, axis=axes)
        mean = np.sum(x, axis=axes, keepdims=True) / n if n else np.full(
            [1 if i in axes else s for i, s in enumerate(x.shape)], np.nan)
        if op == "mean":
            return np.squeeze(mean, axis=axes)
        ss = np.sum((x - mean) ** 2, axis=axes)
        var = ss / (n - correction) if n - correction > 0 else np.full(ss.shape, np.nan)
        return var if op == "var" else np.sqrt(var)


def _call(op: str, x: Any, axis: Any, **kw: Any) -> Any:
    return getattr(ua, op)(x, axis=axis, **kw)


@pytest.mark.parametrize("op", REDUCTIONS)
def test_reductions_take_only_valid_axes(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(arrays(backend, ints=op in EXACT_ON_INTS))
        axis = data.draw(axis_forms(x.ndim))
        axes = tuple(range(x.ndim)) if axis is None else _normalized(axis, x.ndim)
        xb = backend.asarray(x)
        if axes is None:
            with pytest.raises(ua.AxisError, match=f"ua.{op}.*axis"):
                _call(op, xb, axis)
            return
        if op in NO_IDENTITY and 0 in [x.shape[a] for a in axes]:
            with pytest.raises(ua.EmptyReductionError):
                _call(op, xb, axis)
            return
        got = backend.to_numpy(_call(op, xb, axis))
        n = max(1, math.prod(x.shape[a] for a in axes))
        assert_close(got, _reference(op, x, axes), str(x.dtype), n_terms=n, scale=2.0 ** min(n, 60))

    check()


@pytest.mark.parametrize("op", ONE_AXIS)
def test_one_axis_functions_take_only_valid_axes(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(arrays(backend, nan=op not in ("sort", "argsort"), ints=op in EXACT_ON_INTS))
        axis = data.draw(axis_forms(x.ndim, tuples=False).filter(lambda a: a is not None or op in NO_IDENTITY))
        xb = backend.asarray(x)
        if axis is not None and not -x.ndim <= axis < x.ndim:
            with pytest.raises(ua.AxisError, match=f"ua.{op}.*out of range"):
                _call(op, xb, axis)
            return
        size = x.size if axis is None else x.shape[axis]
        if op in NO_IDENTITY and size == 0:
            with pytest.raises(ua.EmptyReductionError):
                _call(op, xb, axis)
            return
        got = backend.to_numpy(_call(op, xb, axis))
        ref = x.astype(np.float64)
        with np.errstate(all="ignore"):
            expected = {"argmax": lambda: np.argmax(ref, axis=axis), "argmin": lambda: np.argmin(ref, axis=axis),
                        "sort": lambda: np.sort(ref, axis=axis), "argsort": lambda: np.argsort(ref, axis=axis,
                                                                                             stable=True),
                        "cumulative_sum": lambda: np.cumsum(ref, axis=axis),
                        "cumulative_prod": lambda: np.cumprod(ref, axis=axis)}[op]()
        if op.startswith("arg"):
            np.testing.assert_array_equal(got, expected)
        else:
            assert_close(got, expected, str(x.dtype), n_terms=max(1, size), scale=2.0 ** min(size, 60))

    check()


@pytest.mark.parametrize("op", REDUCTIONS + ONE_AXIS)
@pytest.mark.parametrize("axis", [True, False, (True,), 1.0, "0"])
def test_axis_that_is_not_an_int_is_refused(backend: TestBackend, op: str, axis: Any) -> None:
    x = backend.asarray(np.arange(1.0, 7.0).reshape(2, 3))
    if isinstance(axis, tuple) and op in ONE_AXIS:
        axis = (0,)
    with pytest.raises(ua.ArgumentTypeError, match=f"ua.{op}.*axis must be"):
        _call(op, x, axis)


@pytest.mark.parametrize("op", REDUCTIONS + ONE_AXIS)
def test_zero_d_arrays_have_no_axis(backend: TestBackend, op: str) -> None:
    x = backend.asarray(np.float32(2.5))
    for axis in (0, -1):
        with pytest.raises(ua.AxisError, match="0 dimensions"):
            _call(op, x, axis)
    if op in ONE_AXIS and not op.startswith("arg"):
        with pytest.raises(ua.UnarrayError):  # sort's default axis -1 and cumulative's None need a 1-D array
            getattr(ua, op)(x)
        return
    got = backend.to_numpy(_call(op, x, None)) if op != "argsort" else None
    if got is not None:
        assert got.shape == ()


@pytest.mark.parametrize("op", ["var", "std"])
def test_correction_at_least_n_is_nan(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(st.data())
    def check(data: st.DataObject) -> None:
        x = data.draw(arrays(backend, min_dims=1, nan=False))
        axis = data.draw(axis_forms(x.ndim).filter(lambda a: a is None or _normalized(a, x.ndim) is not None))
        axes = tuple(range(x.ndim)) if axis is None else _normalized(axis, x.ndim)
        n = math.prod(x.shape[a] for a in axes)
        correction = data.draw(st.one_of(st.integers(0, n + 3), st.floats(0, n + 3)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = backend.to_numpy(_call(op, backend.asarray(x), axis, correction=correction))
        expected = _reference(op, x, axes, correction)
        if n - correction <= 0:
            assert np.isnan(got).all(), (n, correction, got)
        assert_close(got, expected, str(x.dtype), n_terms=max(n, 1), scale=4.0)

    check()


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin", "sort", "argsort"])
def test_complex_has_no_order_on_any_backend(backend: TestBackend, op: str) -> None:
    x = backend.asarray(np.array([1 + 2j, 3 - 1j, -2 + 0.5j], np.complex64))
    with pytest.raises(ua.DTypeError, match=f"ua.{op} .*complex numbers have no order"):
        getattr(ua, op)(x)
    with pytest.raises(ua.DTypeError):
        getattr(ua, op)(x, axis=0)


# -- NumPy subclasses: masked arrays refused, np.matrix read as its plain view ----------------------------------


def _masked() -> np.ma.MaskedArray:
    return np.ma.masked_array([1.0, 50.0, 3.0], mask=[False, True, False])


@pytest.mark.parametrize("call", [
    lambda m, x: ua.sum(m), lambda m, x: ua.max(m), lambda m, x: ua.argmax(m), lambda m, x: ua.mean(m),
    lambda m, x: ua.add(x, m), lambda m, x: ua.add(m, x), lambda m, x: ua.concat([x, m]),
    lambda m, x: ua.where(x > 0, m, x), lambda m, x: ua.to(m, "numpy"),
])
def test_masked_arrays_are_refused(backend: TestBackend, call: Any) -> None:
    m = _masked()
    x = backend.asarray(np.array([4.0, 5.0, 6.0]).astype(np.float32))
    with pytest.raises(ua.ArgumentTypeError, match=r"masked array.*x\.filled\(value\).*x\.data"):
        call(m, x)
    assert m.mask.tolist() == [False, True, False] and m.data.tolist() == [1.0, 50.0, 3.0]


def test_masked_arrays_are_refused_by_handoff(backend: TestBackend) -> None:
    with pytest.raises(ua.ArgumentTypeError, match="masked array"):
        ua.to(_masked(), backend.name)


@given(rows=st.integers(1, 4), cols=st.integers(1, 4), seed=st.integers(0, 2**16))
@SETTINGS
def test_matrix_results_have_standard_shapes(rows: int, cols: int, seed: int) -> None:
    a = np.random.default_rng(seed).uniform(0.5, 2.0, (rows, cols))
    m = np.matrix(a)
    for got, ref in [(ua.sum(m, axis=0), a.sum(0)), (ua.max(m, axis=1), a.max(1)), (ua.mean(m), a.mean()),
                     (ua.argmax(m, axis=0), a.argmax(0)), (ua.matmul(m, np.ones(cols)), a @ np.ones(cols)),
                     (ua.multiply(m, m), a * a), (ua.sort(m, axis=0), np.sort(a, axis=0)),
                     (ua.concat([m, a]), np.concatenate([a, a])), (ua.reshape(m, (-1,)), a.reshape(-1))]:
        assert type(got) is not np.matrix
        assert np.shape(got) == np.shape(ref)
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    # Zero-copy: the view shares the matrix's memory.
    assert np.shares_memory(ua.matrix_transpose(m), m)


def test_matrix_joins_each_backend_with_standard_shapes(backend: TestBackend) -> None:
    a = np.arange(1.0, 7.0).reshape(2, 3)
    x = backend.asarray(np.arange(1.0, 4.0).astype(np.float32))
    if ua.device(x).kind != "cpu":  # a matrix lives on the host: joining a device array is refused
        with pytest.raises(ua.DeviceMismatchError):
            ua.add(x, np.matrix(a.astype(np.float32)))
        return
    for got in (ua.add(x, np.matrix(a.astype(np.float32))), ua.add(np.matrix(a.astype(np.float32)), x)):
        out = np.asarray(backend.to_numpy(got) if not isinstance(got, np.ndarray) else got)
        assert type(got) is not np.matrix
        assert out.shape == (2, 3)
        np.testing.assert_allclose(out, a + np.arange(1.0, 4.0))
    assert backend.is_native(ua.add(x, np.matrix(a.astype(np.float32))))


# -- tf.function: empty reductions over dimensions unknown at trace time --------------------------------------


@pytest.mark.parametrize("op", sorted(NO_IDENTITY))
def test_tf_function_empty_reduction_raises_at_run_time(op: str) -> None:
    tf = pytest.importorskip("tensorflow")

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def f(x: Any) -> Any:
        return getattr(ua, op)(x, axis=1)

    @given(rows=st.integers(1, 3), cols=st.integers(0, 3), seed=st.integers(0, 2**16))
    @SETTINGS
    def check(rows: int, cols: int, seed: int) -> None:
        x = np.random.default_rng(seed).uniform(-2, 2, (rows, cols)).astype(np.float32)
        if cols == 0:
            # Eagerly the typed error; in the graph the same message, as TF's own error (documented).
            with pytest.raises(ua.EmptyReductionError):
                getattr(ua, op)(tf.constant(x), axis=1)
            with pytest.raises(tf.errors.InvalidArgumentError, match=f"ua.{op} .*EmptyReductionError"):
                f(tf.constant(x))
        else:
            np.testing.assert_array_equal(f(tf.constant(x)).numpy(), getattr(np, op)(x, axis=1))

    check()


# -- tracing: an eager constant joins a trace; typed errors inside tf.function --------------------------------


@given(seed=st.integers(0, 2**16), n=st.integers(1, 5))
@settings(max_examples=10, deadline=None, derandomize=True)
def test_numpy_constant_leading_a_jax_tracer(seed: int, n: int) -> None:
    jax = pytest.importorskip("jax")
    c = np.random.default_rng(seed).uniform(0.5, 2.0, n).astype(np.float32)
    t = jax.numpy.asarray(np.linspace(1.0, 2.0, n, dtype=np.float32))

    def f(x: Any) -> Any:
        return ua.sum(ua.multiply(c, ua.add(c, x)))

    native = jax.jit(lambda x: (c * (c + x)).sum())(t)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(t)), np.asarray(native), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.grad(f)(t)), c, rtol=1e-6)
    stacked = jax.jit(lambda x: ua.stack([c, x, c]))(t)
    assert isinstance(stacked, jax.Array) and stacked.shape == (3, n)


def test_numpy_constant_leading_a_tf_function_tensor() -> None:
    tf = pytest.importorskip("tensorflow")
    c = np.array([1.5, -2.0, 0.25], np.float32)
    f = tf.function(lambda x: ua.where(ua.greater(c, x), c, x))
    x = tf.constant([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(f(x).numpy(), np.where(c > 1.0, c, 1.0))


@pytest.mark.parametrize("call, error", [
    (lambda x: ua.sum(x, axis=5), ua.AxisError),
    (lambda x: ua.sum(x, axis=True), ua.ArgumentTypeError),
    (lambda x: ua.argmax(x, axis=(0, 1)), ua.ArgumentTypeError),
    (lambda x: ua.max(ua.astype(x, ua.complex64)), ua.DTypeError),
    (lambda x: ua.matmul(x, x), ua.ShapeError),
])
def test_tf_function_raises_the_eager_typed_error(call: Any, error: type) -> None:
    tf = pytest.importorskip("tensorflow")
    x = tf.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    with pytest.raises(error) as eager:
        call(x)
    with pytest.raises(error) as traced:
        tf.function(call)(x)
    assert eager.value.__class__ is traced.value.__class__
