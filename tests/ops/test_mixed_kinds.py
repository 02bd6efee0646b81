"""One answer for mixed dtypes on every backend: unarray's promotion (the standard's table; for mixed kinds the
higher kind's dtype at its own width; signed with uint64 refused), held by a property across the backend fixture
(numpy, torch, jax, tensorflow, mlx, dask): each function's result dtype equals ``ua.result_type`` of the dtypes,
the bound namespace's ``result_type`` and the module's answer alike, and the values match a float64 NumPy
reference; a refused pair raises ``DTypeError`` everywhere."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close
from unarray._dtypes import SPEC_DTYPE_NAMES, canonical_name

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
NAMES = list(SPEC_DTYPE_NAMES)
# The element-wise functions drawn, with their float64 reference (values 1..11 keep every product in int8).
ELEMENTWISE = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
               "equal": np.equal, "less": np.less, "not_equal": np.not_equal}
COMPARISONS = frozenset({"equal", "less", "not_equal"})
ORDERED = frozenset({"maximum", "minimum", "less"})  # (no order for complex numbers)


def _values(dtype: str, n: int, rng: np.random.Generator, hi: int = 12) -> np.ndarray:
    # Fresh values, never zero (bool drawn both ways), held exactly by every dtype.
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    v = rng.integers(1, hi, n)
    if dtype.startswith(("float", "complex")):
        v = v + rng.integers(0, 4, n) * 0.25
    if dtype.startswith("complex"):
        return (v + 1j * rng.integers(1, 5, n)).astype(dtype)
    return v.astype(dtype)


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _want(a: str, b: str) -> str | None:
    try:
        return str(ua.result_type(getattr(ua, a), getattr(ua, b)).name)
    except ua.DTypeError:
        return None


def _namespace(backend: TestBackend) -> Any:
    return ua.array_namespace(backend.asarray(np.ones(1, np.float32)))


def _check_refused(backend: TestBackend, call: Any, a: str, b: str, xa: Any, ya: Any) -> None:
    xp = _namespace(backend)
    with pytest.raises(ua.DTypeError):
        call()
    with pytest.raises(ua.DTypeError):
        xp.result_type(getattr(xp, a), getattr(xp, b))
    with pytest.raises(ua.DTypeError):
        ua.result_type(xa, ya)


@SETTINGS
@given(a=st.sampled_from(NAMES), b=st.sampled_from(NAMES), op=st.sampled_from(sorted(ELEMENTWISE)),
       n=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_mixed_dtypes_give_one_dtype_and_value_everywhere(backend: TestBackend, a: str, b: str, op: str, n: int,
                                                          seed: int) -> None:
    if not (backend.holds(a) and backend.holds(b)):
        return
    if op in ORDERED and "complex" in a + b:
        return
    rng = np.random.default_rng(seed)
    x, y = _values(a, n, rng), _values(b, n, rng)
    xa, ya = backend.asarray(x), backend.asarray(y)
    want = _want(a, b)
    if want is None or not backend.holds(want):  # no common dtype, or one the backend cannot make (JAX, no x64)
        _check_refused(backend, lambda: getattr(ua, op)(xa, ya), a, b, xa, ya)
        return
    xp = _namespace(backend)
    assert canonical_name(ua.result_type(xa, ya)) == want
    assert canonical_name(ua.result_type(xa.dtype, ya.dtype)) == want
    assert xp.result_type(getattr(xp, a), getattr(xp, b)) == getattr(xp, want)
    out = getattr(ua, op)(xa, ya)
    assert canonical_name(out.dtype) == ("bool" if op in COMPARISONS else want), (op, a, b, out.dtype)
    assert canonical_name(getattr(xp, op)(xa, ya).dtype) == canonical_name(out.dtype)
    if want == "bool":  # (bool arithmetic: add is or, multiply is and, as unarray's add states)
        ref = ELEMENTWISE[op](x, y)
    else:
        ref = ELEMENTWISE[op](_wide(x.astype(want)), _wide(y.astype(want)))
    got = backend.to_numpy(out)
    if op in COMPARISONS or want == "bool":
        np.testing.assert_array_equal(got, ref)
    else:
        assert_close(_wide(got), ref, want)


# Functions beyond the element-wise ones that promote their array operands.
def _where(xa: Any, ya: Any, backend: TestBackend, n: int) -> Any:
    return ua.where(backend.asarray(np.arange(n) % 2 == 0), xa, ya)


OTHERS = {
    "where": (_where, lambda x, y: np.where(np.arange(x.shape[0]) % 2 == 0, x, y)),
    "concat": (lambda xa, ya, b, n: ua.concat([xa, ya]), lambda x, y: np.concatenate([x, y])),
    "stack": (lambda xa, ya, b, n: ua.stack([xa, ya]), lambda x, y: np.stack([x, y])),
    "vecdot": (lambda xa, ya, b, n: ua.vecdot(xa, ya), lambda x, y: np.sum(np.conj(x) * y)),
    "matmul": (lambda xa, ya, b, n: ua.matmul(xa, ya), lambda x, y: np.matmul(x, y)),
    "tensordot": (lambda xa, ya, b, n: ua.tensordot(xa, ya, axes=1), lambda x, y: np.tensordot(x, y, axes=1)),
}
NUMERIC = [n for n in NAMES if n != "bool"]


@SETTINGS
@given(a=st.sampled_from(NUMERIC), b=st.sampled_from(NUMERIC), op=st.sampled_from(sorted(OTHERS)),
       n=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_functions_that_promote_follow_the_same_rule(backend: TestBackend, a: str, b: str, op: str, n: int,
                                                     seed: int) -> None:
    if not (backend.holds(a) and backend.holds(b)):
        return
    rng = np.random.default_rng(seed)
    x, y = _values(a, n, rng, hi=7), _values(b, n, rng, hi=7)  # sums of products stay within int8
    xa, ya = backend.asarray(x), backend.asarray(y)
    call, reference = OTHERS[op]
    want = _want(a, b)
    if want is None or not backend.holds(want):
        _check_refused(backend, lambda: call(xa, ya, backend, n), a, b, xa, ya)
        return
    out = call(xa, ya, backend, n)
    assert canonical_name(out.dtype) == want, (op, a, b, out.dtype)
    assert_close(_wide(backend.to_numpy(out)), reference(_wide(x.astype(want)), _wide(y.astype(want))), want,
                 n_terms=n)


@pytest.mark.parametrize(("a", "b", "want"), [("int32", "float32", "float32"), ("int64", "float16", "float16"),
                                              ("uint8", "complex64", "complex64"), ("bool", "int8", "int8"),
                                              ("int16", "uint8", "int16")])
def test_result_type_answers_mixed_kinds_by_the_rule(a: str, b: str, want: str) -> None:
    assert ua.result_type(getattr(ua, a), getattr(ua, b)) is getattr(ua, want)
    assert ua.result_type(getattr(ua, b), getattr(ua, a)) is getattr(ua, want)
    xp = ua.array_namespace(np.zeros(1))
    assert xp.result_type(getattr(xp, a), getattr(xp, b)) == getattr(ua, want)
    assert ua.result_type(np.dtype(a), np.dtype(b)) == np.dtype(want)


@pytest.mark.parametrize("signed", ["int8", "int16", "int32", "int64"])
def test_signed_with_uint64_is_refused_naming_the_op_both_dtypes_and_the_fix(signed: str) -> None:
    x, y = np.ones(2, signed), np.ones(2, np.uint64)
    with pytest.raises(ua.DTypeError, match=rf"ua\.add.*{signed} with uint64.*ua\.astype"):
        ua.add(x, y)
    with pytest.raises(ua.DTypeError, match=rf"{signed} with uint64"):
        ua.result_type(getattr(ua, signed), ua.uint64)
    with pytest.raises(ua.DTypeError, match="ua.astype"):
        ua.concat([x, y])


REAL = [n for n in NUMERIC if not n.startswith("complex")]


@SETTINGS
@given(a=st.sampled_from(REAL), b=st.sampled_from(REAL), n=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_clip_keeps_xs_dtype_with_bounds_of_another(backend: TestBackend, a: str, b: str, n: int, seed: int) -> None:
    # The standard: clip's result has x's dtype; torch and JAX promoted it with an array bound's.
    if not (backend.holds(a) and backend.holds(b)):
        return
    rng = np.random.default_rng(seed)
    x = _values(a, n, rng)
    lo, hi = _values(b, n, rng, hi=4), (_values(b, n, rng, hi=4) + 6).astype(b)
    xa, la, ha = backend.asarray(x), backend.asarray(lo), backend.asarray(hi)
    if _want(a, b) is None:
        with pytest.raises(ua.DTypeError):
            ua.clip(xa, la, ha)
        return
    out = ua.clip(xa, la, ha)
    assert canonical_name(out.dtype) == a, (a, b, out.dtype)
    want = np.clip(_wide(x), _wide(lo), _wide(hi)).astype(a)
    assert_close(_wide(backend.to_numpy(out)), _wide(want), a)
