"""Hypothesis properties of the hot ops on every backend, against a float64 NumPy reference.

Each op is drawn over shapes (including empty ones), every axis form (int,
negative int, tuple, ``()``, ``None``), ``keepdims`` and the dtypes the standard
allows. Results must be native arrays of the input's backend on the input's
device, with the dtype the standard specifies (or the backend's documented
deviation), and equal to the reference within a dtype-aware tolerance. Batched
ops must agree slice by slice with the op applied to each slice.
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

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
REAL = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
_WIDE = {"float64", "complex128", "int64", "uint64"}


# -- per-backend facts the tests hold the backends to ----------------------------------------------------------


def available(backend: TestBackend, names: list[str]) -> list[str]:
    """The dtypes of ``names`` that the backend can hold (JAX without x64 has no 64-bit types, MLX no complex128)."""
    return [n for n in names if (backend.has_float64 or n not in _WIDE) and backend.holds(n)]


def default_int(backend: TestBackend) -> str:
    return "int64" if backend.has_float64 else "int32"


def sum_dtype(backend: TestBackend, in_dtype: str) -> str:
    """The dtype of ``sum``/``prod``/``cumulative_*`` without ``dtype=`` (the standard's rule)."""
    if in_dtype in REAL or in_dtype in COMPLEX or in_dtype in ("float16", "bfloat16"):
        return in_dtype
    if in_dtype in UNSIGNED:
        if not backend.has_uint64_sum:
            # Documented deviation: torch has no uint64 sums, they come back int64.
            return "int64"
        return "u" + default_int(backend)
    return default_int(backend)


def index_dtype(backend: TestBackend) -> str:
    return default_int(backend)


def backend_dtype_name(x: Any) -> str:
    from unarray._dtypes import canonical_name

    name = canonical_name(x.dtype)
    assert name is not None, x.dtype
    return name


def check_native(backend: TestBackend, result: Any, x: Any) -> None:
    assert backend.is_native(result), type(result)
    assert ua.device(result) == ua.device(x)


# -- strategies ---------------------------------------------------------------------------------------------------


@st.composite
def shapes(draw: Any, min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 4) -> tuple:
    nd = draw(st.integers(min_dims, max_dims))
    return tuple(draw(st.integers(min_side, max_side)) for _ in range(nd))


@st.composite
def axes(draw: Any, ndim: int, allow_tuple: bool = True, allow_none: bool = True) -> Any:
    """An axis argument in any of the standard's forms: None, int (either sign), tuple (incl. ())."""
    kinds = ["int"] if ndim else []
    if allow_none:
        kinds.append("none")
    if allow_tuple:
        kinds.append("tuple")
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "int":
        a = draw(st.integers(0, ndim - 1))
        return a - ndim if draw(st.booleans()) else a
    picked = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)) if ndim else []
    return tuple(a - ndim if draw(st.booleans()) else a for a in picked)


