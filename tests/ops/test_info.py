"""The inspection API (``ua.__array_namespace_info__``) tells the truth about the default backend and device:
what it lists can be created and promoted to, what it does not list is refused with DTypeError, and code
written against it (the widest float, the default integer) runs on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend

KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric")
ALL = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
       "float64", "complex64", "complex128")


def _info(backend: TestBackend) -> ua._Info:
    with ua.use(backend.name):
        return ua.__array_namespace_info__()


def test_info_follows_the_default_backend(backend: TestBackend) -> None:
    with ua.use(backend.name):
        info = ua.__array_namespace_info__()
        made = ua.zeros(2)
    assert backend.is_native(made)
    assert ua.device(made) == info.default_device()
    assert info.default_dtypes()["real floating"] == made.dtype


def test_signatures_of_2025_12(backend: TestBackend) -> None:
    info = _info(backend)
    devices = info.devices()
    assert isinstance(devices, tuple) and devices and all(isinstance(d, ua.Device) for d in devices)
    # A caller written against 2023.12 or 2024.12 gets a list, as those versions type it: its own to change.
    x = backend.asarray(np.zeros(1, np.float32))
    for version in ("2023.12", "2024.12"):
        older = ua.array_namespace(x, api_version=version)
        listed = older.__array_namespace_info__().devices()
        assert isinstance(listed, list) and tuple(listed) == ua.array_namespace(x).__array_namespace_info__().devices()
        assert older.__array_api_version__ == version and older.sum is ua.sum
        listed.clear()  # clearing it leaves the next call's answer whole
        assert older.__array_namespace_info__().devices()
    assert ua.array_namespace(x, api_version="2025.12") is ua.array_namespace(x)
    caps = info.capabilities()
    assert set(caps) == {"boolean indexing", "data-dependent shapes", "max dimensions"}
    assert isinstance(caps["boolean indexing"], bool) and isinstance(caps["data-dependent shapes"], bool)
    assert caps["max dimensions"] is None or caps["max dimensions"] >= 8
    assert set(info.default_dtypes()) == {"real floating", "complex floating", "integral", "indexing"}
    assert info.dtypes(device=info.default_device()) == info.dtypes()


@pytest.mark.parametrize("kind", KINDS)
def test_dtypes_by_kind(backend: TestBackend, kind: str) -> None:
    info = _info(backend)
    got = info.dtypes(kind=kind)
    assert got and all(ua.isdtype(d, kind) for d in got.values())
    assert all(name == d.name for name, d in got.items())
    assert set(got) == {n for n, d in info.dtypes().items() if ua.isdtype(d, kind)}
    assert "bfloat16" not in info.dtypes()


def test_kind_tuple_is_a_union_and_unknown_kinds_are_refused(backend: TestBackend) -> None:
    info = _info(backend)
    both = info.dtypes(kind=("bool", "complex floating"))
    assert set(both) == set(info.dtypes(kind="bool")) | set(info.dtypes(kind="complex floating"))
    with pytest.raises(ua.ArgumentError, match="unknown dtype kind"):
        info.dtypes(kind="floating")


@pytest.mark.parametrize("name", ALL)
def test_listed_dtypes_are_created_and_the_rest_refused(backend: TestBackend, name: str) -> None:
    listed = name in _info(backend).dtypes()
    assert name != "float16" or not listed  # an extension: never listed
    with ua.use(backend.name):
        if listed or name == "float16":
            x = ua.full((2,), True if name == "bool" else 1, dtype=getattr(ua, name))
            assert getattr(ua, name) == x.dtype
        else:
            # Never narrowed to a smaller dtype in silence (JAX without x64 would give uint32 for uint64).
            with pytest.raises(ua.DTypeError):
                ua.full((2,), 1, dtype=getattr(ua, name))


def test_defaults_are_listed_and_are_what_creation_gives(backend: TestBackend) -> None:
    info = _info(backend)
    d = info.default_dtypes()
    assert {v.name for v in d.values()} <= set(info.dtypes())
    with ua.use(backend.name):
        assert d["integral"] == ua.asarray([1, 2]).dtype
        assert d["real floating"] == ua.asarray([1.5]).dtype
        assert d["indexing"] == ua.argmax(ua.asarray([1.0, 3.0])).dtype


@pytest.mark.parametrize(("a", "b", "want"), [("uint32", "int16", "int64"), ("uint8", "int8", "int16"),
                                              ("uint16", "int32", "int32"), ("uint32", "int32", "int64")])
@pytest.mark.parametrize("op", ["outer", "tensordot", "multiply", "less"])
def test_mixed_integer_kinds_promote_by_the_standard_or_refuse(backend: TestBackend, op: str, a: str, b: str,
                                                               want: str) -> None:
    x1 = backend.asarray(np.array([3_000_000_000 if a == "uint32" else 200, 2], dtype=a))
    x2 = backend.asarray(np.array([-1, 3], dtype=b))
    call = {"outer": lambda: ua.linalg.outer(x1, x2), "tensordot": lambda: ua.tensordot(x1, x2, axes=1),
            "multiply": lambda: ua.multiply(x1, x2), "less": lambda: ua.less(x1, x2)}[op]
    n1, n2 = np.array(backend.to_numpy(x1), dtype=np.int64), np.array(backend.to_numpy(x2), dtype=np.int64)
    ref = {"outer": np.outer, "tensordot": lambda p, q: np.tensordot(p, q, axes=1), "multiply": np.multiply,
           "less": np.less}[op](n1, n2)
    if want not in _info(backend).dtypes():
        with pytest.raises(ua.DTypeError, match="x64"):
            call()
        return
    r = call()
    assert (ua.bool if op == "less" else getattr(ua, want)) == r.dtype
    np.testing.assert_array_equal(backend.to_numpy(r), ref)


def test_portable_code_runs_on_every_backend(backend: TestBackend) -> None:
    # Written as a library would: ask the namespace for its widest float and its default integer.
    info = _info(backend)
    widest = max(info.dtypes(kind="real floating").values(), key=lambda d: ua.finfo(d).bits)
    index = info.default_dtypes()["indexing"]
    with ua.use(backend.name):
        x = ua.linspace(0.0, 1.0, 5, dtype=widest)
        i = ua.arange(5, dtype=index)
        y = ua.take(x, ua.flip(i))
        total = ua.sum(ua.multiply(y, ua.astype(i, widest)))
    assert widest == x.dtype and widest == total.dtype
    assert float(backend.to_numpy(total)) == pytest.approx(sum(k * (4 - k) / 4 for k in range(5)))
    eps = ua.finfo(widest).eps
    assert isinstance(eps, float) and eps == float(np.finfo(widest.name).eps)


@given(st.sampled_from(ALL), st.sampled_from(ALL))
@settings(max_examples=60, deadline=None)
def test_result_type_is_symmetric_and_never_recurses(a: str, b: str) -> None:
    da, db = getattr(ua, a), getattr(ua, b)
    try:
        ab = ua.result_type(da, db)
    except ua.DTypeError:
        with pytest.raises(ua.DTypeError):
            ua.result_type(db, da)
        return
    assert ab == ua.result_type(db, da)
    assert ab == ua.result_type(db, da, da)


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo_fields_are_python_floats_and_exact(backend: TestBackend, name: str) -> None:
    if name not in _info(backend).dtypes() and name != "float16":  # float16: an extension every backend has
        pytest.skip(f"{backend.name} lists no {name} here")
    x = backend.asarray(np.zeros(1, dtype=name))
    got = ua.finfo(x)
    ref = np.finfo(name)
    for field in ("eps", "max", "min", "smallest_normal"):
        v = getattr(got, field)
        assert type(v) is float and v == float(getattr(ref, field)), field
    assert type(got.bits) is int and got.bits == ref.bits
    assert getattr(ua, str(ref.dtype)) == got.dtype


@pytest.mark.parametrize("name", ["int8", "uint8", "int32", "uint64"])
def test_iinfo_fields_are_python_ints(backend: TestBackend, name: str) -> None:
    if name not in _info(backend).dtypes():
        pytest.skip(f"{backend.name} lists no {name} here")
    got = ua.iinfo(backend.asarray(np.zeros(1, dtype=name)))
    assert (type(got.min), type(got.max)) == (int, int)
    assert (got.min, got.max, got.bits) == (int(np.iinfo(name).min), int(np.iinfo(name).max), np.iinfo(name).bits)


def test_meshgrid_and_broadcast_arrays_are_tuples(backend: TestBackend) -> None:
    a = backend.asarray(np.arange(3, dtype=np.float32))
    b = backend.asarray(np.arange(2, dtype=np.float32))
    grids = ua.meshgrid(a, b)
    assert isinstance(grids, tuple) and [tuple(g.shape) for g in grids] == [(2, 3), (2, 3)]
    bc = ua.broadcast_arrays(a[None, :], b[:, None])
    assert isinstance(bc, tuple) and [tuple(g.shape) for g in bc] == [(2, 3), (2, 3)]


def test_the_namespace_of_each_backend_has_the_info_object(backend: TestBackend) -> None:
    xp = ua.array_namespace(backend.asarray(np.zeros(1, np.float32)))
    info = xp.__array_namespace_info__()
    assert "float32" in info.dtypes() and info.default_dtypes()["real floating"] is not None


# -- the standard's semantics that some backends missed -----------------------------------------------------------


@pytest.mark.parametrize("first", [0.0, -0.0])
def test_signed_zero_scalars_keep_their_sign(backend: TestBackend, first: float) -> None:
    # TF caches scalar constants by value (-0.0 == 0.0): making one zero first must not change the other.
    with ua.use(backend.name):
        ua.asarray(first)
        ua.full((1,), first)
        for z in (0.0, -0.0):
            got = float(backend.to_numpy(ua.asarray(z)))
            assert math.copysign(1, got) == math.copysign(1, z)
            assert math.copysign(1, float(backend.to_numpy(ua.full((2,), z))[0])) == math.copysign(1, z)
    x = backend.asarray(np.array([1.0, -1.0], np.float32))
    assert np.signbit(backend.to_numpy(ua.multiply(x, -0.0))).tolist() == [True, False]
    assert np.signbit(backend.to_numpy(ua.multiply(x, 0.0))).tolist() == [False, True]


def test_asarray_of_mixed_python_scalars(backend: TestBackend) -> None:
    with ua.use(backend.name):
        z = ua.asarray([1, 2j, 3])
        f = ua.asarray([[1, 2.5], [True, 4]])
    assert ua.complex64 == z.dtype or ua.complex128 == z.dtype
    np.testing.assert_array_equal(backend.to_numpy(z), [1, 2j, 3])
    assert ua.isdtype(f.dtype, "real floating")
    np.testing.assert_array_equal(backend.to_numpy(f), [[1, 2.5], [1, 4]])


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "int32", "uint32"])
@given(st.data())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_out_of_range_python_ints_are_refused_everywhere(backend: TestBackend, name: str, data: st.DataObject) -> None:
    lo, hi = int(np.iinfo(name).min), int(np.iinfo(name).max)
    outside = data.draw(st.one_of(st.integers(hi + 1, 2**70), st.integers(-(2**70), lo - 1)))
    inside = data.draw(st.integers(lo, hi))
    x = backend.asarray(np.array([1, 2], dtype=name))
    assert getattr(ua, name) == ua.add(x, inside).dtype
    for call in (lambda: ua.add(x, outside), lambda: ua.subtract(outside, x), lambda: ua.full_like(x, outside)):
        with pytest.raises(ua.ArgumentError, match="out of range"):
            call()
    with ua.use(backend.name), pytest.raises(ua.ArgumentError, match="out of range"):
        ua.full((2,), outside, dtype=getattr(ua, name))


# Parts are normal float32 numbers: JAX and TF on the CPU flush subnormals to zero.
_PART = st.floats(-4, 4, width=32, allow_subnormal=False)


@given(st.lists(st.builds(complex, _PART, _PART), min_size=1, max_size=12), st.data())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_unique_of_complex_input(backend: TestBackend, values: list[complex], data: st.DataObject) -> None:
    pool = values + [values[i] for i in data.draw(st.lists(st.integers(0, len(values) - 1), max_size=6))]
    ref = np.array(pool, np.complex64)
    got = ua.unique_all(backend.asarray(ref))
    want = np.unique_all(ref)
    np.testing.assert_array_equal(np.sort_complex(backend.to_numpy(got.values)), np.sort_complex(want.values))
    v, c = backend.to_numpy(got.values), backend.to_numpy(got.counts)
    assert sorted(zip(v.tolist(), c.tolist(), strict=True), key=lambda p: (p[0].real, p[0].imag)) == \
        sorted(zip(want.values.tolist(), want.counts.tolist(), strict=True), key=lambda p: (p[0].real, p[0].imag))
    np.testing.assert_array_equal(v[backend.to_numpy(got.inverse_indices)], ref)


@pytest.mark.parametrize("offset", [-5, -3, -1, 0, 2, 4, 7])
def test_diagonal_and_trace_past_the_matrix_are_empty(backend: TestBackend, offset: int) -> None:
    a = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
    x = backend.asarray(a)
    d = backend.to_numpy(ua.linalg.diagonal(x, offset=offset))
    want = np.diagonal(a, offset=offset, axis1=-2, axis2=-1)
    assert d.shape == want.shape
    np.testing.assert_array_equal(d, want)
    np.testing.assert_array_equal(backend.to_numpy(ua.linalg.trace(x, offset=offset)),
                                  np.trace(a, offset=offset, axis1=-2, axis2=-1))


@pytest.mark.parametrize(("axis", "shape"), [(0, (1, 2, 3)), (-1, (2, 3, 1)), ((0, -1), (1, 2, 3, 1)),
                                             ((1, 3), (2, 1, 3, 1)), (5, None), (-4, None), ((0, 0), None),
                                             ((0, -4), None), ((1, 4), None)])
def test_expand_dims_refuses_bad_and_repeated_axes_alike(backend: TestBackend, axis: object,
                                                         shape: tuple[int, ...] | None) -> None:
    x = backend.asarray(np.zeros((2, 3), np.float32))
    if shape is not None:
        assert tuple(ua.expand_dims(x, axis=axis).shape) == shape
        return
    with pytest.raises(ua.AxisError, match="expand_dims"):
        ua.expand_dims(x, axis=axis)


@pytest.mark.parametrize(("a", "b"), [("uint16", "uint32"), ("uint32", "uint64"), ("uint16", "uint64"),
                                      ("uint8", "uint32"), ("uint16", "int32"), ("uint32", "int8")])
@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "less", "floor_divide", "bitwise_xor"])
def test_wide_unsigned_promotion_follows_the_table(backend: TestBackend, op: str, a: str, b: str) -> None:
    want = np.result_type(a, b).name
    if want not in _info(backend).dtypes() or not {a, b} <= set(_info(backend).dtypes()):
        pytest.skip(f"{backend.name} lists no {want} here")
    big = int(np.iinfo(a).max) - 3
    n1, n2 = np.array([big, 7, 0], a), np.array([5, 2, 3], b)
    r = getattr(ua, op)(backend.asarray(n1), backend.asarray(n2))
    ref = getattr(np, op)(n1, n2)
    assert (ua.bool if ref.dtype == np.bool_ else getattr(ua, want)) == r.dtype
    np.testing.assert_array_equal(backend.to_numpy(r), ref)


@given(st.sampled_from(["bool", "int8", "uint8", "int32", "float16", "float32", "complex64"]),
       st.lists(st.sampled_from([True, 3, -2.5, 1j]), min_size=1, max_size=3), st.randoms())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_result_type_with_python_scalars_in_any_order(backend: TestBackend, name: str, scalars: list[object],
                                                      rnd: object) -> None:
    # The ua-dtype path (no array) and the array path agree, whatever the order of the arguments.
    if name == "float16" and 1j in scalars and backend.name == "torch":
        scalars = [s for s in scalars if s != 1j] or [3]  # torch makes float16 + 1j complex32 (no such standard dtype)
    x = backend.asarray(np.zeros(1, dtype=name))
    args = [getattr(ua, name), *scalars]
    with ua.use(backend.name):
        want = ua.result_type(x, *scalars)
        for _ in range(3):
            rnd.shuffle(args)  # type: ignore[attr-defined]
            assert ua.result_type(*args) == want, args
            mixed = [x if a is getattr(ua, name) else a for a in args]
            assert ua.result_type(*mixed) == want, mixed


def test_a_foreign_dtype_seen_first_does_not_break_torch_compile() -> None:
    # torch.compile reads the name cache that a torch dtype is looked up in; a tf.DType (or any dtype dynamo
    # cannot hash) cached earlier in the process made every later compiled dtype lookup fail.
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("tensorflow")
    from unarray._dtypes import canonical_name

    assert canonical_name(tf.float32) == "float32" and canonical_name(np.dtype("int8")) == "int8"

    def f(x: object) -> object:
        return x * 2 if canonical_name(x.dtype) == "float32" else x  # type: ignore[attr-defined]

    out = torch.compile(f, fullgraph=True)(torch.ones(3))
    assert out.tolist() == [2.0, 2.0, 2.0]
