"""One answer per call where the standard leaves it open or backends disagree, held on every backend.

Each rule is stated in its function's docstring; each test draws inputs with Hypothesis and compares
every backend (numpy, torch, jax, tensorflow through the ``backend`` fixture, and dask where the rule is
generic) with a reference computed here: the NaN order of sort/argsort/searchsorted (-0.0, +0.0 and
+-inf drawn), integer input to mean/var/std, bool arithmetic, unsigned promotion and trace's
accumulation, sizes beyond 64-bit addressing (in a subprocess, so a backend's abort fails the test),
reshape/matmul/tensordot/vecdot shape refusals naming the shapes, and a precision scope left in
another context.
"""

from __future__ import annotations

import contextvars
import math
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close
from unarray import _backends
from unarray._dtypes import canonical_name, promote_names

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
ROOT = Path(__file__).resolve().parents[2]


class DaskBackend(TestBackend):
    """dask arrays in two-element chunks, read back computed."""

    def asarray(self, a: Any) -> Any:
        import dask.array

        da: Any = dask.array
        a = np.asarray(a)
        return da.from_array(a.copy(), chunks=2 if a.ndim else ())

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x.compute() if hasattr(x, "compute") else x)


@pytest.fixture
def dask_backend() -> TestBackend:
    da = pytest.importorskip("dask.array")

    return DaskBackend("dask", "dask", "cpu", da)


SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.5]
values = st.lists(st.one_of(st.sampled_from(SPECIAL), st.floats(-4, 4, width=32)), min_size=1, max_size=12)


def _key(v: float) -> tuple[bool, float]:
    # The rule's total order: NaN after +inf; -0.0 == +0.0 (Python's sort is stable).
    return (math.isnan(v), 0.0 if math.isnan(v) else v)


def _argsort_ref(v: list[float], descending: bool) -> list[int]:
    return sorted(range(len(v)), key=lambda i: _key(v[i]), reverse=descending)


def _search_ref(x1: list[float], v: float, side: str) -> int:
    k = _key(v)
    return sum(1 for a in x1 if (_key(a) < k if side == "left" else _key(a) <= k))


# -- 1. NaN order --------------------------------------------------------------------------------------


def _check_order(b: TestBackend, v: list[float], descending: bool) -> None:
    x = np.array(v, np.float32)
    ref = _argsort_ref(v, descending)
    got = b.to_numpy(ua.argsort(b.asarray(x), descending=descending, stable=True))
    assert got.tolist() == ref, (v, descending)
    s = b.to_numpy(ua.sort(b.asarray(x), descending=descending))
    # The values in order and NaN placement; equal zeros of either sign may come in either order (sort's docstring).
    np.testing.assert_array_equal(s, x[ref])


def _check_search(b: TestBackend, v: list[float], q: list[float], side: Any) -> None:
    x1 = [v[i] for i in _argsort_ref(v, False)]
    got = b.to_numpy(ua.searchsorted(b.asarray(np.array(x1, np.float32)), b.asarray(np.array(q, np.float32)),
                                     side=side))
    assert got.tolist() == [_search_ref(x1, a, side) for a in q], (x1, q, side)


@SETTINGS
@given(v=values, descending=st.booleans())
def test_sort_puts_nan_last_ascending_and_first_descending(backend: TestBackend, v: list[float],
                                                           descending: bool) -> None:
    _check_order(backend, v, descending)


@SETTINGS
@given(v=values, descending=st.booleans())
def test_sort_nan_order_on_dask(dask_backend: TestBackend, v: list[float], descending: bool) -> None:
    _check_order(dask_backend, v, descending)


@SETTINGS
@given(v=values, q=values, side=st.sampled_from(["left", "right"]))
def test_searchsorted_searches_the_sort_order(backend: TestBackend, v: list[float], q: list[float],
                                              side: str) -> None:
    _check_search(backend, v, q, side)


@SETTINGS
@given(v=values, q=values, side=st.sampled_from(["left", "right"]))
def test_searchsorted_order_on_dask(dask_backend: TestBackend, v: list[float], q: list[float], side: str) -> None:
    _check_search(dask_backend, v, q, side)


