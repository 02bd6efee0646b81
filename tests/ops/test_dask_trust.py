"""The dask backend answers what NumPy answers, lazily: float16, take without an axis, take_along_axis, linear
algebra on stacks of matrices (per matrix), searchsorted with a sorter, empty eyes, and the elementwise
corrections NumPy's backend applies (run per chunk). Every op is built under a scheduler that raises, so
nothing computes before the test's own compute; results are compared with a float64 NumPy reference.
``take`` without an axis is checked on every backend of the fixture too. (A NaN in one shard of a sharded JAX
array: tests/ops/test_sharded_jax.py, property ``nan_reductions``.)"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import unarray as ua  # noqa: E402
from tests._support import TestBackend, assert_close  # noqa: E402
from unarray._backends import get as _get_backend  # noqa: E402

_SETTINGS = settings(max_examples=20, deadline=None)


class Computed(RuntimeError):
    pass


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise Computed("the graph was computed")


def _lazy(build: Callable[[], Any]) -> Any:
    """``build()`` under a scheduler that raises: it must return dask arrays (or tuples of them) only."""
    with dask.config.set(scheduler=_refuse):
        out = build()
        for part in out if isinstance(out, tuple) else (out,):
            assert isinstance(part, da.Array), type(part)
        with pytest.raises(Computed):  # the scheduler really refuses: the check above is not vacuous
            (out[0] if isinstance(out, tuple) else out).compute()
    return out


def _np(x: Any) -> np.ndarray:
    out: np.ndarray = np.asarray(x.compute(scheduler="sync"))
    return out


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    # Never zeros: values in [0.5, 2) with random signs.
    return (rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(dtype)


def _chunks(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(draw(st.integers(1, max(n, 1))) for n in shape)


# -- float16 -------------------------------------------------------------------------------------------------
@_SETTINGS
@given(data=st.data())
def test_float16_casts_creation_and_ops_match_numpy(data: Any) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 40), min_size=1, max_size=2)))
    a = _values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), shape)
    x = ua.to(a, "dask", chunks=_chunks(data.draw, shape))
    h = _lazy(lambda: ua.astype(x, ua.float16))
    assert h.dtype == np.float16
    np.testing.assert_array_equal(_np(h), a.astype(np.float16))
    a16 = a.astype(np.float16).astype(np.float64)
    z = _lazy(lambda: ua.zeros(shape, dtype=ua.float16, backend="dask"))
    assert z.dtype == np.float16 and np.array_equal(_np(z), np.zeros(shape, np.float16))
    n = a.size
    for got, want, k in [(_lazy(lambda: ua.mean(h)), a16.mean(), n), (_lazy(lambda: ua.sum(h, axis=0)), a16.sum(0),
                                                                       shape[0]),
                         (_lazy(lambda: ua.exp(h)), np.exp(a16), 1), (_lazy(lambda: ua.add(h, h)), a16 + a16, 1)]:
        assert got.dtype == np.float16
        assert_close(_np(got), want, "float16", n_terms=k, scale=2.0 * k)


# -- take without axis: every backend -------------------------------------------------------------------------
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_take_without_axis_of_a_1d_array_is_axis_0_everywhere(backend: TestBackend, data: Any) -> None:
    n = data.draw(st.integers(1, 9))
    a = _values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), (n,), "float32")
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6)), dtype=np.int32)
    out = ua.take(backend.asarray(a), backend.asarray(idx))
    assert backend.is_native(out)
    np.testing.assert_array_equal(backend.to_numpy(out), a[idx])


def test_take_without_axis_of_an_nd_array_is_a_typed_error(backend: TestBackend) -> None:
    # NumPy and JAX would flatten x; the standard requires axis where x has more than one dimension.
    x = backend.asarray(np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3))
    with pytest.raises(ua.ArgumentError) as e:
        ua.take(x, backend.asarray(np.array([0], np.int32)))
    assert e.value.op == "take" and e.value.backend == backend.name and "axis=" in str(e.value)


@_SETTINGS
@given(data=st.data(), lazy_indices=st.booleans())
def test_dask_take_without_axis_is_lazy_and_matches_numpy(data: Any, lazy_indices: bool) -> None:
    n = data.draw(st.integers(1, 12))
    a = _values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), (n,))
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=8)))
    x = ua.to(a, "dask", chunks=data.draw(st.integers(1, n)))
    i = ua.to(idx, "dask", chunks=data.draw(st.integers(1, idx.size))) if lazy_indices else idx
    np.testing.assert_array_equal(_np(_lazy(lambda: ua.take(x, i))), a[idx])
    with pytest.raises(ua.ArgumentError):
        ua.take(ua.to(a.reshape(1, n), "dask"), i)


# -- take_along_axis --------------------------------------------------------------------------------------------
@_SETTINGS
@given(data=st.data())
def test_take_along_axis_is_lazy_and_matches_numpy(data: Any) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = _values(rng, shape)
    # indices: any length along axis, and 1 (broadcast) or x's size along the others
    ishape = tuple(data.draw(st.integers(1, 5)) if d == axis % nd else data.draw(st.sampled_from([1, n]))
                   for d, n in enumerate(shape))
    idx = rng.integers(-shape[axis], shape[axis], ishape)
    x = ua.to(a, "dask", chunks=_chunks(data.draw, shape))
    i = ua.to(idx, "dask", chunks=_chunks(data.draw, ishape))
    out = _lazy(lambda: ua.take_along_axis(x, i, axis=axis))
    ax = axis % nd
    other = np.broadcast_shapes(*(tuple(1 if d == ax else n for d, n in enumerate(sh)) for sh in (shape, ishape)))
    want = np.take_along_axis(np.broadcast_to(a, other[:ax] + (shape[ax],) + other[ax + 1:]),
                              np.broadcast_to(idx, other[:ax] + (ishape[ax],) + other[ax + 1:]), axis=axis)
    np.testing.assert_array_equal(_np(out), want)


# -- linalg on stacks, per matrix ----------------------------------------------------------------------------
def _matrix_stack(data: Any, square: bool = True) -> tuple[np.ndarray, Any]:
    batch = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    m = data.draw(st.integers(1, 5))
    n = m if square else data.draw(st.integers(1, 5))
    a = _values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), (*batch, m, n))
    if square:  # well conditioned: diagonally dominant
        a = a + 2 * max(m, 1) * np.eye(m)
    return a, ua.to(a, "dask", chunks=_chunks(data.draw, a.shape))


def _close(got: Any, want: Any, n: int, scale: float = 1.0) -> None:
    assert_close(_np(got), np.asarray(want, np.float64), "float64", n_terms=n * n, scale=scale)


_SQUARE: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], Any]]] = {
    "det": (ua.linalg.det, np.linalg.det),
    "inv": (ua.linalg.inv, np.linalg.inv),
    "eigvalsh": (lambda x: ua.linalg.eigvalsh(x + ua.matrix_transpose(x)),
                 lambda a: np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2))),
    "matrix_power 3": (lambda x: ua.linalg.matrix_power(x, 3), lambda a: np.linalg.matrix_power(a, 3)),
    "matrix_power -2": (lambda x: ua.linalg.matrix_power(x, -2), lambda a: np.linalg.matrix_power(a, -2)),
    "slogdet.logabsdet": (lambda x: ua.linalg.slogdet(x).logabsdet, lambda a: np.linalg.slogdet(a)[1]),
    "slogdet.sign": (lambda x: ua.linalg.slogdet(x).sign, lambda a: np.linalg.slogdet(a)[0]),
    "solve": (lambda x: ua.linalg.solve(x, x[..., :1] * 3.0), lambda a: np.linalg.solve(a, a[..., :1] * 3.0)),
    "cholesky": (lambda x: ua.linalg.cholesky(ua.matmul(x, ua.matrix_transpose(x))),
                 lambda a: np.linalg.cholesky(a @ np.swapaxes(a, -1, -2))),
    "eigvals (sorted)": (lambda x: ua.sort(ua.real(ua.linalg.eigvals(x + ua.matrix_transpose(x))), axis=-1),
                         lambda a: np.sort(np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2)), axis=-1)),
}
_ANY: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], Any]]] = {
    "svdvals": (ua.linalg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False)),
    "svd.S": (lambda x: ua.linalg.svd(x).S, lambda a: np.linalg.svd(a, compute_uv=False)),
    "pinv": (ua.linalg.pinv, np.linalg.pinv),
    "matrix_rank": (ua.linalg.matrix_rank, np.linalg.matrix_rank),
    "matrix_norm nuc": (lambda x: ua.linalg.matrix_norm(x, ord="nuc", keepdims=True),
                        lambda a: np.linalg.matrix_norm(a, ord="nuc", keepdims=True)),
}


@pytest.mark.parametrize("name", sorted(_SQUARE))
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_square_matrix_ops_on_stacks_match_numpy(name: str, data: Any) -> None:
    a, x = _matrix_stack(data)
    fn, ref = _SQUARE[name]
    out = _lazy(lambda: fn(x))
    m = a.shape[-1]
    with np.errstate(all="ignore"):
        want = ref(a)
    scale = float(np.abs(want).max(initial=1.0))
    _close(out, want, m, scale=max(scale, 1.0))


@pytest.mark.parametrize("name", sorted(_ANY))
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_matrix_ops_on_stacks_match_numpy(name: str, data: Any) -> None:
    a, x = _matrix_stack(data, square=data.draw(st.booleans()))
    fn, ref = _ANY[name]
    out = _lazy(lambda: fn(x))
    want = ref(a)
    if name == "matrix_rank":
        np.testing.assert_array_equal(_np(out), want)
    else:
        _close(out, want, max(a.shape[-2:]), scale=float(np.abs(want).max(initial=1.0)))


@settings(max_examples=10, deadline=None)
@given(data=st.data(), full=st.booleans())
def test_factorizations_on_stacks_reconstruct_the_input(data: Any, full: bool) -> None:
    a, x = _matrix_stack(data, square=data.draw(st.booleans()))
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vh = _lazy(lambda: tuple(ua.linalg.svd(x, full_matrices=full)))
    assert u.shape[-2:] == ((m, m) if full else (m, k)) and vh.shape[-2:] == ((n, n) if full else (k, n))
    uu, ss, vv = _np(u), _np(s), _np(vh)
    _close(da.from_array(uu[..., :k] * ss[..., None, :] @ vv[..., :k, :]), a, max(m, n), scale=4.0 * max(m, n))
    q, r = _lazy(lambda: tuple(ua.linalg.qr(x, mode="complete" if full else "reduced")))
    _close(da.from_array(_np(q) @ _np(r)), a, max(m, n), scale=4.0 * max(m, n))
    if m == n:
        sym = a + np.swapaxes(a, -1, -2)
        w, v = _lazy(lambda: tuple(ua.linalg.eigh(x + ua.matrix_transpose(x))))
        ww, vv2 = _np(w), _np(v)
        _close(da.from_array(vv2 * ww[..., None, :] @ np.swapaxes(vv2, -1, -2)), sym, m, scale=8.0 * m * m)


@_SETTINGS
@given(data=st.data())
def test_cross_over_any_axis_matches_numpy(data: Any) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    nd = data.draw(st.integers(1, 3))
    axis = data.draw(st.integers(-nd, -1))
    shape = [data.draw(st.integers(1, 4)) for _ in range(nd)]
    shape[axis] = 3
    a, b = _values(rng, tuple(shape)), _values(rng, tuple(shape))
    x = ua.to(a, "dask", chunks=_chunks(data.draw, a.shape))
    y = ua.to(b, "dask", chunks=_chunks(data.draw, b.shape))
    _close(_lazy(lambda: ua.linalg.cross(x, y, axis=axis)), np.linalg.cross(a, b, axis=axis), 2, scale=8.0)


def test_linalg_on_non_square_input_is_a_typed_error_before_any_compute() -> None:
    x = ua.to(np.ones((2, 3, 4)), "dask")
    with dask.config.set(scheduler=_refuse):
        for fn in (ua.linalg.det, ua.linalg.inv, ua.linalg.eigh):
            with pytest.raises(ua.ShapeError) as e:
                fn(x)
            assert e.value.backend == "dask" and "square" in str(e.value)


# -- searchsorted with a sorter, eye ----------------------------------------------------------------------------
@_SETTINGS
@given(data=st.data(), side=st.sampled_from(["left", "right"]))
def test_searchsorted_with_a_sorter_matches_numpy(data: Any, side: Any) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = data.draw(st.integers(1, 10))
    a = rng.integers(-5, 5, n).astype(np.float64) + 0.5
    v = rng.integers(-6, 6, data.draw(st.integers(1, 6))).astype(np.float64)
    order = np.argsort(a, kind="stable")
    x, s = ua.to(a, "dask", chunks=data.draw(st.integers(1, n))), ua.to(order, "dask", chunks=data.draw(
        st.integers(1, n)))
    out = _lazy(lambda: ua.searchsorted(x, ua.to(v, "dask"), side=side, sorter=s))
    np.testing.assert_array_equal(_np(out), np.searchsorted(a, v, side=side, sorter=order))


@_SETTINGS
@given(rows=st.integers(0, 5), cols=st.one_of(st.none(), st.integers(0, 5)), k=st.integers(-6, 6))
def test_eye_of_any_size_and_diagonal_matches_numpy(rows: int, cols: int | None, k: int) -> None:
    out = _lazy(lambda: ua.eye(rows, cols, k=k, backend="dask"))
    np.testing.assert_array_equal(_np(out), np.eye(rows, cols, k=k))


# -- the NumPy backend's elementwise corrections hold per chunk -------------------------------------------------
def _complex_grid() -> np.ndarray:
    parts = [0.0, -0.0, 1e-10, -1.5, 2.0, math.inf, -math.inf, math.nan]
    return np.array([complex(r, i) for r in parts for i in parts], dtype=np.complex128)


# Inputs per corrected op, special cases included (every op NumPy's backend corrects must have one).
_FIX_INPUTS: dict[str, Callable[[], tuple[np.ndarray, ...]]] = {
    "expm1": lambda: (_complex_grid(),),
    "nextafter": lambda: (np.array([0.0, -0.0, 0.0, -0.0, 1.0, 1.0], np.float16),
                          np.array([-0.0, 0.0, 0.0, -0.0, 2.0, 1.0], np.float16)),
}


def test_every_numpy_correction_has_a_dask_check() -> None:
    assert set(_get_backend("numpy").elementwise_fixes) <= set(_FIX_INPUTS)


@pytest.mark.parametrize("op", sorted(_FIX_INPUTS))
@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_numpy_corrections_hold_on_dask_chunks(op: str, chunk: int) -> None:
    args = _FIX_INPUTS[op]()
    want = getattr(ua, op)(*args)
    lazy = tuple(ua.to(a, "dask", chunks=chunk) for a in args)
    got = _np(_lazy(lambda: getattr(ua, op)(*lazy)))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # NaN equal to NaN, signed zeros by value
    for part in (np.real, np.imag) if got.dtype.kind == "c" else (lambda t: t,):
        np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(want)))
    assert "per chunk" in ua.explain(op, *lazy).kernel


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with np.errstate(all="ignore"):
        yield
