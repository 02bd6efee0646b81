"""dask.array as a backend: every op stays lazy (a scheduler that raises proves it), chunked results equal a
float64 NumPy reference (Hypothesis draws shapes, chunks and values), var/std stay stable across chunks,
attention runs as a blocked online softmax over key chunks, dask operands lead mixed calls, and ``ua.to``
wraps, rechunks and computes (counted) as documented. Runs on the threaded and the distributed local
schedulers. With ``--devices gpu`` the tests taking the ``cuda`` fixture (a CPU run deselects them) run the same
on dask arrays of CuPy chunks."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import unarray as ua  # noqa: E402
from tests._support import assert_close  # noqa: E402
from unarray import _dispatch  # noqa: E402

_SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)


class Computed(RuntimeError):
    pass


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise Computed("the graph was computed")


@pytest.fixture
def refusing() -> Iterator[None]:
    """Any compute inside the block raises: the ops under test build graphs only."""
    with dask.config.set(scheduler=_refuse):
        yield


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    # Never zeros: values in [0.5, 2) with random signs.
    v = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    return v.astype(dtype)


def _chunks(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(draw(st.integers(1, max(n, 1))) for n in shape)


@st.composite
def _chunked(draw: Any, ndim: tuple[int, int] = (1, 3), dtype: str = "float64") -> tuple[np.ndarray, Any]:
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=ndim[0], max_size=ndim[1])))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = _values(rng, shape, dtype)
    return a, ua.to(a, "dask", chunks=_chunks(draw, shape))


def _axes(draw: Any, ndim: int) -> tuple[int, ...] | None:
    picked = draw(st.lists(st.integers(-ndim, ndim - 1), unique_by=lambda i: i % ndim, max_size=ndim))
    return None if draw(st.booleans()) else tuple(picked)


def _np(x: Any) -> np.ndarray:
    return np.asarray(x.compute() if isinstance(x, da.Array) else x)


# -- laziness: every supported op builds a graph and computes nothing ------------------------------------
_A = np.linspace(0.5, 3.0, 24).reshape(4, 6)
_B = np.linspace(-1.0, 2.0, 18).reshape(6, 3)
LAZY_OPS: dict[str, tuple[Callable[[Any, Any], Any], Callable[[np.ndarray, np.ndarray], Any]]] = {
    "add": (lambda x, y: ua.add(x, 1.5), lambda a, b: a + 1.5),
    "exp": (lambda x, y: ua.exp(x), lambda a, b: np.exp(a)),
    "multiply_mixed_numpy_first": (lambda x, y: ua.multiply(_A, x), lambda a, b: a * a),
    "matmul": (lambda x, y: ua.matmul(x, y), lambda a, b: a @ b),
    "tensordot": (lambda x, y: ua.tensordot(x, y, axes=1), lambda a, b: a @ b),
    "vecdot": (lambda x, y: ua.vecdot(x, x), lambda a, b: (a * a).sum(-1)),
    "sum_axes": (lambda x, y: ua.sum(x, axis=(0, 1)), lambda a, b: a.sum()),
    "prod": (lambda x, y: ua.prod(x, axis=0), lambda a, b: a.prod(0)),
    "mean": (lambda x, y: ua.mean(x, axis=(1,)), lambda a, b: a.mean(1)),
    "var": (lambda x, y: ua.var(x, axis=0, correction=1), lambda a, b: a.var(0, ddof=1)),
    "std": (lambda x, y: ua.std(x, axis=(0, 1)), lambda a, b: a.std()),
    "min": (lambda x, y: ua.min(x, axis=1), lambda a, b: a.min(1)),
    "max": (lambda x, y: ua.max(x, axis=(0, 1), keepdims=True), lambda a, b: a.max(keepdims=True)),
    "argmax": (lambda x, y: ua.argmax(x, axis=1), lambda a, b: a.argmax(1)),
    "argmin": (lambda x, y: ua.argmin(x, axis=0), lambda a, b: a.argmin(0)),
    "any": (lambda x, y: ua.any(x > 2.9, axis=0), lambda a, b: (a > 2.9).any(0)),
    "all": (lambda x, y: ua.all(x > 0.6), lambda a, b: (a > 0.6).all()),
    "cumulative_sum": (lambda x, y: ua.cumulative_sum(x, axis=1), lambda a, b: np.cumsum(a, 1)),
    "permute_dims": (lambda x, y: ua.permute_dims(x, (1, 0)), lambda a, b: a.T),
    "matrix_transpose": (lambda x, y: ua.matrix_transpose(x), lambda a, b: a.T),
    "where": (lambda x, y: ua.where(x > 1.0, x, 0.0), lambda a, b: np.where(a > 1.0, a, 0.0)),
    "concat": (lambda x, y: ua.concat([x, _A], axis=0), lambda a, b: np.concatenate([a, a], 0)),
    "reshape": (lambda x, y: ua.reshape(x, (24,)), lambda a, b: a.reshape(24)),
    "sort": (lambda x, y: ua.sort(-x, axis=1), lambda a, b: np.sort(-a, 1)),
    "take": (lambda x, y: ua.take(x, ua.to(np.array([0, 2]), "dask"), axis=1), lambda a, b: a[:, [0, 2]]),
    "clip": (lambda x, y: ua.clip(x, 1.0, 2.0), lambda a, b: np.clip(a, 1.0, 2.0)),
    "astype": (lambda x, y: ua.astype(x, ua.float32), lambda a, b: a.astype(np.float32)),
    "nonzero": (lambda x, y: ua.nonzero(x > 2.0)[1], lambda a, b: np.nonzero(a > 2.0)[1]),
    "unique_values": (lambda x, y: ua.unique_values(ua.floor(x)), lambda a, b: np.unique(np.floor(a))),
    "boolean_index": (lambda x, y: x[x > 2.0], lambda a, b: a[a > 2.0]),
    "attention": (lambda x, y: ua.scaled_dot_product_attention(x[None], x[None], x[None], is_causal=True),
                  lambda a, b: _attention_ref(a[None], a[None], a[None], None, True, 1 / math.sqrt(6))),
    "rechunk": (lambda x, y: ua.to(x, "dask", chunks=(1, 6)), lambda a, b: a),
}


@pytest.mark.parametrize("op", sorted(LAZY_OPS))
def test_every_op_is_lazy_and_right_when_computed(op: str) -> None:
    fn, ref = LAZY_OPS[op]
    x, y = ua.to(_A, "dask", chunks=(3, 4)), ua.to(_B, "dask", chunks=(4, 2))
    with dask.config.set(scheduler=_refuse):
        out = fn(x, y)
        assert isinstance(out, da.Array), type(out)
        with pytest.raises(Computed):  # the scheduler really refuses: the check above is not vacuous
            out.compute()
    expected = ref(_A, _B)
    got = _np(out)
    if got.dtype.kind in "fc":
        assert_close(got, np.asarray(expected, np.float64), "float64", n_terms=24)
    else:
        np.testing.assert_array_equal(got, expected)


def test_data_dependent_shapes_stay_unknown_and_lazy(refusing: None) -> None:
    x = ua.to(_A, "dask", chunks=(2, 3))
    idx = ua.nonzero(x > 2.0)
    assert all(math.isnan(n) for i in idx for n in i.shape)
    counts = ua.unique_counts(ua.floor(x))
    assert math.isnan(counts.values.shape[0])


def test_repeat_by_a_lazy_count_array_is_a_typed_error_naming_the_fix() -> None:
    x = ua.to(_A[0], "dask", chunks=2)
    reps = ua.to(np.arange(1, 7), "dask", chunks=3)
    with dask.config.set(scheduler=_refuse), pytest.raises(ua.UnsupportedError) as e:
        ua.repeat(x, reps)
    assert e.value.op == "repeat" and e.value.backend == "dask" and "compute the counts first" in str(e.value)


# -- chunked == a float64 NumPy reference ---------------------------------------------------------------
_REDUCTIONS: dict[str, tuple[Any, Any]] = {
    "sum": (ua.sum, np.sum), "prod": (ua.prod, np.prod), "mean": (ua.mean, np.mean),
    "min": (ua.min, np.min), "max": (ua.max, np.max),
}


@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
@_SETTINGS
@given(data=st.data(), dtype=st.sampled_from(["float32", "float64"]), keepdims=st.booleans())
def test_reductions_over_any_axis_tuple_match_numpy(name: str, data: Any, dtype: str, keepdims: bool) -> None:
    a, x = data.draw(_chunked(dtype=dtype))
    axis = _axes(data.draw, a.ndim)
    fn, ref = _REDUCTIONS[name]
    with dask.config.set(scheduler=_refuse):
        out = fn(x, axis=axis, keepdims=keepdims)
    expected = ref(a.astype(np.float64), axis=axis, keepdims=keepdims)
    got = _np(out)
    assert got.dtype == np.dtype(dtype)
    n = a.size if axis is None else math.prod(a.shape[i] for i in axis)
    assert_close(got, expected, dtype, n_terms=n, scale=2.0 ** max(n, 1) if name == "prod" else 2.0)


@pytest.mark.parametrize("name", ["min", "max", "argmin", "argmax"])
@pytest.mark.parametrize("chunks", [((2, 0, 3), (4,)), ((5,), (0, 4)), ((0, 5), (2, 0, 2, 0))])
def test_reductions_without_an_identity_skip_empty_chunks(name: str, chunks: tuple[tuple[int, ...], ...]) -> None:
    # A zero-size chunk has no min: dask's own reduction fails on it when the graph runs, even though it holds
    # no element of the answer. Empty results too: a (0, 4) array reduced over its last axis is (0,).
    rng = np.random.default_rng(4)
    a = _values(rng, (5, 4))
    fn, ref = getattr(ua, name), getattr(np, name)
    x = da.from_array(a, chunks=chunks)
    for axis in (0, 1, None):
        got = _np(fn(x, axis=axis))
        assert got.dtype == ref(a, axis=axis).dtype
        np.testing.assert_array_equal(got, ref(a, axis=axis))
    empty = da.from_array(np.ones((0, 4)), chunks=((0,), (2, 2)))
    for keepdims in (False, True):
        out = fn(empty, axis=1, keepdims=keepdims)
        assert isinstance(out, da.Array)
        assert _np(out).shape == ref(np.ones((0, 4)), axis=1, keepdims=keepdims).shape


@_SETTINGS
@given(data=st.data(), dtype=st.sampled_from(["float32", "float64"]))
def test_matmul_with_a_chunked_contraction_matches_numpy(data: Any, dtype: str) -> None:
    m, k, n = (data.draw(st.integers(1, 9)) for _ in range(3))
    batch = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, b = _values(rng, (*batch, m, k), dtype), _values(rng, (k, n), dtype)
    ck = data.draw(st.integers(1, k))  # the contraction axis split into ceil(k / ck) chunks
    x = ua.to(a, "dask", chunks=(*(1,) * len(batch), data.draw(st.integers(1, m)), ck))
    y = ua.to(b, "dask", chunks=(data.draw(st.integers(1, k)), data.draw(st.integers(1, n))))
    with dask.config.set(scheduler=_refuse):
        out = ua.matmul(x, y)
    assert out.shape == (*batch, m, n)
    assert_close(_np(out), a.astype(np.float64) @ b.astype(np.float64), dtype, n_terms=k, scale=4.0 * k)


def test_matmul_contraction_is_not_gathered_into_one_chunk() -> None:
    x = ua.to(_A, "dask", chunks=(2, 2))
    y = ua.to(_B, "dask", chunks=(2, 3))
    out = ua.matmul(x, y)
    # One product task per (row block, contraction block, column block): the K axis stays in 3 chunks.
    products = [k for k in dict(out.__dask_graph__()) if isinstance(k, tuple) and "block_matmul" in k[0]]
    assert len(products) == 2 * 3 * 1
    assert_close(_np(out), _A @ _B, "float64", n_terms=6)


@_SETTINGS
@given(data=st.data())
def test_permute_dims_matches_numpy(data: Any) -> None:
    a, x = data.draw(_chunked(ndim=(1, 4)))
    axes = tuple(data.draw(st.permutations(range(a.ndim))))
    with dask.config.set(scheduler=_refuse):
        out = ua.permute_dims(x, axes)
    np.testing.assert_array_equal(_np(out), np.transpose(a, axes))


@_SETTINGS
@given(data=st.data(), dtype=st.sampled_from(["float32", "float64"]), correction=st.sampled_from([0, 1, 2.5]),
       keepdims=st.booleans(), root=st.booleans())
def test_var_std_over_axis_tuples_match_numpy(data: Any, dtype: str, correction: float, keepdims: bool,
                                              root: bool) -> None:
    a, x = data.draw(_chunked(dtype=dtype))
    axis = _axes(data.draw, a.ndim)
    with dask.config.set(scheduler=_refuse):
        out = (ua.std if root else ua.var)(x, axis=axis, correction=correction, keepdims=keepdims)
    ref = (np.std if root else np.var)
    n = a.size if axis is None else math.prod(a.shape[i] for i in axis)
    with warnings.catch_warnings():  # NumPy warns where N - correction <= 0
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = ref(a.astype(np.float64), axis=axis, ddof=correction, keepdims=keepdims)
    if n - correction <= 0:
        expected = np.full_like(expected, np.nan)  # the standard: NaN where N - correction <= 0
    got = _np(out)
    assert got.dtype == np.dtype(dtype)
    assert_close(got, expected, dtype, n_terms=n, scale=4.0)


def test_var_is_stable_across_chunks_where_the_naive_formula_loses_every_digit() -> None:
    rng = np.random.default_rng(7)
    a = 1e8 + rng.standard_normal(4000)  # mean 1e8, spread 1: x**2 ~ 1e16 holds no digit of the spread
    x = ua.to(a, "dask", chunks=250)
    expected = np.var(a, ddof=1)  # NumPy's two-pass float64 variance
    naive = (np.sum(a * a) - np.sum(a) ** 2 / a.size) / (a.size - 1)
    assert abs(naive - expected) / expected > 1e-2  # the data really defeat the one-pass formula
    got = float(_np(ua.var(x, correction=1)))
    assert abs(got - expected) / expected < 1e-9
    b = (1e4 + rng.standard_normal(4000)).astype(np.float32)  # float32: mean 1e4 holds 3 digits below 1
    expected32 = np.std(b.astype(np.float64), ddof=1)
    got32 = _np(ua.std(ua.to(b, "dask", chunks=250), correction=1))
    assert got32.dtype == np.float32
    assert abs(float(got32) - expected32) / expected32 < 4 * 2.0**-23


# -- attention over chunked sequences ---------------------------------------------------------------------
def _attention_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None, causal: bool,
                   scale: float) -> np.ndarray:
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    g = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, g, -3), np.repeat(v, g, -3)
    s = q @ np.swapaxes(k, -1, -2) * scale
    sq, sk = s.shape[-2:]
    allowed = np.ones(s.shape, bool)
    if causal:
        allowed &= np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
    if mask is not None:
        if mask.dtype == bool:
            allowed &= mask
        else:
            s = s + mask
    s = np.where(allowed, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - np.where(np.isinf(m), 0.0, m))
    lsum = p.sum(-1, keepdims=True)
    return (p @ v) / np.where(lsum == 0, 1.0, lsum)


@_SETTINGS
@given(data=st.data(), dtype=st.sampled_from(["float32", "float64"]), causal=st.booleans(),
       mask_kind=st.sampled_from([None, "bool", "float"]), layout=st.sampled_from(["bhsd", "bshd"]))
def test_chunked_attention_matches_numpy(data: Any, dtype: str, causal: bool, mask_kind: str | None,
                                         layout: str) -> None:
    hk = data.draw(st.integers(1, 2))
    hq = hk * data.draw(st.integers(1, 2))
    sq, sk, d, dv = (data.draw(st.integers(1, 12)) for _ in range(4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    q, k, v = (_values(rng, s, dtype) for s in ((2, hq, sq, d), (2, hk, sk, d), (2, hk, sk, dv)))
    mask = None
    if mask_kind == "bool":
        mask = rng.random((sq, sk)) > 0.3
    elif mask_kind == "float":
        mask = rng.uniform(-1.0, 1.0, (1, sq, sk)).astype(dtype)

    def lay(a: np.ndarray) -> np.ndarray:
        return np.swapaxes(a, -2, -3) if layout == "bshd" else a

    def chunked(a: np.ndarray) -> Any:
        return ua.to(lay(a), "dask", chunks=_chunks(data.draw, lay(a).shape))

    with dask.config.set(scheduler=_refuse):
        out = ua.scaled_dot_product_attention(chunked(q), chunked(k), chunked(v), mask=mask, is_causal=causal,
                                              layout=layout)
        assert isinstance(out, da.Array)
    expected = lay(_attention_ref(q, k, v, mask, causal, 1 / math.sqrt(d)))
    got = _np(out)
    assert got.dtype == np.dtype(dtype)
    assert_close(got, expected, dtype, n_terms=sk * d, scale=4.0)


def test_attention_tasks_hold_one_query_chunk_and_one_key_chunk() -> None:
    q = ua.to(np.ones((1, 1, 64, 8)), "dask", chunks=(1, 1, 16, 8))
    kv = ua.to(np.ones((1, 1, 64, 8)), "dask", chunks=(1, 1, 16, 8))
    out = ua.scaled_dot_product_attention(q, kv, kv, is_causal=True)
    graph = dict(out.__dask_graph__())
    parts = [k for k in graph if isinstance(k, tuple) and str(k[0]).endswith("-part")]
    assert len(parts) == 4 + 3 + 2 + 1  # causal: key chunks right of the diagonal make no task
    assert out.chunks[-2] == (16, 16, 16, 16)
    assert "blocked online-softmax" in ua.explain("scaled_dot_product_attention", q, kv, kv).kernel
    np.testing.assert_allclose(_np(out), np.ones((1, 1, 64, 8)))


# -- leader rule: a dask operand leads whatever its position ---------------------------------------------
@pytest.mark.parametrize("dask_first", [True, False])
def test_numpy_joins_dask_in_either_position_chunked_like_it(dask_first: bool, refusing: None) -> None:
    x = ua.to(_A, "dask", chunks=(2, 4))
    out = ua.subtract(x, _A * 2) if dask_first else ua.subtract(_A * 2, x)
    assert isinstance(out, da.Array) and out.chunks == x.chunks
    ex = ua.explain("subtract", *((x, _A) if dask_first else (_A, x)))
    assert ex.backend == "dask" and ex.copies == 0 and "from_array" in ex.handoffs[0]
    with dask.config.set(scheduler="sync"):
        np.testing.assert_array_equal(_np(out), -_A if dask_first else _A)


def test_many_picks_the_dask_operand_wherever_it_is(refusing: None) -> None:
    x = ua.to(_A, "dask", chunks=(2, 3))
    out = ua.concat([_A, _A, x], axis=0)
    assert isinstance(out, da.Array)
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(_A.copy())
    out2 = ua.add(t, x)
    assert isinstance(out2, da.Array) and out2.chunks == x.chunks
    with dask.config.set(scheduler="sync"):
        np.testing.assert_array_equal(_np(out), np.concatenate([_A] * 3))
        np.testing.assert_array_equal(_np(out2), 2 * _A)


def test_a_dask_array_is_never_computed_to_join_an_eager_leader() -> None:
    x = ua.to(_A, "dask", chunks=(2, 3))
    with pytest.raises(ua.HandoffError) as e:
        _dispatch.adopt("add", _dispatch.one(_A), _A, _dispatch.one(x), x)
    assert "never computed" in str(e.value) and e.value.op == "add"


class _FakeSharding:
    def __init__(self, n: int) -> None:
        self.device_set = set(range(n))


def _fake(module: str, name: str, **attrs: Any) -> type:
    return type(name, (), {"__module__": module, **attrs})


def _eager_backend(name: str) -> Any:
    # The backend whose package holds the rule rank() reads (Backend.spreads, is_spread), on fake arrays: no
    # sharding or DTensor module is imported.
    pytest.importorskip(name)
    from unarray import _backends

    return _backends.get(name)


def test_rank_reads_sharded_jax_without_importing_it() -> None:
    jax_like = _fake("jaxlib._jax", "ArrayImpl", sharding=None)
    one_dev, two_dev = jax_like(), jax_like()
    one_dev.sharding, two_dev.sharding = _FakeSharding(1), _FakeSharding(2)
    assert _dispatch.rank(_eager_backend("jax"), one_dev) == 0
    assert _dispatch.rank(_eager_backend("jax"), two_dev) == 1


def test_rank_reads_a_dtensor_without_importing_it() -> None:
    dtensor = _fake("torch.distributed.tensor._api", "DTensor", placements=())()
    plain = _fake("torch", "Tensor")()
    assert _dispatch.rank(_eager_backend("torch"), dtensor) == 1
    assert _dispatch.rank(_eager_backend("torch"), plain) == 0


def test_rank_of_eager_and_lazy_arrays() -> None:
    assert _dispatch.rank(_dispatch.one(_A), _A) == 0
    assert _dispatch.rank(_dispatch.one(ua.to(_A, "dask")), ua.to(_A, "dask")) == 1


# -- ua.to: wrap, rechunk, compute (counted), copy=False ------------------------------------------------
def test_to_dask_wraps_without_a_copy_and_to_numpy_computes_counted(fresh_handoff: None) -> None:
    with dask.config.set(scheduler=_refuse):
        x = ua.to(_A, "dask", chunks=(3, 2))
        y = ua.to(x, "dask", chunks=(4, 6))
        assert x.chunks == ((3, 1), (2, 2, 2)) and y.chunks == ((4,), (6,))
        with pytest.raises(Computed):
            ua.to(y, "numpy")
    st0 = ua.stats()
    assert st0["computes"] == 0 and st0["copies"] == 0
    out = ua.to(y, "numpy")
    st1 = ua.stats()
    assert isinstance(out, np.ndarray) and np.array_equal(out, _A)
    assert st1["computes"] == 1 and st1["copies"] == 1 and st1["bytes_copied"] == _A.nbytes
    with pytest.raises(ua.HandoffError, match="copy=False"):
        ua.to(y, "numpy", copy=False)
    assert ua.stats()["computes"] == 1
    with pytest.raises(ua.ArgumentError, match="chunks="):
        ua.to(_A, "numpy", chunks=2)


def test_torch_to_dask_and_back() -> None:
    torch = pytest.importorskip("torch")
    t = torch.arange(12.0).reshape(3, 4)
    x = ua.to(t, "dask", chunks=(2, 2))
    assert isinstance(x, da.Array) and x.chunks == ((2, 1), (2, 2))
    back = ua.to(x, "torch")
    assert isinstance(back, torch.Tensor) and torch.equal(back, t)


# -- schedulers: threaded and distributed ------------------------------------------------------------------
@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as c:
        yield c


def _workload() -> tuple[list[Any], list[np.ndarray]]:
    rng = np.random.default_rng(3)
    a = _values(rng, (2, 2, 12, 8), "float64")
    x = ua.to(a, "dask", chunks=(1, 1, 5, 8))
    outs = [ua.matmul(x, ua.matrix_transpose(x)), ua.var(x, axis=(0, 2), correction=1),
            ua.scaled_dot_product_attention(x, x, x, is_causal=True)]
    refs = [a @ np.swapaxes(a, -1, -2), a.var(axis=(0, 2), ddof=1),
            _attention_ref(a, a, a, None, True, 1 / math.sqrt(8))]
    return outs, refs


def test_threaded_scheduler_gives_the_reference() -> None:
    outs, refs = _workload()
    with dask.config.set(scheduler="threads"):
        for o, r in zip(outs, refs, strict=True):
            assert_close(ua.to(o, "numpy"), r, "float64", n_terms=12)


def test_distributed_local_cluster_gives_the_reference(client: Any) -> None:
    outs, refs = _workload()
    futures = client.compute(outs)
    for f, r in zip(futures, refs, strict=True):
        assert_close(f.result(), r, "float64", n_terms=12)
    # ua.to computes with the caller's scheduler: here the client, the default while it is open.
    assert_close(ua.to(outs[0], "numpy"), refs[0], "float64", n_terms=12)


# -- python -m unarray check --profile distributed ------------------------------------------------------------
def test_check_distributed_profile_runs_dask_on_a_local_cluster(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys

    pytest.importorskip("distributed")
    out = tmp_path / "report"
    proc = subprocess.run([sys.executable, "-m", "unarray", "check", "--profile", "distributed", "--backends", "dask",
                           "--ops", "sum", "matmul", "var", "--out", str(out)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads((out / "report.json").read_text())
    assert data["profile"] == "distributed"
    ops = {r["op"] for r in data["results"]}
    assert {"sum", "matmul", "var", "dask laziness"} <= ops
    assert all(r["backend"] == "dask" and r["status"] == "pass" for r in data["results"])


def test_distributed_profile_runs_each_sharded_module_in_its_own_process(tmp_path: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from unarray.conformance import distributed

    pkg = tmp_path / "fake_sharded"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    good = "import os\ndef main():\n    return 0 if 'count=4' in os.environ['XLA_FLAGS'] else 3\n"
    (pkg / "good.py").write_text(good)
    (pkg / "bad.py").write_text("def main():\n    print('ring attention differs')\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(distributed, "SHARDED", {
        "fake_sharded.good": ("jax", {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}),
        "fake_sharded.bad": ("torch", {}),
        "fake_sharded.absent": ("torch", {}),
    })
    report = distributed.run(backends=["jax", "torch"])
    got = {r.op: (r.backend, r.status) for r in report.results}
    assert got == {"good": ("jax", "pass"), "bad": ("torch", "fail"), "absent": ("torch", "unavailable")}
    assert "ring attention differs" in next(r.message for r in report.results if r.op == "bad")


def test_dask_is_listed_and_its_inspection_api_tells_the_truth() -> None:
    import subprocess
    import sys

    assert "dask" in [b.name for b in ua.backends()]
    with ua.use("dask"):
        info = ua.__array_namespace_info__()
        made = ua.zeros(3)
    assert isinstance(made, da.Array) and ua.device(made) == info.default_device() == ua.Device("cpu")
    assert made.dtype == info.default_dtypes()["real floating"]
    assert info.capabilities()["data-dependent shapes"] is True
    env = subprocess.run([sys.executable, "-m", "unarray", "env", "--probe"], capture_output=True, text=True,
                         timeout=120)
    line = next(ln for ln in env.stdout.splitlines() if ln.startswith("dask "))
    assert dask.__version__ in line and "yes" in line


@pytest.mark.parametrize("op", ["reshape", "add"])
def test_an_op_that_needs_an_unknown_size_says_compute_first(op: str, refusing: None) -> None:
    x = ua.to(_A, "dask", chunks=(2, 3))
    picked = x[x > 2.0]  # a data-dependent length: NaN until computed
    with pytest.raises(ua.ShapeError) as e:
        ua.reshape(picked, (3, -1)) if op == "reshape" else ua.add(picked, x[0])
    assert e.value.op == op and e.value.backend == "dask" and "compute_chunk_sizes" in str(e.value)


# -- CuPy chunks (--devices gpu) ---------------------------------------------------------------------------------
# The device is the chunks', every op stays lazy and matches a float64 NumPy reference, float32 matmul keeps the
# call's precision policy when the graph runs later, and ua.to refuses to move a CUDA-chunked array to NumPy
# without device=.

@pytest.fixture
def cp(cuda: Callable[[str], Any]) -> Any:
    return cuda("cupy")


def _host(x: Any) -> np.ndarray:
    out = x.compute()
    return np.asarray(out.get() if hasattr(out, "get") else out)


def test_cupy_chunks_live_on_cuda_and_ops_stay_there_lazily(cp: Any) -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (64, 48)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (48, 40)).astype(np.float32)
    x = ua.to(cp.asarray(a), "dask", chunks=(16, 16))
    y = ua.to(cp.asarray(b), "dask", chunks=(16, 8))
    assert ua.device(x) == ua.Device("cuda", 0)
    with dask.config.set(scheduler=_refuse):
        m = ua.matmul(x, y)
        v = ua.var(x, axis=(0, 1), correction=1)
        s = ua.sum(x, axis=0)
        p = ua.permute_dims(x, (1, 0))
    assert type(m._meta).__module__.startswith("cupy")
    assert_close(_host(m), a.astype(np.float64) @ b, "float32", n_terms=48, scale=4.0 * 48)
    assert_close(_host(v), np.var(a.astype(np.float64), ddof=1), "float32", n_terms=a.size)
    assert_close(_host(s), a.astype(np.float64).sum(0), "float32", n_terms=64, scale=2.0)
    np.testing.assert_array_equal(_host(p), a.T)


def test_float32_matmul_keeps_the_call_policy_when_the_graph_runs_later(cp: Any) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    x = ua.to(cp.asarray(a), "dask", chunks=(128, 128))
    with ua.precision("highest"):
        exact = ua.matmul(x, x)
    with ua.precision("tf32"):
        rough = ua.matmul(x, x)
    ref = a.astype(np.float64) @ a.astype(np.float64)
    err_exact = np.abs(_host(exact) - ref).max() / np.abs(ref).max()
    err_rough = np.abs(_host(rough) - ref).max() / np.abs(ref).max()
    # The policy of each call, though both graphs run outside its scope (H100: 3.3e-7 against 3.2e-4; plain
    # CuPy gives the same two figures).
    assert err_exact < 1e-5 < err_rough
    assert "per chunk when the graph runs" in ua.explain("matmul", x, x).precision


def test_attention_on_cupy_chunks_matches_numpy(cp: Any) -> None:
    rng = np.random.default_rng(2)
    q = rng.standard_normal((1, 4, 96, 32)).astype(np.float32)
    k = rng.standard_normal((1, 2, 80, 32)).astype(np.float32)
    v = rng.standard_normal((1, 2, 80, 16)).astype(np.float32)
    dq, dk, dv = (ua.to(cp.asarray(t), "dask", chunks=(1, 2, 32, 32)) for t in (q, k, v))
    with dask.config.set(scheduler=_refuse):
        out = ua.scaled_dot_product_attention(dq, dk, dv, is_causal=True)
    expected = _attention_ref(q, k, v, None, True, 1 / math.sqrt(32))
    assert_close(_host(out), expected, "float32", n_terms=80 * 32, scale=4.0)


def test_to_numpy_of_cuda_chunks_needs_a_device_and_counts_the_compute(cp: Any) -> None:
    x = ua.to(cp.arange(12.0).reshape(3, 4), "dask", chunks=(2, 2))
    before = ua.stats()["computes"]
    with pytest.raises(ua.HandoffError, match="device='cpu'"):
        ua.to(x, "numpy")
    assert ua.stats()["computes"] == before  # refused before anything ran
    out = ua.to(x, "numpy", device="cpu")
    assert isinstance(out, np.ndarray) and np.array_equal(out, np.arange(12.0).reshape(3, 4))
    assert ua.stats()["computes"] == before + 1
    with pytest.raises(ua.DeviceMismatchError):
        ua.add(x, np.ones((3, 4)))  # a NumPy array cannot join CUDA chunks without a move