def test_searchsorted_reported_cases(backend: TestBackend) -> None:
    a = backend.asarray(np.array([0.0, 1.0, math.nan], np.float32))
    q = backend.asarray(np.array([math.inf, math.nan, 2.0], np.float32))
    assert backend.to_numpy(ua.searchsorted(a, q)).tolist() == [2, 2, 2]
    one = backend.asarray(np.array([0.5], np.float32))
    assert backend.to_numpy(ua.searchsorted(one, backend.asarray(np.array([math.nan], np.float32)))).tolist() == [1]


# -- 2. integer input to mean/var/std ------------------------------------------------------------------

INT_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _available(b: TestBackend, name: str) -> bool:
    return b.has_float64 or name not in ("int64", "uint64", "float64", "complex128")


def _default_float(b: TestBackend) -> str:
    return _backends.get(b.name).default_dtype_names(b.ua_device)["real floating"]


@SETTINGS
@given(dtype=st.sampled_from(INT_DTYPES), n=st.integers(1, 9), op=st.sampled_from(["mean", "var", "std"]),
       seed=st.integers(0, 2**32 - 1))
def test_integer_mean_var_std_give_the_default_floating_dtype(backend: TestBackend, dtype: str, n: int, op: str,
                                                              seed: int) -> None:
    if not _available(backend, dtype):
        return
    rng = np.random.default_rng(seed)
    x = (rng.integers(0, 2, n) if dtype == "bool" else rng.integers(1, 100, n)).astype(dtype)
    out = getattr(ua, op)(backend.asarray(x))
    want = _default_float(backend)
    assert canonical_name(out.dtype) == want, (out.dtype, want)
    assert_close(backend.to_numpy(out), getattr(np, op)(x.astype(np.float64)), want, n_terms=n)


# -- 3. bool arithmetic ------------------------------------------------------------------------------------


@SETTINGS
@given(a=st.lists(st.booleans(), min_size=1, max_size=6), data=st.data())
def test_bool_add_is_or_multiply_is_and_subtract_refused(backend: TestBackend, a: list[bool], data: Any) -> None:
    bv = data.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a)))
    x, y = np.array(a), np.array(bv)
    for op, ref in (("add", np.logical_or), ("multiply", np.logical_and)):
        out = getattr(ua, op)(backend.asarray(x), backend.asarray(y))
        assert ua.isdtype(out.dtype, "bool"), (op, out.dtype)
        np.testing.assert_array_equal(backend.to_numpy(out), ref(x, y))
    with pytest.raises(ua.DTypeError, match="logical_xor"):
        ua.subtract(backend.asarray(x), backend.asarray(y))
    with pytest.raises(ua.DTypeError):
        ua.subtract(backend.asarray(x), True)


# -- 4. unsigned promotion, trace's accumulation ---------------------------------------------------------

NUMERIC = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float32"]
PAIRS = [(a, b) for a in NUMERIC for b in NUMERIC if promote_names(a, b) is not None]


@SETTINGS
@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**32 - 1))
def test_promotion_of_every_unsigned_pair(backend: TestBackend, pair: tuple[str, str], seed: int) -> None:
    a, b = pair
    want = promote_names(a, b)
    if not all(_available(backend, d) for d in (a, b, want or "")):
        return
    rng = np.random.default_rng(seed)
    x, y = rng.integers(1, 100, 3).astype(a), rng.integers(1, 100, 3).astype(b)
    xa, ya = backend.asarray(x), backend.asarray(y)
    assert canonical_name(ua.result_type(xa, ya)) == canonical_name(ua.result_type(getattr(ua, a), getattr(ua, b)))
    assert canonical_name(ua.result_type(xa, ya)) == want
    for op in ("add", "multiply", "maximum"):
        out = getattr(ua, op)(xa, ya)
        assert canonical_name(out.dtype) == want, (op, out.dtype)
        np.testing.assert_array_equal(backend.to_numpy(out), getattr(np, op)(x.astype(want), y.astype(want)))


