"""MLX's own facts: handoff with NumPy, torch and JAX (MLX copies what it imports and exports read-only),
attention through mlx.core.fast, float64 refused on MLX's GPU (a fake device), data-dependent shapes
refused inside mx.compile, and ua.at on MLX's value arrays. The equivalence properties run on MLX
through the backend fixture (tests/test_one_answer.py), the conformance suite through
``python -m unarray check --backends mlx``."""

from __future__ import annotations

import numpy as np
import pytest

import unarray as ua
from tests._support import assert_close
from unarray.conformance import deviations

mx = pytest.importorskip("mlx.core")


@pytest.fixture(autouse=True)
def _fresh(fresh_handoff: None) -> None:
    return None


def _data(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_numpy_to_mlx_is_one_counted_copy_that_keeps_the_dtype(dtype: str) -> None:
    n = _data((3, 4), dtype) if dtype != "bool" else _data((3, 4)) > 0
    m = ua.to(n, "mlx")
    assert isinstance(m, mx.array)
    np.testing.assert_array_equal(np.array(m), n)
    assert np.array(m).dtype == n.dtype  # (mx.array alone would make float64 float32)
    assert ua.stats()["copies"] == 1
    n[0, 0] = not n[0, 0] if dtype == "bool" else n[0, 0] + 1  # a copy: the MLX array does not see the write
    assert np.array(m)[0, 0] != n[0, 0]


def test_import_into_mlx_is_refused_under_copy_false() -> None:
    with pytest.raises(ua.HandoffError, match="copy"):
        ua.to(_data((4,)), "mlx", copy=False)


def test_mlx_to_numpy_is_a_zero_copy_read_only_view() -> None:
    m = mx.array(_data((5, 3)))
    n = ua.to(m, "numpy")
    assert not n.flags.writeable
    assert n.__array_interface__["data"][0] == ua.to(m, "numpy").__array_interface__["data"][0]
    assert ua.stats()["copies"] == 0
    np.testing.assert_array_equal(n, np.array(m))


@pytest.mark.parametrize("target", ["torch", "jax"])
def test_mlx_hands_over_to_torch_and_jax_without_a_writable_alias(target: str) -> None:
    lib = pytest.importorskip(target)
    m = mx.array(_data((4, 4)))
    before = np.array(m)
    out = ua.to(m, target)
    assert ua.backend_of(out) == target
    np.testing.assert_array_equal(np.asarray(out), before)
    if target == "torch":
        assert ua.stats()["copies"] == 1  # torch has no read-only tensors: the MLX buffer is never aliased writable
        out[0, 0] = 100.0
        np.testing.assert_array_equal(np.array(m), before)
    assert lib is not None


@pytest.mark.parametrize("source", ["torch", "jax"])
def test_torch_and_jax_arrays_join_an_mlx_call(source: str) -> None:
    pytest.importorskip(source)
    x = _data((3, 3))
    other = ua.asarray(x, backend=source)
    out = ua.add(mx.array(x), other)
    assert isinstance(out, mx.array)
    assert_close(np.array(out), x.astype(np.float64) * 2, "float32")


def test_complex128_is_refused_on_import() -> None:
    with pytest.raises(ua.DTypeError, match="complex128"):
        ua.asarray(np.ones(3, np.complex128), backend="mlx")


@pytest.mark.parametrize("device", [ua.Device("cuda"), ua.Device("mps")])
def test_float64_is_refused_on_mlx_gpu(device: ua.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake device, listed as MLX's: the refusal comes before MLX is asked to place anything there.
    from unarray import _backends

    monkeypatch.setattr(type(_backends.get("mlx")), "devices", lambda self: [ua.Device("cpu"), device])
    with pytest.raises(ua.DTypeError, match="float64"):
        ua.asarray(np.ones(3), backend="mlx", device=device)
    with pytest.raises(ua.DTypeError, match="float64"):
        ua.zeros(3, dtype=ua.float64, backend="mlx", device=device)
    b = ua.array_namespace(mx.array([1.0])).__array_namespace_info__()
    assert "float64" in b.dtypes(device="cpu")
    assert "float64" not in _backends.get("mlx").dtype_names(device)


def test_attention_runs_mlx_fast_kernel_and_matches_the_reference() -> None:
    q, k, v = _data((2, 4, 6, 8), seed=1), _data((2, 2, 6, 8), seed=2), _data((2, 2, 6, 8), seed=3)
    args = [mx.array(t) for t in (q, k, v)]
    assert "mlx.core.fast.scaled_dot_product_attention" in ua.explain("scaled_dot_product_attention", *args,
                                                                      is_causal=True).kernel
    out = ua.scaled_dot_product_attention(*args, is_causal=True)
    want = ua.scaled_dot_product_attention(*(t.astype(np.float64) for t in (q, k, v)), is_causal=True)
    assert_close(np.array(out), want, "float32", n_terms=8)
    masked = ua.explain("scaled_dot_product_attention", *args, mask=mx.array(np.tril(np.ones((6, 6), bool))))
    assert "fast" not in masked.kernel  # a mask goes the blocked path (an empty row gives zeros there)


def test_unique_inside_mx_compile_is_a_typed_refusal() -> None:
    x = mx.array([3, 1, 3, 2])
    assert np.array(ua.unique_values(x)).tolist() == [1, 2, 3]
    with pytest.raises(ua.UnsupportedError, match="mx.compile"):
        mx.compile(lambda a: ua.unique_values(a))(x)


def test_at_returns_a_new_array_and_refuses_in_place() -> None:
    x = mx.array(np.zeros(5, np.float32))
    out = ua.at(x, mx.array([1, 1, 3])).add(1.0)
    np.testing.assert_array_equal(np.array(out), [0, 2, 0, 1, 0])
    np.testing.assert_array_equal(np.array(x), np.zeros(5))
    with pytest.raises(ua.ArgumentError, match="in place"):
        ua.at(x, 0).set(1.0, copy=False)


def test_elementwise_runs_inside_mx_compile() -> None:
    x = mx.array(_data((4, 4)))
    f = mx.compile(lambda a: ua.sum(ua.exp(a) * 2, axis=0))
    assert_close(np.array(f(x)), np.exp(np.array(x).astype(np.float64)).sum(0) * 2, "float32", n_terms=4)


@pytest.mark.parametrize("name", ["bool", "int8", "int64", "uint32", "float32", "float64", "complex64"])
def test_dtypes_compare_with_unarrays_on_the_left(name: str) -> None:
    x = ua.ones(2, dtype=getattr(ua, name), backend="mlx")
    assert getattr(ua, name) == x.dtype and ua.isdtype(x.dtype, getattr(ua, name))
    assert ua.float16 != x.dtype
    # The listed deviation: MLX's Dtype answers False to any other object, so the reflected form is never asked.
    assert not (x.dtype == getattr(ua, name))
    assert any(d.op == "dtype ==" and d.backend == "mlx" for d in deviations.DEVIATIONS)
