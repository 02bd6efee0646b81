"""What counts as True, and the answers that hinge on a signed zero, a NaN or an imaginary part, on every backend.

The standard: a number is True when it is not zero, a complex number when either part is not zero (``-0.5j`` is
True, ``-0 - 0j`` False, NaN True); reductions, casts to bool, logical functions, ``where``'s condition and
``nonzero`` all read elements that way, and ``equal`` is False wherever a part is NaN. Hypothesis draws arrays whose
elements mix signed zeros, tiny and ordinary numbers, NaN and infinities in either part; NumPy, which follows the
standard there, is the reference. Also: comparisons, maximum and minimum beside NaN and signed zeros, clip with a
NaN anywhere, isin beside NaN and -0, unique_* keeping each complex NaN with its other part, and ``expm1`` of a
complex number keeping the standard's zeros (``+-0 + 0j`` is ``+0 + 0j``, and conjugate symmetry), against a
float64 formula.
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
from tests._support import TestBackend

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
PARTS = [0.0, -0.0, 0.5, -0.5, 1e-30, -2.0, math.nan, math.inf, -math.inf]
AXES = [None, (), 0, -1, (0, -1)]


def _listed(backend: TestBackend, dtype: str) -> bool:
    with ua.use(backend.name):
        return dtype in ua.__array_namespace_info__().dtypes()


@st.composite
def elements(draw: Any, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """An array of ``shape`` whose parts come from PARTS, at least one element nonzero."""
    n = math.prod(shape)
    re = draw(st.lists(st.sampled_from(PARTS), min_size=n, max_size=n))
    if dtype.startswith("complex"):
        im = draw(st.lists(st.sampled_from(PARTS), min_size=n, max_size=n))
        values = np.array([complex(a, b) for a, b in zip(re, im, strict=True)])
    else:
        values = np.array(re)
    if not np.any(values):
        values[draw(st.integers(0, n - 1))] = 0.5j if dtype.startswith("complex") else -0.5
    return values.astype(dtype).reshape(shape)


def _dtypes(backend: TestBackend) -> list[str]:
    return [d for d in ("complex64", "complex128", "float32", "float64") if _listed(backend, d)]


def _same(got: Any, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want), (what, got, want)


# (name, the call on a namespace, how many arrays it takes)
TRUTH_CALLS = [
    ("astype(bool)", lambda m, x, y: m.astype(x, m.bool), 1),
    ("logical_not", lambda m, x, y: m.logical_not(x), 1),
    ("logical_and", lambda m, x, y: m.logical_and(x, y), 2),
    ("logical_or", lambda m, x, y: m.logical_or(x, y), 2),
    ("logical_xor", lambda m, x, y: m.logical_xor(x, y), 2),
    ("where", lambda m, x, y: m.where(x, m.asarray(1.0, dtype=m.float32), m.asarray(2.0, dtype=m.float32)), 1),
    ("equal", lambda m, x, y: m.equal(x, y), 2),
    ("not_equal", lambda m, x, y: m.not_equal(x, y), 2),
]


def test_all_and_any_of_complex_read_both_parts(backend: TestBackend) -> None:
    # The case that was reported: jnp.all and jnp.any read the real part only.
    x = backend.asarray(np.array([-0.5j, 1], np.complex64))
    assert bool(backend.to_numpy(ua.all(x)))
    assert backend.to_numpy(ua.any(x[:1], axis=())).tolist() == [True]
    assert not bool(backend.to_numpy(ua.any(backend.asarray(np.array([0j, complex(-0.0, -0.0)], np.complex64)))))


@pytest.mark.parametrize("op", ["all", "any", "count_nonzero"])
def test_reductions_read_truth_as_the_standard(backend: TestBackend, op: str) -> None:
    dtypes = _dtypes(backend)

    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        dtype = data.draw(st.sampled_from(dtypes))
        shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=2, max_size=3)))
        x = data.draw(elements(dtype, shape))
        axis, keepdims = data.draw(st.sampled_from(AXES)), data.draw(st.booleans())
        want = np.asarray(getattr(np, op)(x, axis=axis, keepdims=keepdims))
        got = backend.to_numpy(getattr(ua, op)(backend.asarray(x), axis=axis, keepdims=keepdims))
        if op == "count_nonzero":  # (the default integer dtype is the library's: the values are the answer)
            got = got.astype(want.dtype)
        _same(got, want, (op, x.tolist(), axis, keepdims))

    check()


@pytest.mark.parametrize("name", [c[0] for c in TRUTH_CALLS])
def test_elementwise_truth_and_equality_as_the_standard(backend: TestBackend, name: str) -> None:
    call, arity = next((c[1], c[2]) for c in TRUTH_CALLS if c[0] == name)
    dtypes = _dtypes(backend)

    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        dtype = data.draw(st.sampled_from(dtypes))
        n = data.draw(st.integers(1, 6))
        x, y = data.draw(elements(dtype, (n,))), data.draw(elements(dtype, (n,)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy warns when it casts complex to real (where's condition)
            want = np.asarray(call(np, x, y if arity == 2 else None))
        got = backend.to_numpy(call(ua, backend.asarray(x), backend.asarray(y) if arity == 2 else None))
        _same(got, want, (name, x.tolist(), y.tolist() if arity == 2 else None))

    check()


@pytest.mark.parametrize("op", ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum"])
def test_order_of_real_nan_signed_zero_and_infinity_as_the_standard(backend: TestBackend, op: str) -> None:
    # Comparisons are False beside NaN and -0 == +0; maximum and minimum propagate NaN. Which zero maximum(-0, +0)
    # gives is the library's (the standard leaves it open): zeros are compared without their sign.
    dtypes = [d for d in _dtypes(backend) if d.startswith("float")]

    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        dtype = data.draw(st.sampled_from(dtypes))
        n = data.draw(st.integers(1, 6))
        x, y = data.draw(elements(dtype, (n,))), data.draw(elements(dtype, (n,)))
        want = getattr(np, op)(x, y)
        got = backend.to_numpy(getattr(ua, op)(backend.asarray(x), backend.asarray(y)))
        if op in ("maximum", "minimum"):
            got, want = got + 0.0, want + 0.0
            assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), (op, x, y, got, want)
        else:
            _same(got, want, (op, x.tolist(), y.tolist()))

    check()


def test_clip_with_a_nan_anywhere_is_nan(backend: TestBackend) -> None:
    # The standard: a NaN x_i, min_i or max_i gives NaN; bounds drawn as Python floats or arrays.
    dtypes = [d for d in _dtypes(backend) if d.startswith("float")]

    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        dtype = data.draw(st.sampled_from(dtypes))
        n = data.draw(st.integers(1, 6))
        x = data.draw(elements(dtype, (n,)))
        bounds = []
        for _ in range(2):
            kind = data.draw(st.sampled_from(["none", "scalar", "array"]))
            b = data.draw(elements(dtype, (n,))) if kind == "array" else data.draw(st.sampled_from(PARTS))
            bounds.append(None if kind == "none" else b)
        lo, hi = bounds
        with np.errstate(invalid="ignore"):
            want = x if lo is None and hi is None else np.clip(x, lo, hi)
        args = [backend.asarray(b) if isinstance(b, np.ndarray) else b for b in bounds]
        got = backend.to_numpy(ua.clip(backend.asarray(x), *args))
        assert np.array_equal(np.isnan(got), np.isnan(want)), (x, lo, hi, got, want)
        if not (lo is not None and hi is not None and np.any(np.asarray(lo) > np.asarray(hi))):  # (min > max: open)
            assert np.array_equal(got + 0.0, want + 0.0, equal_nan=True), (x, lo, hi, got, want)

    check()


def test_isin_of_nan_and_signed_zeros_as_the_standard(backend: TestBackend) -> None:
    # isin compares as equal does: NaN is never found, -0 is found among +0.
    dtypes = [d for d in _dtypes(backend) if d.startswith("float")]

    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        dtype = data.draw(st.sampled_from(dtypes))
        x = data.draw(elements(dtype, (data.draw(st.integers(1, 6)),)))
        y = data.draw(elements(dtype, (data.draw(st.integers(1, 6)),)))
        invert = data.draw(st.booleans())
        got = backend.to_numpy(ua.isin(backend.asarray(x), backend.asarray(y), invert=invert))
        _same(got, np.isin(x, y, invert=invert), (x.tolist(), y.tolist(), invert))

    check()


def test_nonzero_reads_truth_as_the_standard(backend: TestBackend) -> None:
    dtypes = _dtypes(backend)

    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        dtype = data.draw(st.sampled_from(dtypes))
        shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
        x = data.draw(elements(dtype, shape))
        got = [backend.to_numpy(i).tolist() for i in ua.nonzero(backend.asarray(x))]
        assert got == [i.tolist() for i in np.nonzero(x)], (x.tolist(), got)

    check()


def _expm1_reference(z: complex) -> tuple[float, float, float]:
    """The standard's expm1(a + bj) for finite parts, in float64, and the size of its terms (for the tolerance)."""
    a, b = z.real, z.imag
    if b == 0:  # an imaginary zero stays; a zero real part gives +0 (the standard: +-0 + 0j is +0 + 0j)
        return (0.0 if a == 0 else math.expm1(a)), b, abs(math.expm1(a))
    s = math.sin(b / 2)
    re = math.expm1(a) * math.cos(b) - 2 * s * s
    return re, math.exp(a) * math.sin(b), abs(math.expm1(a)) + 2 * s * s + math.exp(a)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_expm1_of_complex_keeps_the_standards_zeros(backend: TestBackend, dtype: str) -> None:
    if not _listed(backend, dtype):
        pytest.skip(f"{backend.name} lists no {dtype} here")
    finite = [0.0, -0.0, 1e-30, -1e-30, 0.25, -0.5, 1.5, -3.0]
    eps = float(np.finfo(dtype).eps)

    @SETTINGS
    @given(st.lists(st.tuples(st.sampled_from(finite), st.sampled_from(finite)), min_size=1, max_size=8))
    def check(parts: list[tuple[float, float]]) -> None:
        z = np.array([complex(a, b) for a, b in parts], dtype)
        # the conjugates ride along: expm1(conj(z)) must be conj(expm1(z))
        z = np.concatenate([z, np.conj(z)])
        got = backend.to_numpy(ua.expm1(backend.asarray(z)))
        for zi, gi in zip(z.tolist(), got.tolist(), strict=True):
            re, im, size = _expm1_reference(complex(zi))
            for g, w in ((gi.real, re), (gi.imag, im)):
                if w == 0:
                    assert g == 0 and math.copysign(1, g) == math.copysign(1, w), (zi, gi, (re, im))
                else:
                    assert abs(g - w) <= 16 * eps * max(size, abs(w)), (zi, gi, (re, im))

    check()


