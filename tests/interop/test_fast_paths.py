"""The per-call fast paths give the general path's answers.

Binary element-wise ops take a shortcut where both operands are arrays of one type (the front end reads the
per-type cache inline) and, on torch and JAX, where both have one dtype (torch's own kernel instead of
array-api-compat's promotion fix; JAX's without the uint32 promotion check). The properties draw operands of
one dtype and of two, 0-d or not, and Python scalars, and hold each backend's fast callable equal to its
general one, and every backend's result to a float64 NumPy reference with the standard's result dtype.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "less", "greater_equal", "equal"]
DTYPES = ["int8", "int16", "int32", "uint8", "float32", "float64"]
_COMPARISONS = {"less", "greater_equal", "equal"}


def _available(backend: TestBackend) -> list[str]:
    return [d for d in DTYPES if backend.has_float64 or d != "float64"]


@st.composite
def operands(draw: Any, dtypes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Two NumPy arrays of drawn dtypes of one kind (the same dtype half the time), each 0-d or of a broadcastable
    shape."""
    d1 = draw(st.sampled_from(dtypes))
    kin = [d for d in dtypes if d.startswith("float") == d1.startswith("float")]  # the standard mixes no kinds
    d2 = d1 if draw(st.booleans()) else draw(st.sampled_from(kin))
    n = draw(st.integers(1, 4))
    s1 = () if draw(st.integers(0, 3)) == 0 else (n,)
    s2 = () if draw(st.integers(0, 3)) == 0 else (n,)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)

    def values(d: str, shape: tuple[int, ...]) -> np.ndarray:
        if d.startswith("float"):
            return np.asarray(rng.standard_normal(shape) * 4, dtype=d)
        lo = 1 if d.startswith("uint") else -9
        return np.asarray(rng.integers(lo, 10, shape), dtype=d)

    a, b = values(d1, s1), values(d2, s2)
    b[b == 0] = 1  # divide stays finite
    return a, b


