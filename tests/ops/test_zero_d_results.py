"""A full reduction returns a 0-d array of the caller's library, never a scalar: the standard's rule, on every
backend. NumPy's own reductions return NumPy scalars there; its backend returns 0-d arrays like the others."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import unarray as ua
from tests._support import TestBackend, assert_close

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# name -> (the call on the whole array, given its axes or None; the float64 reference; terms it accumulates)
_Op = tuple[Callable[[Any, Any], Any], Callable[[np.ndarray], Any]]
REDUCTIONS: dict[str, _Op] = {
    "sum": (lambda x, ax: ua.sum(x, axis=ax), np.sum),
    "prod": (lambda x, ax: ua.prod(x, axis=ax), np.prod),
    "mean": (lambda x, ax: ua.mean(x, axis=ax), np.mean),
    "var": (lambda x, ax: ua.var(x, axis=ax, correction=0), np.var),
    "std": (lambda x, ax: ua.std(x, axis=ax, correction=0), np.std),
    "min": (lambda x, ax: ua.min(x, axis=ax), np.min),
    "max": (lambda x, ax: ua.max(x, axis=ax), np.max),
    "any": (lambda x, ax: ua.any(x > 1, axis=ax), lambda a: np.any(a > 1)),
    "all": (lambda x, ax: ua.all(x > -1, axis=ax), lambda a: np.all(a > -1)),
    "count_nonzero": (lambda x, ax: ua.count_nonzero(x > 1, axis=ax), lambda a: np.count_nonzero(a > 1)),
    "vector_norm": (lambda x, ax: ua.linalg.vector_norm(x, axis=ax), lambda a: np.sqrt(np.sum(a * a))),
}
# Reductions over one axis: of a 1-d array they leave no dimension either.
ONE_AXIS: dict[str, _Op] = {
    "argmin": (lambda x, ax: ua.argmin(x), np.argmin),
    "argmax": (lambda x, ax: ua.argmax(x), np.argmax),
    "vecdot": (lambda x, ax: ua.vecdot(x, x), lambda a: np.sum(a * a)),
    "linalg.vecdot": (lambda x, ax: ua.linalg.vecdot(x, x), lambda a: np.sum(a * a)),
}


def _values(shape: tuple[int, ...], dtype: str) -> st.SearchStrategy[np.ndarray]:
    # Magnitudes in [0.5, 2], either sign: never zero, and products of a few stay well inside float32.
    mag = st.floats(0.5, 2.0, width=32)
    return hnp.arrays(dtype, shape, elements=st.tuples(mag, st.booleans()).map(lambda t: -t[0] if t[1] else t[0]))


def _check(backend: TestBackend, r: Any, expected: Any, dtype: str, n: int) -> None:
    assert backend.is_native(r) and not isinstance(r, np.generic), type(r)
    assert tuple(r.shape) == (), r.shape
    got = backend.to_numpy(r)
    want = np.asarray(expected)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        assert_close(got, want, dtype, n_terms=n)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SETTINGS
@given(data=st.data())
def test_a_full_reduction_is_a_0d_array(backend: TestBackend, name: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(["float32", "float64"] if backend.has_float64 else ["float32"]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    a = data.draw(_values(shape, dtype))
    before = a.copy()
    x = backend.asarray(a)
    call, ref = REDUCTIONS[name]
    expected = ref(a.astype(np.float64))
    for axes in (None, tuple(range(a.ndim))):  # the whole array, said both ways
        _check(backend, call(x, axes), expected, dtype, a.size)
    np.testing.assert_array_equal(a, before)


@pytest.mark.parametrize("name", sorted(ONE_AXIS))
@SETTINGS
@given(data=st.data())
def test_a_reduction_of_a_vector_is_a_0d_array(backend: TestBackend, name: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(["float32", "float64"] if backend.has_float64 else ["float32"]))
    a = data.draw(_values((data.draw(st.integers(1, 6)),), dtype))
    call, ref = ONE_AXIS[name]
    _check(backend, call(backend.asarray(a), None), ref(a.astype(np.float64)), dtype, a.size)


def test_numpys_linear_algebra_reductions_are_0d_arrays() -> None:
    m = np.array([[4.0, 2.0], [2.0, 3.0]])
    for r in (ua.linalg.det(m), ua.linalg.matrix_norm(m), ua.linalg.matrix_rank(m), *ua.linalg.slogdet(m)):
        assert type(r) is np.ndarray and r.shape == ()
    np.testing.assert_allclose(ua.linalg.det(m), 8.0)
    sign, logabsdet = ua.linalg.slogdet(m)
    assert sign == 1.0 and np.isclose(logabsdet, np.log(8.0))
    # The standard's NaN where the correction leaves no degree of freedom, a 0-d array too.
    for r in (ua.var(np.ones(2), correction=2), ua.std(np.ones(2), correction=3)):
        assert type(r) is np.ndarray and r.shape == () and np.isnan(r)
    # Reductions that keep a dimension are unchanged: arrays of the reduced shape.
    assert ua.sum(m, axis=0).shape == (2,) and ua.sum(m, keepdims=True).shape == (1, 1)
