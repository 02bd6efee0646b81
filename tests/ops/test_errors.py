"""Every error path: the right UnarrayError subclass, the right builtin, and a message naming op and backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import unarray as ua
from tests._support import TestBackend


def _raises(cls: type[ua.UnarrayError], builtin: type[BaseException], fn: Any, op: str | None,
            backend: str | None) -> ua.UnarrayError:
    with pytest.raises(cls) as info:
        fn()
    err = info.value
    assert isinstance(err, builtin)
    assert isinstance(err, ua.UnarrayError)
    if op is not None:
        assert err.op == op
        assert str(err).startswith(f"ua.{op}")
    if backend is not None:
        assert err.backend == backend
        assert f"[{backend}]" in str(err)
    return err


def _f32(backend: TestBackend, shape: tuple) -> Any:
    return backend.asarray(np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape))


# -- inputs that are not arrays -----------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["sum", "mean", "min", "argmax", "any", "matrix_transpose", "cumulative_sum"])
def test_unknown_array_type(op: str) -> None:
    err = _raises(ua.UnknownArrayTypeError, TypeError, lambda: getattr(ua, op)([1.0, 2.0]), op, None)
    assert "builtins.list" in str(err) and "ua.asarray" in str(err)


def test_unknown_array_type_in_matmul() -> None:
    _raises(ua.UnknownArrayTypeError, TypeError, lambda: ua.matmul(np.ones((2, 2)), "ab"), "matmul", None)


@pytest.mark.parametrize("value", [3.0, 2, True, 1j])
@pytest.mark.parametrize("op", ["sum", "max", "permute_dims"])
def test_python_scalar_where_array_needed(op: str, value: Any) -> None:
    args = ((0,),) if op == "permute_dims" else ()
    err = _raises(ua.ArgumentTypeError, TypeError, lambda: getattr(ua, op)(value, *args), op, None)
    assert type(value).__name__ in str(err)


def test_matmul_of_two_scalars() -> None:
    _raises(ua.ArgumentTypeError, TypeError, lambda: ua.matmul(2.0, 3.0), "matmul", None)


def test_numpy_scalar_is_an_array() -> None:
    # np.float64 subclasses float, but it is a NumPy array-like: it must dispatch, not be refused.
    assert ua.backend_of(np.float64(2.0)) == "numpy"
    assert float(ua.sum(np.float32(2.0))) == 2.0
    assert ua.device(np.float64(1.0)) == ua.Device("cpu")


# -- shapes ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("s1", "s2"), [((2, 3), (4, 5)), ((3,), (4,)), ((2, 2, 3), (3, 3, 4)), ((2, 3), (2,))])
def test_matmul_shape_mismatch(backend: TestBackend, s1: tuple, s2: tuple) -> None:
    a, b = _f32(backend, s1), _f32(backend, s2)
    _raises(ua.ShapeError, ValueError, lambda: ua.matmul(a, b), "matmul", backend.name)


def test_matmul_zero_dim(backend: TestBackend) -> None:
    a = _f32(backend, ())
    _raises(ua.UnarrayError, ValueError, lambda: ua.matmul(a, a), "matmul", backend.name)


@pytest.mark.parametrize("op", ["sum", "prod", "mean", "max", "any", "argmax"])
@pytest.mark.parametrize("axis", [2, -3])
def test_axis_out_of_range(backend: TestBackend, op: str, axis: int) -> None:
    x = _f32(backend, (2, 3))
    _raises(ua.UnarrayError, ValueError, lambda: getattr(ua, op)(x, axis=axis), op, backend.name)


@pytest.mark.parametrize("op", ["sum", "max", "all"])
def test_duplicate_axes(backend: TestBackend, op: str) -> None:
    x = _f32(backend, (2, 3))
    _raises(ua.UnarrayError, ValueError, lambda: getattr(ua, op)(x, axis=(0, -2)), op, backend.name)


def test_matrix_transpose_needs_2d(backend: TestBackend) -> None:
    x = _f32(backend, (3,))
    _raises(ua.UnarrayError, ValueError, lambda: ua.matrix_transpose(x), "matrix_transpose", backend.name)


def test_permute_dims_wrong_length(backend: TestBackend) -> None:
    x = _f32(backend, (2, 3))
    _raises(ua.UnarrayError, ValueError, lambda: ua.permute_dims(x, (0,)), "permute_dims", backend.name)


@pytest.mark.parametrize("op", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_needs_axis_beyond_1d(backend: TestBackend, op: str) -> None:
    x = _f32(backend, (2, 3))
    _raises(ua.UnarrayError, ValueError, lambda: getattr(ua, op)(x), op, backend.name)


# -- empty reductions without identity -------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["min", "max", "argmin", "argmax"])
@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((0, 3), 0), ((2, 0), -1), ((0, 3), None)])
def test_empty_reduction(backend: TestBackend, op: str, shape: tuple, axis: Any) -> None:
    x = backend.asarray(np.ones(shape, dtype=np.float32))
    err = _raises(ua.EmptyReductionError, ValueError, lambda: getattr(ua, op)(x, axis=axis), op, backend.name)
    assert "zero elements" in str(err)


@pytest.mark.parametrize("op", ["min", "max"])
def test_empty_tuple_axis_reduction(backend: TestBackend, op: str) -> None:
    x = backend.asarray(np.ones((0, 3), dtype=np.float32))
    _raises(ua.EmptyReductionError, ValueError, lambda: getattr(ua, op)(x, axis=(0, 1)), op, backend.name)
    # Reducing only the non-empty axis is fine: the result is empty.
    assert backend.to_numpy(getattr(ua, op)(x, axis=1)).shape == (0,)


# -- dtypes -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float128", "notadtype", object, 3])
@pytest.mark.parametrize("op", ["sum", "prod", "cumulative_sum"])
def test_bad_dtype_argument(backend: TestBackend, op: str, dtype: Any) -> None:
    x = _f32(backend, (3,))
    _raises(ua.DTypeError, TypeError, lambda: getattr(ua, op)(x, dtype=dtype), op, backend.name)


def test_bad_astype(backend: TestBackend) -> None:
    x = _f32(backend, (3,))
    _raises(ua.DTypeError, TypeError, lambda: ua.astype(x, "nope"), "astype", backend.name)


# -- devices --------------------------------------------------------------------------------------------------------


def _meta() -> Any:
    torch = pytest.importorskip("torch")
    return torch.ones((2, 2), device="meta")


def test_device_mismatch_numpy_leads() -> None:
    err = _raises(ua.DeviceMismatchError, ValueError, lambda: ua.matmul(np.ones((2, 2)), _meta()), "matmul", "numpy")
    assert "meta" in str(err) and "ua.to" in str(err)


def test_device_mismatch_torch_leads() -> None:
    _raises(ua.DeviceMismatchError, ValueError, lambda: ua.add(_meta(), np.ones((2, 2))), "add", "torch")


def test_device_mismatch_within_torch() -> None:
    import torch

    cpu = torch.ones((2, 2))
    _raises(ua.DeviceMismatchError, ValueError, lambda: ua.add(cpu, _meta()), "add", "torch")
    _raises(ua.DeviceMismatchError, ValueError, lambda: ua.where(cpu > 0, cpu, _meta()), "where", "torch")


def test_native_cross_device_error_is_device_mismatch() -> None:
    # What torch raises for cuda @ cpu on a GPU machine, mapped without a GPU.
    from unarray import _backends
    from unarray._dispatch import fail

    native = RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                          "cuda:0 and cpu!")
    err = fail("matmul", _backends.get("torch"), native)
    assert isinstance(err, ua.DeviceMismatchError) and isinstance(err, ValueError)
    assert str(err).startswith("ua.matmul [torch]") and "cuda:0" in str(err)


def test_device_of_fake_device() -> None:
    d = ua.device(_meta())
    assert d != ua.Device("cpu")
    assert d.kind == "meta"


# -- backends and policies ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nosuch", "Torch", ""])
def test_unknown_backend_name(name: str) -> None:
    err = _raises(ua.BackendNotAvailableError, ImportError, lambda: ua.use(name), "use", None)
    assert "numpy" in str(err)  # the message lists the known backends
    _raises(ua.BackendNotAvailableError, ImportError, lambda: ua.zeros(2, backend=name), "zeros", None)


def test_unknown_backend_name_leaves_default() -> None:
    before = type(ua.zeros(1))
    with pytest.raises(ua.BackendNotAvailableError):
        ua.use("nosuch")
    assert type(ua.zeros(1)) is before


@pytest.mark.parametrize("policy", ["fp8", "HIGHEST", "medium"])
def test_bad_precision_policy_per_call(backend: TestBackend, policy: str) -> None:
    a = _f32(backend, (2, 2))
    err = _raises(ua.ArgumentError, ValueError, lambda: ua.matmul(a, a, precision=policy), "matmul", backend.name)
    assert repr(policy) in str(err) and "highest" in str(err)


def test_bad_precision_policy_scope() -> None:
    with pytest.raises(ua.ArgumentError) as info:
        ua.precision("fp8")  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    assert "'fp8'" in str(info.value)
    assert ua.get_precision() == "highest"


def test_error_hierarchy() -> None:
    pairs = {ua.ArgumentError: ValueError, ua.ArgumentTypeError: TypeError, ua.UnknownArrayTypeError: TypeError,
             ua.BackendNotAvailableError: ImportError, ua.DTypeError: TypeError, ua.ShapeError: ValueError,
             ua.EmptyReductionError: ValueError, ua.DeviceMismatchError: ValueError, ua.HandoffError: BufferError,
             ua.TracerHandoffError: TypeError, ua.UnsupportedError: NotImplementedError}
    for cls, builtin in pairs.items():
        assert issubclass(cls, ua.UnarrayError) and issubclass(cls, builtin), cls
        err = cls("boom", op="sum", backend="torch")
        assert str(err) == "ua.sum [torch]: boom" and err.op == "sum" and err.backend == "torch"


# -- inputs the standard has no place for: typed errors, not a result of a dtype no op takes ------------
def test_data_of_no_standard_dtype_is_refused_by_asarray() -> None:
    for obj in (object(), ["a", "b"], np.array(["a"]), np.array(["2020-01-01"], dtype="datetime64[D]")):
        err = _raises(ua.DTypeError, TypeError, lambda o=obj: ua.asarray(o), "asarray", "numpy")
        assert "pass numbers" in str(err)
    assert ua.asarray([1.5, 2.5]).dtype == np.float64  # numbers still pass


def test_full_refuses_a_fill_value_that_is_no_number() -> None:
    for value in ("x", None, b"1"):
        _raises(ua.ArgumentTypeError, TypeError, lambda v=value: ua.full((2,), v), "full", None)
    assert ua.full(2, np.float32(1.5)).dtype == np.float32  # NumPy scalars are numbers


@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_refuse_fewer_than_two_dimensions(op: str) -> None:
    x = np.arange(3.0)
    err = _raises(ua.ShapeError, ValueError, lambda: getattr(ua, op)(x), op, "numpy")
    assert "(3,)" in str(err)
    assert np.array_equal(x, np.arange(3.0))


def test_dtype_questions_about_non_dtypes_raise_typed_errors() -> None:
    _raises(ua.DTypeError, TypeError, lambda: ua.can_cast("bad", ua.int8), "can_cast", None)
    _raises(ua.DTypeError, TypeError, lambda: ua.isdtype("x", "bool"), "isdtype", None)
    _raises(ua.ArgumentError, ValueError, lambda: ua.isdtype(ua.int8, "nope"), "isdtype", None)
    assert ua.can_cast(np.ones(2, np.int8), ua.int16)  # arrays still answer by their dtype