def _value_key(v: complex) -> tuple[str, str]:
    # A value as the standard's unique_* compare it: a NaN part is kept as drawn, a zero's sign is not compared.
    return tuple("nan" if math.isnan(p) else repr(p + 0.0) for p in (v.real, v.imag))  # type: ignore[return-value]


@pytest.mark.parametrize("op", ["unique_values", "unique_counts", "unique_inverse", "unique_all"])
def test_unique_keeps_each_complex_nan_with_its_other_part(backend: TestBackend, op: str) -> None:
    dtypes = [d for d in _dtypes(backend) if d.startswith("complex")]

    @SETTINGS
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        n = data.draw(st.integers(1, 6))
        x = data.draw(elements(data.draw(st.sampled_from(dtypes)), (n,)))
        out = getattr(ua, op)(backend.asarray(x))
        values = backend.to_numpy(out if op == "unique_values" else out.values)
        want = np.unique_values(x)
        assert sorted(map(_value_key, values.tolist())) == sorted(map(_value_key, want.tolist())), (x, values)
        if op != "unique_values":  # the other results follow the values, in the backend's order
            got_counts = backend.to_numpy(out.counts) if op in ("unique_counts", "unique_all") else None
            inverse = backend.to_numpy(out.inverse_indices) if op != "unique_counts" else None
            if inverse is not None:
                listed = values.tolist()
                assert [_value_key(listed[i]) for i in inverse.tolist()] == [_value_key(v) for v in x.tolist()]
            if got_counts is not None:
                assert int(got_counts.sum()) == n

    check()
