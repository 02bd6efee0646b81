"""Creation lands in the library the caller means: a library's own dtype object (``ua.zeros(3,
dtype=torch.float32)``), a sequence of one library's arrays (``ua.asarray([t1, t2])``) and a bound namespace's
``asarray`` with a device (``xp.asarray(np_result, device=x.device)``, as array-api-extra's ``lazy_apply`` ends)
make that library's array; a NumPy dtype, which JAX, CuPy and dask arrays carry too, leaves the choice to the
default backend. Bound to MLX, ``finfo``'s dtype is the namespace's own."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend

SETTINGS = settings(max_examples=10, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CREATION = {
    "zeros": lambda dt: ua.zeros(3, dtype=dt),
    "ones": lambda dt: ua.ones(3, dtype=dt),
    "empty": lambda dt: ua.empty(3, dtype=dt),
    "full": lambda dt: ua.full(3, 2.5, dtype=dt),
    "arange": lambda dt: ua.arange(3, dtype=dt),
    "linspace": lambda dt: ua.linspace(0.0, 1.0, 3, dtype=dt),
    "eye": lambda dt: ua.eye(3, dtype=dt),
    "asarray": lambda dt: ua.asarray([1.0, 2.0, 3.0], dtype=dt),
}
WANT = {"zeros": [0.0] * 3, "ones": [1.0] * 3, "full": [2.5] * 3, "arange": [0.0, 1.0, 2.0],
        "linspace": [0.0, 0.5, 1.0], "eye": np.eye(3).tolist(), "asarray": [1.0, 2.0, 3.0]}


def _own_float32(backend: TestBackend) -> Any:
    # The library's own dtype object, where it has one that is not NumPy's.
    if backend.name == "jax":
        import jax.numpy as jnp

        return jnp.float32
    if backend.name in ("torch", "tensorflow", "mlx"):
        return backend.module.float32
    return None


@pytest.mark.parametrize("fn", sorted(CREATION))
def test_a_library_dtype_makes_that_librarys_array(backend: TestBackend, fn: str) -> None:
    dt = _own_float32(backend)
    if dt is None:
        pytest.skip(f"{backend.name}'s arrays carry NumPy's dtypes: no dtype object of its own")
    if backend.device != "cpu":
        pytest.skip("creation without device= allocates on the library's default device: the CPU run holds it")
    out = CREATION[fn](dt)
    assert backend.is_native(out) and out.dtype == dt, (fn, type(out), out.dtype)
    if fn in WANT:
        np.testing.assert_array_equal(backend.to_numpy(out), np.asarray(WANT[fn], np.float32))


def test_a_numpy_dtype_leaves_the_choice_to_the_default_backend(backend: TestBackend) -> None:
    with ua.use(backend.name):
        out = ua.zeros(2, dtype=np.dtype("float32"))
        like = ua.ones(2, dtype=ua.zeros(1, dtype=ua.float32).dtype)  # generic code's dtype=x.dtype
    assert backend.is_native(out) and backend.is_native(like)
    assert type(ua.zeros(2, dtype=np.dtype("float32"))) is np.ndarray


def test_an_explicit_backend_or_device_wins_over_the_dtype() -> None:
    torch = pytest.importorskip("torch")
    assert type(ua.zeros(2, dtype=torch.float32, backend="numpy")) is np.ndarray
    assert type(ua.zeros(2, dtype=torch.float32, device=ua.device(np.zeros(1)))) is np.ndarray
    xp = ua.array_namespace(np.zeros(1))
    assert type(xp.zeros(2, dtype=torch.float32)) is np.ndarray  # the bound library wins


@SETTINGS
@given(values=st.lists(st.floats(-8, 8, width=32).filter(lambda v: v != 0), min_size=1, max_size=5),
       nested=st.booleans())
def test_a_sequence_of_one_librarys_arrays_makes_that_librarys_array(backend: TestBackend, values: list[float],
                                                                     nested: bool) -> None:
    items = [backend.asarray(np.asarray(v, np.float32)) for v in values]
    obj: Any = [[x] for x in items] if nested else items
    out = ua.asarray(obj)
    assert backend.is_native(out), type(out)
    assert ua.device(out) == ua.device(items[0])
    want = np.asarray(values, np.float32)
    np.testing.assert_array_equal(backend.to_numpy(out), want[:, None] if nested else want)
    tupled = ua.asarray(tuple(items), dtype=ua.float32)
    assert backend.is_native(tupled) and ua.float32 == tupled.dtype


@SETTINGS
@given(values=st.lists(st.floats(-8, 8, width=32).filter(lambda v: v != 0), min_size=1, max_size=5))
def test_a_bound_asarray_with_a_device_lands_in_the_bound_library(backend: TestBackend, values: list[float]) -> None:
    x = backend.asarray(np.ones(2, np.float32))
    xp = ua.array_namespace(x)
    host = np.asarray(values, np.float32)
    for device in (xp.device, ua.device(x), getattr(x, "device", xp.device)):
        out = xp.asarray(host, device=device)
        assert backend.is_native(out), (device, type(out))
        assert ua.device(out) == ua.device(x)
        np.testing.assert_array_equal(backend.to_numpy(out), host)
    assert backend.is_native(xp.asarray(host))


def test_finfo_of_a_namespace_bound_to_mlx_gives_its_own_dtypes() -> None:
    mx = pytest.importorskip("mlx.core")
    xp = ua.array_namespace(mx.zeros(1))
    assert xp.finfo(xp.complex128).dtype is xp.float64 and xp.float64 == mx.float64
    assert xp.finfo(xp.complex64).dtype is xp.float32 and xp.finfo(mx.float32).dtype is xp.float32
    assert xp.finfo(ua.float16).dtype is xp.float16 and xp.iinfo(ua.int8).dtype is xp.int8
    assert xp.finfo(xp.float32).eps == ua.finfo(ua.float32).eps