def _reference(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # Integer results in their own dtype (uint8 1 - 9 wraps alike everywhere); the rest in float64.
    dt = np.result_type(a.dtype, b.dtype)
    wide = dt if dt.kind in "iu" and op not in _COMPARISONS and op != "divide" else np.float64
    with np.errstate(all="ignore"):
        return np.asarray(getattr(np, op)(a.astype(wide), b.astype(wide)))


def _standard_dtype(op: str, a: np.ndarray, b: np.ndarray) -> str:
    if op in _COMPARISONS:
        return "bool"
    dt = np.result_type(a.dtype, b.dtype)  # NumPy 2 follows the standard for arrays, 0-d included
    if op == "divide" and dt.kind in "iu":
        return ""  # the standard leaves integer division's dtype to the library
    return dt.name


@pytest.mark.parametrize("op", BINARY)
def test_binary_ops_match_the_reference_on_one_and_two_dtypes(backend: TestBackend, op: str) -> None:
    @SETTINGS
    @given(operands(_available(backend)))
    def check(ab: tuple[np.ndarray, np.ndarray]) -> None:
        a, b = ab
        if backend.name == "jax" and not backend.has_float64 and np.result_type(a.dtype, b.dtype).itemsize > 4:
            return  # JAX without x64 has no 64-bit result to give
        out = getattr(ua, op)(backend.asarray(a), backend.asarray(b))
        assert ua.backend_of(out) == backend.name
        got = backend.to_numpy(out)
        want = _standard_dtype(op, a, b)
        if want:
            assert got.dtype.name == want, (op, a.dtype, a.shape, b.dtype, b.shape, got.dtype)
        ref = _reference(op, a, b)
        if op in _COMPARISONS:
            np.testing.assert_array_equal(got, ref.astype(bool))
        else:
            assert_close(got.astype(np.float64), ref, got.dtype.name if got.dtype.kind == "f" else "float64",
                         scale=1.0 + float(np.max(np.abs(ref), initial=0.0)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check()


def _general(backend: TestBackend, op: str) -> Any:
    """``op`` the general way: the leader rule of _dispatch.pair, then the callable the backend's fast one
    stands in for (array-api-compat's wrapper on torch, the promotion-checking wrapper on JAX)."""
    from unarray import _backends, _dispatch

    b = _backends.get(backend.name)
    if backend.name == "torch":
        native = getattr(b.xp, op)
        assert getattr(b, op) is not native  # torch's fast callable is not compat's wrapper
    elif backend.name == "jax":
        from unarray._backends.jax import backend as jax_backend

        native = jax_backend._guarded_any(getattr(b.xp, op), op)
    else:
        native = getattr(b, op)

    def call(x1: Any, x2: Any) -> Any:
        _, y1, y2 = _dispatch.pair(op, x1, x2)
        return native(y1, y2)

    return call


@pytest.mark.parametrize("op", BINARY)
def test_fast_binary_path_equals_the_general_one(backend: TestBackend, op: str) -> None:
    fast, general = getattr(ua, op), _general(backend, op)

    @SETTINGS
    @given(operands(_available(backend)), st.sampled_from([None, "x1", "x2"]))
    def check(ab: tuple[np.ndarray, np.ndarray], scalar: str | None) -> None:
        a, b = ab
        if backend.name == "jax" and not backend.has_float64 and np.result_type(a.dtype, b.dtype).itemsize > 4:
            return
        x1: Any = backend.asarray(a)
        x2: Any = backend.asarray(b)
        if scalar == "x1":
            x1 = a.reshape(-1)[0].item()
        elif scalar == "x2":
            x2 = b.reshape(-1)[0].item()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                want = general(x1, x2)
            except Exception:  # the general path refuses (torch: uint8 - 0-d int8, say): so must the fast one
                with pytest.raises(Exception):  # noqa: B017 - the front end's is the typed form of the native's
                    fast(x1, x2)
                return
            got = fast(x1, x2)
        assert type(got) is type(want)
        assert str(got.dtype) == str(want.dtype)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(backend.to_numpy(got), backend.to_numpy(want))

    check()


def test_same_type_call_reads_the_type_cache_inline() -> None:
    # The element-wise front end finds the backend of two arrays of one type without _dispatch.pair, and a
    # call of two types or with a Python scalar still goes through it (the leader rule, scalar checks).
    import inspect

    src = inspect.getsource(ua.add)
    assert "_BY_TYPE.get(type(x1))" in src and "_pair(" in src
    a = np.arange(3.0)
    assert ua.add(a, 1.0).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ua.ArgumentTypeError):
        ua.add(1.0, 2.0)


def test_torch_compile_traces_the_fast_paths_without_a_break() -> None:
    torch = pytest.importorskip("torch")

    def f(x: Any, y: Any, i: Any) -> Any:
        # one dtype (torch's kernel at once), two dtypes with a 0-d operand (compat's promotion fix), reductions
        s = ua.add(x, y) + ua.multiply(x, y) + ua.subtract(y, x) + ua.maximum(x, y)
        s = s + ua.astype(ua.less(x, y), x.dtype) + ua.add(i, x)
        return ua.matmul(s, ua.astype(y, s.dtype)) + ua.sum(s) + ua.mean(s) + ua.astype(ua.argmax(s), s.dtype)

    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(4, 4, generator=g), torch.randn(4, 4, generator=g)
    i = torch.tensor(2.0, dtype=torch.float64)
    want = f(x, y, i)
    got = torch.compile(f, fullgraph=True, backend="eager")(x, y, i)
    assert got.dtype == want.dtype == torch.float64  # the standard's promotion of a 0-d float64 with float32
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize(("d1", "d2"), [("float64", "float32"), ("float32", "float64"), ("int32", "int64"),
                                        ("float32", "int16")])
def test_torch_compile_traces_a_mixed_dtype_matmul(d1: str, d2: str) -> None:
    # torch.matmul refuses mixed dtypes; eagerly the refusal was caught and promoted, inside a trace it cannot be.
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(5)
    x = (torch.randn(3, 4, generator=g) * 4).to(getattr(torch, d1))
    y = (torch.randn(4, 2, generator=g) * 4).to(getattr(torch, d2))
    want = ua.matmul(x, y)
    got = torch.compile(lambda a, b: ua.matmul(a, b), fullgraph=True, backend="eager")(x, y)
    assert got.dtype == want.dtype == torch.promote_types(x.dtype, y.dtype)
    torch.testing.assert_close(got, want)
