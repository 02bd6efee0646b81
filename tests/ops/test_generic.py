"""``ua.at`` and ``ua.apply_numpy`` on every backend: the result equals NumPy's (``ufunc.at``, every occurrence
of a repeated position applied), the input is never written, JAX and TensorFlow trace them, dask stays lazy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests.ops.test_bound_namespace import Lib, lib  # noqa: F401 - the fixture over the four backends and dask

OPS = ("set", "add", "subtract", "multiply", "min", "max")
_UFUNC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def _reference(x: np.ndarray, idx: Any, op: str, v: Any) -> np.ndarray:
    out = x.copy()
    if op == "set":
        out[idx] = v
    else:
        _UFUNC[op].at(out, idx, v)
    return out


@st.composite
def _updates(draw: st.DrawFn) -> tuple[np.ndarray, str, Any, str, Any]:
    shape = draw(st.tuples(st.integers(1, 4), st.integers(1, 4)), label="shape")
    # Note: normal floats only (JAX and torch CPU kernels flush subnormals to zero)
    x = draw(st.lists(st.floats(-4, 4, width=32).filter(lambda f: abs(f) > 1e-3), min_size=shape[0] * shape[1],
                      max_size=shape[0] * shape[1]), label="x")
    x = np.asarray(x, dtype=np.float32).reshape(shape)
    kind = draw(st.sampled_from(["int", "slice", "rows", "mask", "pairs"]), label="index kind")
    if kind == "int":
        idx: Any = (draw(st.integers(-shape[0], shape[0] - 1)), draw(st.integers(0, shape[1] - 1)))
    elif kind == "slice":
        idx = (slice(None), slice(draw(st.integers(0, shape[1] - 1)), None))
    elif kind == "rows":  # repeated rows: every occurrence applies
        idx = np.asarray(draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, max_size=5)), dtype=np.int32)
    elif kind == "mask":
        idx = x > draw(st.floats(-4, 4, width=32))
    else:
        n = draw(st.integers(1, 5))
        idx = (np.asarray(draw(st.lists(st.integers(0, shape[0] - 1), min_size=n, max_size=n)), dtype=np.int32),
               np.asarray(draw(st.lists(st.integers(0, shape[1] - 1), min_size=n, max_size=n)), dtype=np.int32))
    op = draw(st.sampled_from(OPS), label="op")
    value = np.float32(draw(st.sampled_from([0.5, -1.5, 2.0, 3.0]), label="value"))
    return x, kind, idx, op, value


def _index_for(owner: Lib, idx: Any) -> Any:
    # Index arrays in the array's own library (a NumPy index is handed over by ua.at itself: tested apart).
    if isinstance(idx, tuple):
        return tuple(_index_for(owner, p) for p in idx)
    return owner.asarray(idx) if isinstance(idx, np.ndarray) else idx


@given(case=_updates())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_at_equals_numpy_and_never_writes_the_input(lib: Lib, case: tuple[np.ndarray, str, Any, str, Any]) -> None:  # noqa: F811
    x_np, kind, idx, op, v = case
    want = _reference(x_np, idx, op, v)
    x = lib.asarray(x_np)
    out = getattr(ua.at(x, _index_for(lib, idx)), op)(float(v))
    assert type(out) is type(x) and out.dtype == x.dtype
    np.testing.assert_allclose(lib.to_numpy(out), want, rtol=1e-6, atol=0)
    np.testing.assert_array_equal(lib.to_numpy(x), x_np)


def test_at_takes_numpy_indices_for_any_library(lib: Lib) -> None:  # noqa: F811
    x = lib.asarray(np.zeros((3, 2), np.float32))
    out = ua.at(x, np.array([0, 0, 2])).add(1.0)
    np.testing.assert_array_equal(lib.to_numpy(out), [[2, 2], [0, 0], [1, 1]])
    np.testing.assert_array_equal(lib.to_numpy(ua.at(x)[np.array([True, False, True])].set(4.0))[:, 0], [4, 0, 4])


def test_dask_stays_lazy() -> None:
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.arange(8.0), chunks=4)
    before = ua.stats()["computes"]
    out = ua.at(x, x > 3).multiply(2.0)
    rows = ua.at(x, np.array([1, 1])).add(1.0)
    sorted_ = ua.apply_numpy(np.sort, -x, shape=(8,), dtype=ua.float64)
    assert all(isinstance(y, da.Array) for y in (out, rows, sorted_)) and ua.stats()["computes"] == before
    assert out.chunks == x.chunks and rows.chunks == x.chunks
    np.testing.assert_array_equal(out.compute(), np.where(np.arange(8.0) > 3, 2 * np.arange(8.0), np.arange(8.0)))
    np.testing.assert_array_equal(rows.compute()[:3], [0, 3, 2])
    np.testing.assert_array_equal(sorted_.compute(), np.sort(-np.arange(8.0)))


def test_at_and_apply_numpy_under_jax_jit() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    @jax.jit
    def f(x: Any) -> Any:
        y = ua.at(x, x > 1.0).set(0.0)
        y = ua.at(y, jnp.array([0, 0])).add(1.0)
        return ua.apply_numpy(np.cumsum, y, shape=y.shape, dtype=y.dtype)

    np.testing.assert_allclose(np.asarray(f(jnp.array([0.5, 2.0, 1.0]))), np.cumsum([2.5, 0.0, 1.0]))


def test_at_and_apply_numpy_under_tf_function() -> None:
    tf = pytest.importorskip("tensorflow")

    @tf.function
    def f(x: Any) -> Any:
        y = ua.at(x, x > 1.0).set(0.0)
        y = ua.at(y, tf.constant([0, 0])).add(1.0)
        return ua.apply_numpy(np.cumsum, y, shape=(3,), dtype=ua.float32)

    np.testing.assert_allclose(f(tf.constant([0.5, 2.0, 1.0])).numpy(), np.cumsum([2.5, 0.0, 1.0]))


def test_copy_false_writes_only_where_the_array_is_writable(lib: Lib) -> None:  # noqa: F811
    x = lib.asarray(np.zeros(3, np.float32))
    if lib.name in ("numpy", "torch", "cupy"):
        out = ua.at(x, 1).set(5.0, copy=False)
        assert out is x and lib.to_numpy(x)[1] == 5.0
    else:
        with pytest.raises(ua.ArgumentError, match="cannot be written in place"):
            ua.at(x, 1).set(5.0, copy=False)
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.raises(ua.ArgumentError, match="cannot be written in place"):
        ua.at(ro, 0).set(1.0, copy=False)
    with pytest.raises(ua.ArgumentError, match="no index"):
        ua.at(x).set(1.0)


@given(values=st.lists(st.floats(-10, 10, width=32, allow_subnormal=False), min_size=1, max_size=6))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_apply_numpy_equals_numpy_on_every_backend(lib: Lib, values: list[float]) -> None:  # noqa: F811
    a = np.asarray(values, np.float32)
    x = lib.asarray(a)
    out = ua.apply_numpy(np.sort, x, shape=a.shape, dtype=ua.float32)
    assert type(out) is type(x) and ua.device(out) == ua.device(x)
    np.testing.assert_array_equal(lib.to_numpy(out), np.sort(a))
    np.testing.assert_array_equal(lib.to_numpy(x), a)


def test_apply_numpy_refuses_a_wrong_statement_and_writes() -> None:
    x = np.ones(3)
    with pytest.raises(ua.ShapeError, match="shape"):
        ua.apply_numpy(np.cumsum, x, shape=(4,), dtype=ua.float64)
    with pytest.raises(ua.DTypeError, match="dtype"):
        ua.apply_numpy(np.cumsum, x, shape=(3,), dtype=ua.float32)
    with pytest.raises(ValueError, match="read-only"):
        ua.apply_numpy(lambda a: np.add(a, 1, out=a), x, shape=(3,), dtype=ua.float64)
    np.testing.assert_array_equal(x, np.ones(3))


@st.composite
def _unbuffered_cases(draw: st.DrawFn) -> tuple[np.ndarray, Any, str, np.ndarray]:
    names = ["float32", "float64", "int64", "int8", "uint8", "complex64"]
    dtype = np.dtype(draw(st.sampled_from(names), label="dtype"))
    shape = draw(st.tuples(st.integers(1, 4), st.integers(1, 4)), label="shape")
    signs = st.sampled_from([1] if dtype.kind == "u" else [-1, 1])

    def values(n: int) -> np.ndarray:
        mags = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
        return np.asarray([m * draw(signs) for m in mags]).astype(dtype)

    x = values(shape[0] * shape[1]).reshape(shape)
    if dtype.kind == "f" and draw(st.booleans(), label="a NaN"):
        x[0, 0] = np.nan  # min and max propagate it as NumPy's do
    if draw(st.booleans(), label="Fortran order"):
        x = np.asfortranarray(x)  # not C-contiguous where both sizes exceed 1: written back through a copy
    kind = draw(st.sampled_from(["rows", "pairs", "mask", "slice"]), label="index kind")
    n = draw(st.integers(1, 6), label="updates")
    rows = np.asarray(draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=n, max_size=n)))
    cols = np.asarray(draw(st.lists(st.integers(0, shape[1] - 1), min_size=n, max_size=n)))
    idx: Any = {"rows": rows, "pairs": (rows, cols), "mask": x.real > 0, "slice": (slice(None), slice(1, None))}[kind]
    target = x[idx].shape
    v = values(math.prod(target)).reshape(target) if draw(st.booleans(), label="one value each") else values(1)[0]
    return x, idx, draw(st.sampled_from(["add", "subtract", "multiply", "min", "max"]), label="op"), np.asarray(v)


@given(case=_unbuffered_cases())
@settings(max_examples=40, deadline=None)
def test_the_unbuffered_fallback_is_numpys_ufunc_at(case: tuple[np.ndarray, Any, str, np.ndarray]) -> None:
    # What ua.at runs where a library's ufunc.at lacks the op or dtype (CuPy's multiply, subtract on floats...):
    # every occurrence of a repeated position applied in order, so equal to NumPy's bit for bit.
    from unarray._backends import updates

    x, idx, op, v = case
    want = x.copy()
    with np.errstate(over="ignore"):
        _UFUNC[op].at(want, idx, v)
        got = updates.unbuffered_at(np, _UFUNC[op], x, idx, v)
    assert got is x
    np.testing.assert_array_equal(got, want)