@SETTINGS
@given(dtype=st.sampled_from(INT_DTYPES[1:]), n=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_trace_accumulates_as_sum(backend: TestBackend, dtype: str, n: int, seed: int) -> None:
    if not _available(backend, dtype):
        return
    x = np.random.default_rng(seed).integers(1, 100, (n, n)).astype(dtype)
    t, s = ua.linalg.trace(backend.asarray(x)), ua.sum(ua.linalg.diagonal(backend.asarray(x)))
    assert t.dtype == s.dtype, (t.dtype, s.dtype)
    assert int(backend.to_numpy(t)) == int(np.trace(x.astype(np.int64)))


# -- 5. sizes beyond 64-bit addressing ---------------------------------------------------------------------

_HUGE = textwrap.dedent("""
    import sys
    import unarray as ua
    name = sys.argv[1]
    if name == "jax":
        import jax
    elif name != "numpy":
        __import__(name)
    H = (2**31, 2**31)
    calls = [
        lambda: ua.empty(H, backend=name), lambda: ua.zeros(H, backend=name), lambda: ua.ones(H, backend=name),
        lambda: ua.full(H, 1.5, backend=name), lambda: ua.eye(2**32, backend=name),
        lambda: ua.ones((2**61,), dtype=ua.float32, backend=name), lambda: ua.arange(0, 2**62, 0.5, backend=name),
        lambda: ua.linspace(0, 1, 2**62, backend=name),
        lambda: ua.broadcast_to(ua.ones((1,), backend=name), H),
        lambda: ua.reshape(ua.ones((6,), backend=name), (2**40, 2**40)),
    ]
    for call in calls:
        try:
            call()
            print("none")
        except ua.ShapeError as e:
            print(type(e).__name__, isinstance(e, MemoryError))
""")


def test_sizes_beyond_addressing_are_refused_before_the_backend(backend: TestBackend) -> None:
    # Note: a subprocess, so a backend that aborts the process fails this test instead of ending pytest.
    r = subprocess.run([sys.executable, "-c", _HUGE, backend.name], capture_output=True, text=True, cwd=ROOT,
                       timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.split()
    assert lines == ["ArraySizeError", "True"] * 9 + ["ShapeError", "False"], r.stdout


def test_zeros_like_of_a_lazy_huge_array_is_refused(dask_backend: TestBackend) -> None:
    x = ua.broadcast_to(dask_backend.asarray(np.ones(1, np.float32)), (2**30, 2**30))
    with pytest.raises(ua.ArraySizeError):
        ua.zeros_like(x, dtype=ua.complex128)


# -- 6, 7. shape refusals naming the shapes ------------------------------------------------------------


@st.composite
def bad_reshapes(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    size = math.prod(shape)
    kind = draw(st.sampled_from(["zero_and_unknown", "two_unknown", "negative", "mismatch"]))
    if kind == "zero_and_unknown":
        return shape, (0, -1)
    if kind == "two_unknown":
        return shape, (-1, -1)
    if kind == "negative":
        return shape, (draw(st.integers(-5, -2)), max(size, 1))
    return shape, (size + draw(st.integers(1, 5)),)


@SETTINGS
@given(case=bad_reshapes())
def test_reshape_refusals_name_both_shapes(backend: TestBackend, case: tuple[tuple[int, ...], tuple[int, ...]]
                                           ) -> None:
    shape, new = case
    x = backend.asarray(np.arange(1, math.prod(shape) + 1, dtype=np.float32).reshape(shape))
    with pytest.raises(ua.ShapeError) as e:
        ua.reshape(x, new)
    assert str(shape) in str(e.value) and str(new) in str(e.value), str(e.value)


@SETTINGS
@given(m=st.integers(1, 3), k=st.integers(1, 4), d=st.integers(1, 3), n=st.integers(1, 3))
def test_matmul_tensordot_vecdot_mismatches_name_both_shapes(backend: TestBackend, m: int, k: int, d: int,
                                                             n: int) -> None:
    _check_mismatch(backend, m, k, d, n)


@SETTINGS
@given(m=st.integers(1, 3), k=st.integers(1, 4), d=st.integers(1, 3), n=st.integers(1, 3))
def test_mismatches_name_both_shapes_on_dask(dask_backend: TestBackend, m: int, k: int, d: int, n: int) -> None:
    _check_mismatch(dask_backend, m, k, d, n)


def _check_mismatch(b: TestBackend, m: int, k: int, d: int, n: int) -> None:
    rng = np.random.default_rng(m * 100 + k * 10 + d)
    x1 = b.asarray(rng.uniform(0.5, 2, (m, k)).astype(np.float32))
    x2 = b.asarray(rng.uniform(0.5, 2, (k + d, n)).astype(np.float32))
    calls: dict[str, Callable[[], Any]] = {
        "matmul": lambda: ua.matmul(x1, x2),
        "tensordot": lambda: ua.tensordot(x1, x2, axes=([1], [0])),
        "vecdot": lambda: ua.vecdot(x1, b.asarray(np.ones((m, k + d), np.float32))),
    }
    for op, call in calls.items():
        with pytest.raises(ua.ShapeError) as e:
            call()
        msg = str(e.value)
        other = (m, k + d) if op == "vecdot" else (k + d, n)
        assert f"ua.{op} [" in msg and str((m, k)) in msg and str(other) in msg, msg


# -- 8. a precision scope left in another context --------------------------------------------------------


def test_precision_scope_left_in_another_context_is_a_typed_error() -> None:
    before = ua.get_precision()
    scope = contextvars.copy_context().run(lambda: ua.precision("tf32").__enter__())
    with pytest.raises(ua.ArgumentError, match="another context") as e:
        scope.__exit__(None, None, None)
    assert isinstance(e.value, ValueError) and e.value.op == "precision"
    assert ua.get_precision() == before  # this context's policy is left as it was


# -- asarray of a Python number is an array, not a weak scalar -------------------------------------------------


@SETTINGS
@given(v=st.one_of(st.integers(-100, 100), st.floats(-4, 4, width=32)), n=st.integers(1, 4))
def test_asarray_of_a_number_promotes_as_an_array(backend: TestBackend, v: float, n: int) -> None:
    # The standard has no weak arrays: a 0-d array of the default dtype promotes fully (JAX's own asarray of a
    # Python number is weakly typed and promoted as a scalar would).
    kind = "integral" if isinstance(v, int) else "real floating"
    lead = "int8" if kind == "integral" else "float32"
    with ua.use(backend.name, device=backend.ua_device):
        s = ua.asarray(v)
    want = _backends.get(backend.name).default_dtype_names(backend.ua_device)[kind]
    assert canonical_name(s.dtype) == want
    x = backend.asarray(np.ones(n, lead))
    assert canonical_name(ua.result_type(x, s)) == canonical_name(ua.result_type(getattr(ua, lead), getattr(ua, want)))
    assert canonical_name(ua.add(x, s).dtype) == canonical_name(ua.result_type(x, s))


# -- repeat, searchsorted and linalg on the inputs the array-API test suite found refused -------------------------
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64", "int16", "float32"])
@SETTINGS
@given(data=st.data())
def test_repeat_of_every_dtype_with_and_without_an_axis(backend: TestBackend, dtype: str, data: Any) -> None:
    with ua.use(backend.name):
        if dtype not in ua.__array_namespace_info__().dtypes():
            pytest.skip(f"{backend.name} lists no {dtype} here")
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    a = np.random.default_rng(data.draw(st.integers(0, 2**16))).integers(1, 100, shape).astype(dtype)
    a.reshape(-1)[0] = np.iinfo(dtype).max if dtype.startswith("uint") else a.reshape(-1)[0]
    axis = data.draw(st.sampled_from([None, 0, -1]))
    n = a.size if axis is None else a.shape[axis]
    # (a lazy backend refuses counts given as an array: the output's shape would depend on its data)
    by_array = backend.name != "dask" and data.draw(st.booleans())
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), np.int64)
    repeats = backend.asarray(counts) if by_array else int(counts[0])
    got = backend.to_numpy(ua.repeat(backend.asarray(a), repeats, axis=axis))
    want = np.repeat(a, counts if by_array else int(counts[0]), axis=axis)
    assert got.dtype == want.dtype and np.array_equal(got, want), (a, repeats, axis, got, want)


@SETTINGS
@given(v=st.lists(st.floats(-4, 4, width=32), min_size=1, max_size=8),
       q=st.one_of(st.floats(-5, 5, width=32), st.integers(-5, 5)), side=st.sampled_from(["left", "right"]))
def test_searchsorted_of_a_python_scalar(backend: TestBackend, v: list[float], q: float, side: str) -> None:
    x1 = np.sort(np.array(v, np.float32))
    got = ua.searchsorted(backend.asarray(x1), q, side=side)
    assert backend.is_native(got) and tuple(got.shape) == ()
    assert int(backend.to_numpy(got)) == int(np.searchsorted(x1, np.float32(q), side=side)), (x1, q, side)


@pytest.mark.parametrize("stack", [(), (2,)])
@pytest.mark.parametrize("op", ["inv", "cholesky", "solve"])
def test_linalg_of_empty_matrices_gives_empty_results(backend: TestBackend, op: str, stack: tuple[int, ...]) -> None:
    a = backend.asarray(np.zeros((*stack, 0, 0), np.float32))
    args = (a, backend.asarray(np.zeros((*stack, 0, 3), np.float32))) if op == "solve" else (a,)
    got = getattr(ua.linalg, op)(*args)
    assert backend.is_native(got)
    out = backend.to_numpy(got)
    assert out.shape == ((*stack, 0, 3) if op == "solve" else (*stack, 0, 0)) and out.dtype == np.float32


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 3)])
def test_matrix_rank_of_empty_matrices_is_zero(backend: TestBackend, shape: tuple[int, ...]) -> None:
    got = ua.linalg.matrix_rank(backend.asarray(np.zeros(shape, np.float32)))
    out = backend.to_numpy(got)
    assert backend.is_native(got) and out.shape == shape[:-2] and out.dtype.kind == "i" and not out.any()