def values(draw: Any, shape: tuple, dtype: str, *, small: bool = False) -> np.ndarray:
    """Non-zero values of ``dtype``; ``small`` keeps products and prods bounded."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    size = math.prod(shape)
    if dtype == "bool":
        return rng.integers(0, 2, size).astype(bool).reshape(shape)
    if dtype in UNSIGNED:
        hi = 3 if small else 100
        return rng.integers(1, hi, size).astype(dtype).reshape(shape)
    if dtype in SIGNED:
        hi = 3 if small else (50 if dtype == "int8" else 1000)
        mag = rng.integers(1, hi, size)
        sign = rng.choice([-1, 1], size)
        return (mag * sign).astype(dtype).reshape(shape)
    lo, hi = (0.5, 2.0) if small else (0.1, 10.0)
    mag = rng.uniform(lo, hi, size) * rng.choice([-1.0, 1.0], size)
    if dtype in COMPLEX:
        mag = mag + 1j * rng.uniform(lo, hi, size) * rng.choice([-1.0, 1.0], size)
    return mag.astype(dtype).reshape(shape)


@st.composite
def cases(draw: Any, dtypes: list[str], *, min_side: int = 0, small: bool = False, tuple_axes: bool = True,
          none_axis: bool = True, min_dims: int = 0) -> tuple[np.ndarray, Any, bool]:
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes(min_dims=min_dims, min_side=min_side, max_side=3 if small else 4))
    x = values(draw, shape, dtype, small=small)
    axis = draw(axes(len(shape), allow_tuple=tuple_axes, allow_none=none_axis))
    return x, axis, draw(st.booleans())


def n_reduced(shape: tuple, axis: Any) -> int:
    if axis is None:
        return math.prod(shape)
    ax = (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in ax)


def ref64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


# -- sum, prod ----------------------------------------------------------------------------------------------------


def _all_numeric(backend: TestBackend) -> list[str]:
    return available(backend, ["bool", *SIGNED, *UNSIGNED, *REAL, *COMPLEX])


@pytest.mark.parametrize("op", ["sum", "prod"])
def test_sum_prod(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(cases(_all_numeric(backend), small=(op == "prod")))
    def run(case: tuple) -> None:
        x, axis, keepdims = case
        xa = backend.asarray(x)
        r = getattr(ua, op)(xa, axis=axis, keepdims=keepdims)
        check_native(backend, r, xa)
        name = str(x.dtype)
        assert backend_dtype_name(r) == sum_dtype(backend, name)
        expected = getattr(np, op)(ref64(x), axis=axis, keepdims=keepdims)
        got = backend.to_numpy(r)
        if name in REAL or name in COMPLEX:
            n = n_reduced(x.shape, axis)
            scale = float(np.abs(x).max()) ** (n if op == "prod" else 1) * n if x.size else 1.0
            assert_close(got, expected, name, n, scale=scale)
        else:
            np.testing.assert_array_equal(got.astype(np.float64), expected)
            assert got.shape == expected.shape

    run()


@pytest.mark.parametrize("op", ["sum", "prod"])
def test_sum_prod_dtype_argument(backend: TestBackend, op: str) -> None:
    pairs = [("int8", "int32"), ("int16", "int16"), ("uint8", "uint8"), ("bool", "int32"), ("float32", "float32")]
    if backend.has_float64:
        pairs += [("float32", "float64"), ("int32", "float64"), ("complex64", "complex128")]
    pairs = [p for p in pairs if backend.holds(p[1])]

    @SETTINGS
    @given(st.sampled_from(pairs), st.data())
    def run(pair: tuple[str, str], data: Any) -> None:
        src, dst = pair
        x, axis, keepdims = data.draw(cases([src], small=True))
        xa = backend.asarray(x)
        r = getattr(ua, op)(xa, axis=axis, dtype=getattr(ua, dst), keepdims=keepdims)
        check_native(backend, r, xa)
        assert backend_dtype_name(r) == dst
        expected = getattr(np, op)(x.astype(dst), axis=axis, keepdims=keepdims)
        assert_close(backend.to_numpy(r), expected, dst, max(1, n_reduced(x.shape, axis)), scale=4.0 ** 27)

    run()


def test_sum_prod_empty(backend: TestBackend) -> None:
    for dtype in available(backend, ["int32", "float32", "bool", "complex64"]):
        x = backend.asarray(np.ones((0, 3), dtype=dtype))
        s = ua.sum(x, axis=0)
        p = ua.prod(x)
        assert backend_dtype_name(s) == sum_dtype(backend, dtype)
        np.testing.assert_array_equal(backend.to_numpy(s), np.zeros(3))
        np.testing.assert_array_equal(backend.to_numpy(p), np.asarray(1))
        assert backend.to_numpy(ua.sum(x, axis=1)).shape == (0,)


# -- mean, var, std -----------------------------------------------------------------------------------------------


def test_mean(backend: TestBackend) -> None:
    @SETTINGS
    @given(cases(available(backend, REAL + COMPLEX)))
    def run(case: tuple) -> None:
        x, axis, keepdims = case
        xa = backend.asarray(x)
        r = ua.mean(xa, axis=axis, keepdims=keepdims)
        check_native(backend, r, xa)
        assert backend_dtype_name(r) == str(x.dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = np.mean(ref64(x), axis=axis, keepdims=keepdims)
        n = n_reduced(x.shape, axis)
        assert_close(backend.to_numpy(r), expected, str(x.dtype), n, scale=10.0)

    run()


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(cases(available(backend, REAL)), st.sampled_from([0, 1, 0.5]))
    def run(case: tuple, correction: float) -> None:
        x, axis, keepdims = case
        xa = backend.asarray(x)
        r = getattr(ua, op)(xa, axis=axis, correction=correction, keepdims=keepdims)
        check_native(backend, r, xa)
        assert backend_dtype_name(r) == str(x.dtype)
        n = n_reduced(x.shape, axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = getattr(np, op)(ref64(x), axis=axis, correction=correction, keepdims=keepdims)
        if n - correction <= 0:
            # The standard: N - correction <= 0 gives NaN (numpy gives inf where the numerator is not 0).
            expected = np.full_like(expected, np.nan)
        assert_close(backend.to_numpy(r), expected, str(x.dtype), n, scale=100.0)

    run()


@pytest.mark.parametrize("op", ["mean", "var", "std"])
def test_mean_var_std_empty_is_nan(backend: TestBackend, op: str) -> None:
    x = backend.asarray(np.ones((0, 2), dtype=np.float32))
    r = getattr(ua, op)(x)
    check_native(backend, r, x)
    assert np.isnan(backend.to_numpy(r))
    r0 = getattr(ua, op)(x, axis=0)
    assert backend.to_numpy(r0).shape == (2,)
    assert np.isnan(backend.to_numpy(r0)).all()


# -- min, max, argmin, argmax ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["min", "max"])
def test_min_max(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(cases(available(backend, SIGNED + UNSIGNED + REAL), min_side=1))
    def run(case: tuple) -> None:
        x, axis, keepdims = case
        xa = backend.asarray(x)
        r = getattr(ua, op)(xa, axis=axis, keepdims=keepdims)
        check_native(backend, r, xa)
        assert backend_dtype_name(r) == str(x.dtype)
        expected = getattr(np, op)(x, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(backend.to_numpy(r), expected)

    run()


@pytest.mark.parametrize("op", ["min", "max", "sum", "prod", "mean", "var", "std", "cumulative_sum",
                                "cumulative_prod"])
def test_nan_propagates(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(cases(["float32"], min_side=1, min_dims=1, small=True, tuple_axes=op[0] != "c",
                 none_axis=op[0] != "c"), st.data())
    def run(case: tuple, data: Any) -> None:
        x, axis, _ = case
        flat = x.reshape(-1)
        flat[data.draw(st.integers(0, flat.size - 1))] = np.nan
        xa = backend.asarray(x)
        r = getattr(ua, op)(xa, axis=axis)
        if op.startswith("cumulative"):
            expected = getattr(np, op)(ref64(x), axis=axis)
        else:
            expected = getattr(np, op)(ref64(x), axis=axis)
        got = backend.to_numpy(r)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))

    run()


@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_argmin_argmax_first_occurrence(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(st.sampled_from(available(backend, ["int8", "uint8", "int32", "float32", "float64"])),
           shapes(min_side=1), st.data())
    def run(dtype: str, shape: tuple, data: Any) -> None:
        # Few distinct values, so ties are frequent: the first occurrence must win.
        rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1)))
        x = rng.integers(1, 4, shape).astype(dtype)
        axis = data.draw(axes(len(shape), allow_tuple=False))
        keepdims = data.draw(st.booleans()) if axis is not None else False
        xa = backend.asarray(x)
        r = getattr(ua, op)(xa, axis=axis, keepdims=keepdims)
        check_native(backend, r, xa)
        assert backend_dtype_name(r) == index_dtype(backend)
        expected = getattr(np, op)(x, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(backend.to_numpy(r), expected)

    run()


@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_argmin_argmax_nan(backend: TestBackend, op: str) -> None:
    # NaN counts as the extreme: the index of the first NaN.
    x = np.array([[1.0, np.nan, 3.0, np.nan], [5.0, 4.0, 6.0, -1.0], [np.nan, 0.0, 2.0, 9.0]], dtype=np.float32)
    xa = backend.asarray(x)
    np.testing.assert_array_equal(backend.to_numpy(getattr(ua, op)(xa, axis=1)), [1, 3 if op == "argmin" else 2, 0])
    np.testing.assert_array_equal(backend.to_numpy(getattr(ua, op)(xa, axis=-2)), getattr(np, op)(x, axis=0))
    assert int(backend.to_numpy(getattr(ua, op)(xa))) == 1


# -- any, all -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_all(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(cases(available(backend, ["bool", "int8", "uint8", "int32", "float32", "complex64"])), st.data())
    def run(case: tuple, data: Any) -> None:
        x, axis, keepdims = case
        if x.size and data.draw(st.booleans()):
            x.reshape(-1)[data.draw(st.integers(0, x.size - 1))] = 0
        xa = backend.asarray(x)
        r = getattr(ua, op)(xa, axis=axis, keepdims=keepdims)
        check_native(backend, r, xa)
        assert backend_dtype_name(r) == "bool"
        np.testing.assert_array_equal(backend.to_numpy(r), getattr(np, op)(x, axis=axis, keepdims=keepdims))

    run()


# -- cumulative_sum, cumulative_prod ----------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
def test_cumulative(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(cases(available(backend, ["bool", "int8", "int32", "uint8", *REAL, "complex64"]), min_dims=1,
                 small=True, tuple_axes=False, none_axis=False), st.booleans(), st.booleans())
    def run(case: tuple, include_initial: bool, none_for_1d: bool) -> None:
        x, axis, _ = case
        if x.ndim == 1 and none_for_1d:
            axis = None
        xa = backend.asarray(x)
        r = getattr(ua, op)(xa, axis=axis, include_initial=include_initial)
        check_native(backend, r, xa)
        name = str(x.dtype)
        assert backend_dtype_name(r) == sum_dtype(backend, name)
        expected = getattr(np, op)(ref64(x), axis=axis, include_initial=include_initial)
        n = x.shape[0 if axis is None else axis]
        assert_close(backend.to_numpy(r).astype(expected.dtype), expected,
                     name if name in REAL + COMPLEX else "float64", n, scale=4.0 ** n)

    run()


def test_cumulative_dtype_argument(backend: TestBackend) -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8)
    xa = backend.asarray(x)
    r = ua.cumulative_sum(xa, axis=-1, dtype=ua.int16)
    assert backend_dtype_name(r) == "int16"
    np.testing.assert_array_equal(backend.to_numpy(r), [[1, 3, 6], [4, 9, 15]])
    r = ua.cumulative_prod(xa, axis=0, dtype=ua.float32, include_initial=True)
    assert backend_dtype_name(r) == "float32"
    np.testing.assert_array_equal(backend.to_numpy(r), [[1, 1, 1], [1, 2, 3], [4, 10, 18]])


# -- matmul, matrix_transpose, permute_dims ---------------------------------------------------------------------------

# Promotion pairs of the standard's table (torch's missing uint16/32/64 matmul is filled in by unarray).
_MATMUL_PAIRS = [("uint16", "uint16"), ("uint32", "uint8"), ("uint16", "int32"), ("uint64", "uint64"),
                 ("int8", "int8"), ("int8", "int16"), ("uint8", "int8"), ("uint8", "uint8"), ("int32", "int64"),
                 ("int16", "int32"), ("float32", "float32"), ("float32", "float64"), ("float64", "float64"),
                 ("complex64", "complex64"), ("complex64", "complex128"), ("float32", "complex64")]


@st.composite
def matmul_shapes(draw: Any) -> tuple[tuple, tuple]:
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    if draw(st.booleans()):
        k = draw(st.integers(0, 4))  # also K == 0: the sum over nothing, zeros
    batch = draw(shapes(max_dims=2, min_side=1, max_side=3))
    b1 = tuple(1 if draw(st.booleans()) else s for s in batch)
    b2 = tuple(1 if draw(st.booleans()) else s for s in batch)
    b1 = b1[draw(st.integers(0, len(b1))):]
    b2 = b2[draw(st.integers(0, len(b2))):]
    s1 = (k,) if draw(st.integers(0, 3)) == 0 else (*b1, m, k)
    s2 = (k,) if draw(st.integers(0, 3)) == 0 else (*b2, k, n)
    return s1, s2


def test_matmul(backend: TestBackend) -> None:
    pairs = [p for p in _MATMUL_PAIRS if available(backend, list(p)) == list(p)]

    @SETTINGS
    @given(st.sampled_from(pairs), st.booleans(), matmul_shapes(), st.data())
    def run(pair: tuple[str, str], swap: bool, shp: tuple, data: Any) -> None:
        d1, d2 = pair[::-1] if swap else pair
        x1 = values(data.draw, shp[0], d1, small=True)
        x2 = values(data.draw, shp[1], d2, small=True)
        a, b = backend.asarray(x1), backend.asarray(x2)
        r = ua.matmul(a, b)
        check_native(backend, r, a)
        want = str(np.result_type(x1.dtype, x2.dtype))
        assert backend_dtype_name(r) == want
        expected = np.matmul(ref64(x1), ref64(x2))
        got = backend.to_numpy(r)
        if want in REAL or want in COMPLEX:
            assert_close(got, expected, want, shp[0][-1] or 1, scale=4.0 * max(1, shp[0][-1]))
        else:
            np.testing.assert_array_equal(got.astype(np.float64), expected)
            assert got.shape == expected.shape

    run()


def test_matmul_batch_consistency(backend: TestBackend) -> None:
    @SETTINGS
    @given(st.sampled_from(["float32", "int32"]), shapes(min_dims=1, max_dims=2, min_side=1, max_side=3),
           st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), st.data())
    def run(dtype: str, batch: tuple, m: int, k: int, n: int, data: Any) -> None:
        x1 = values(data.draw, (*batch, m, k), dtype, small=True)
        x2 = values(data.draw, (*batch, k, n), dtype, small=True)
        a, b = backend.asarray(x1), backend.asarray(x2)
        whole = backend.to_numpy(ua.matmul(a, b))
        for idx in np.ndindex(*batch):
            part = backend.to_numpy(ua.matmul(backend.asarray(x1[idx]), backend.asarray(x2[idx])))
            assert_close(whole[idx], part.astype(np.float64), dtype, k, scale=4.0 * k)

    run()


@pytest.mark.parametrize("op", ["sum", "mean", "max", "argmax", "std"])
def test_reduction_batch_consistency(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(cases(["float32"], min_dims=2, min_side=1, tuple_axes=False, none_axis=False), st.data())
    def run(case: tuple, data: Any) -> None:
        x, axis, keepdims = case
        axis = axis % x.ndim
        batch_axis = data.draw(st.sampled_from([a for a in range(x.ndim) if a != axis]))
        whole = backend.to_numpy(getattr(ua, op)(backend.asarray(x), axis=axis))
        for i in range(x.shape[batch_axis]):
            sl = np.take(x, i, axis=batch_axis)
            part = backend.to_numpy(getattr(ua, op)(backend.asarray(sl), axis=axis - (batch_axis < axis)))
            assert_close(np.take(whole, i, axis=batch_axis - (axis < batch_axis)), part.astype(np.float64),
                         "float32", x.shape[axis], scale=10.0)

    run()


def test_matrix_transpose(backend: TestBackend) -> None:
    @SETTINGS
    @given(shapes(min_dims=2, max_dims=4), st.sampled_from(available(backend, ["int16", "float32", "bool"])),
           st.data())
    def run(shape: tuple, dtype: str, data: Any) -> None:
        x = values(data.draw, shape, dtype)
        xa = backend.asarray(x)
        r = ua.matrix_transpose(xa)
        check_native(backend, r, xa)
        assert backend_dtype_name(r) == dtype
        np.testing.assert_array_equal(backend.to_numpy(r), np.swapaxes(x, -1, -2))

    run()


def test_permute_dims(backend: TestBackend) -> None:
    @SETTINGS
    @given(shapes(max_dims=4), st.sampled_from(available(backend, ["uint8", "float32", "complex64"])), st.data())
    def run(shape: tuple, dtype: str, data: Any) -> None:
        x = values(data.draw, shape, dtype)
        perm = tuple(data.draw(st.permutations(range(x.ndim))))
        if data.draw(st.booleans()):
            perm = tuple(p - x.ndim for p in perm)
        xa = backend.asarray(x)
        r = ua.permute_dims(xa, perm)
        check_native(backend, r, xa)
        assert backend_dtype_name(r) == dtype
        np.testing.assert_array_equal(backend.to_numpy(r), np.transpose(x, perm))

    run()


# -- documented deviations -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["sum", "prod", "cumulative_sum", "cumulative_prod"])
def test_unsigned_accumulation_is_the_default_unsigned_dtype(backend: TestBackend, op: str) -> None:
    """The standard accumulates unsigned input in the default unsigned integer (torch, which has no uint64
    accumulation, through int64 bits); values past 2**63 come back exact."""
    bits = 64 if backend.has_float64 else 32
    big = 2 ** (bits - 1) + 5
    x = backend.asarray(np.array([big, 3], dtype="u" + default_int(backend)))
    r = getattr(ua, op)(x)
    assert backend_dtype_name(r) == "u" + default_int(backend)
    want = {"sum": [big + 3], "prod": [(big * 3) % 2**bits], "cumulative_sum": [big, big + 3],
            "cumulative_prod": [big, (big * 3) % 2**bits]}[op]
    assert [int(v) for v in np.atleast_1d(backend.to_numpy(r))] == want


def test_torch_integer_contractions_without_integer_gemm(monkeypatch: pytest.MonkeyPatch) -> None:
    # cuBLAS has no integer GEMM; the exact fallback is forced here on the CPU and checked against NumPy.
    torch = pytest.importorskip("torch")
    from unarray._backends.torch import gaps

    monkeypatch.setattr(gaps, "no_int_gemm", gaps.is_int)
    rng = np.random.default_rng(7)
    a = rng.integers(-50, 50, (2, 3, 5)).astype(np.int32)
    b = rng.integers(-50, 50, (5, 4)).astype(np.int16)
    m = rng.integers(-3, 4, (3, 3)).astype(np.int64)
    ta, tb_, tm = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(m)
    np.testing.assert_array_equal(ua.tensordot(ta, tb_, axes=1).numpy(), np.tensordot(a, b, axes=1))
    np.testing.assert_array_equal(ua.vecdot(ta, ta).numpy(), np.sum(a * a, axis=-1))
    np.testing.assert_array_equal(ua.linalg.matrix_power(tm, 5).numpy(), np.linalg.matrix_power(m, 5))
    got = gaps._int_matmul(ta.to(torch.int64), torch.from_numpy(b.astype(np.int64)))
    np.testing.assert_array_equal(got.numpy(), a.astype(np.int64) @ b.astype(np.int64))