@SETTINGS
@given(n=st.integers(1, 40), d=st.floats(0.05, 20.0), own=st.booleans(),
       name=st.sampled_from(["float16", "bfloat16", "float32", "float64"]),
       op=st.sampled_from(["fft.fftfreq", "fft.rfftfreq", "linspace", "arange"]))
def test_creation_without_an_array_takes_its_dtype_as_any_library_spells_it(backend: TestBackend, n: int, d: float,
                                                                            name: str, own: bool, op: str) -> None:
    """fftfreq, rfftfreq, linspace and arange with ``dtype=`` (unarray's, or the library's own object as its
    namespace hands it out) and ``device=`` give that dtype there, with NumPy's float64 values."""
    # (float16 and bfloat16 are extensions, which holds does not list)
    assume(backend.holds(name) or name == "float16" or (name == "bfloat16" and backend.has_bfloat16))
    x = backend.asarray(np.ones(1, np.float32))
    xp = ua.array_namespace(x)
    kw, ref = {"dtype": getattr(xp if own else ua, name), "device": ua.device(x)}, {
        "fft.fftfreq": lambda: np.fft.fftfreq(n, d), "fft.rfftfreq": lambda: np.fft.rfftfreq(n, d),
        "linspace": lambda: np.linspace(0.0, d, n), "arange": lambda: np.arange(n, dtype=np.float64)}[op]()
    r = {"fft.fftfreq": lambda: ua.fft.fftfreq(n, d=d, **kw), "fft.rfftfreq": lambda: ua.fft.rfftfreq(n, d=d, **kw),
         "linspace": lambda: ua.linspace(0.0, d, n, **kw), "arange": lambda: ua.arange(n, **kw)}[op]()
    assert backend.is_native(r) and r.dtype == getattr(xp, name) and ua.device(r) == ua.device(x), (op, r.dtype)
    assert_close(backend.to_numpy(ua.astype(r, ua.float32) if name == "bfloat16" else r), ref, name,
                 scale=float(np.abs(ref).max(initial=1.0)))
