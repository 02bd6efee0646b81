"""The whole namespace, smoke-tested per backend: every public function of ``unarray``, ``ua.linalg`` and
``ua.fft`` runs on a real input of each backend, returns that backend's arrays, and agrees with the
standard's reference implementation (array-api-strict, which computes with NumPy)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import array_api_strict as strict
import numpy as np
import pytest

import unarray as ua
from tests._support import TestBackend

ROOT = Path(__file__).resolve().parents[2]
_STRICT_ONLY = {"ArrayAPIStrictFlags", "get_array_api_strict_flags", "reset_array_api_strict_flags",
                "set_array_api_strict_flags"}
_STRICT_ALL = [n for n in strict.__all__ if n not in _STRICT_ONLY]
_LINALG = list(strict.linalg.__all__)
_FFT = list(strict.fft.__all__)
_FFT_ARRAYS = [n for n in _FFT if not n.endswith("freq")]


def test_generated_front_end_is_current() -> None:
    out = subprocess.run([sys.executable, "tools/gen_frontend.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_all_covers_the_standard() -> None:
    missing = [n for n in _STRICT_ALL if n not in ua.__all__ and not n.startswith("__")]
    assert missing == []
    assert callable(ua.__array_namespace_info__)
    assert ua.__array_api_version__ == "2025.12"
    for n in ua.__all__:
        assert hasattr(ua, n), n


@pytest.mark.parametrize(("ext", "names"), [("linalg", _LINALG), ("fft", _FFT)])
def test_extensions_cover_the_standard(ext: str, names: list[str]) -> None:
    mod = getattr(ua, ext)
    assert [n for n in names if not callable(getattr(mod, n, None))] == []
    assert set(names) <= set(mod.__all__)


def test_constants_and_dtypes() -> None:
    assert ua.pi == np.pi and ua.e == np.e and np.isinf(ua.inf) and np.isnan(ua.nan) and ua.newaxis is None
    for n in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
              "float64", "complex64", "complex128"]:
        assert getattr(ua, n) == np.dtype(n)


# -- inputs per function ----------------------------------------------------------------------------------------

F = np.float32
_U = np.array([[0.25, 0.5, 0.75], [0.3, 0.6, 0.9]], dtype=F)  # in (0, 1): every unary float function is defined
_V = np.array([[1.5, 2.0, 3.0], [1.25, 4.0, 2.5]], dtype=F)
_I = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
_J = np.array([[3, 1, 2], [1, 2, 1]], dtype=np.int32)
_B = np.array([[True, False, True], [False, False, True]])
_C = (_U + 1j * _V).astype(np.complex64)
_SQ = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], dtype=F)  # symmetric positive definite
_S = np.array([3.0, 1.0, 2.0, 1.0, 5.0, 3.0], dtype=F)

A = "array"  # marks an argument that is an array (made per backend)

_UNARY_INT = {"bitwise_invert"}
_UNARY_CPLX = {"conj", "real", "imag"}
_UNARY_GE1 = {"acosh"}
_BINARY_INT = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"}
_BINARY_BOOL = {"logical_and", "logical_or", "logical_xor"}

# name -> (args, kwargs); numpy arrays become backend arrays (and strict arrays for the reference).
CASES: dict[str, tuple[tuple, dict]] = {
    "logical_not": ((_B,), {}),
    "clip": ((_V,), {"min": 1.6, "max": 3.0}),
    "nextafter": ((_U, _V), {}),
    "pow": ((_V, _U), {}),
    "take": ((_V, np.array([2, 0], dtype=np.int32)), {"axis": 1}),
    "take_along_axis": ((_V, np.array([[2, 0], [1, 1]], dtype=np.int32)), {"axis": 1}),
    "tensordot": ((_V, _U.T.copy()), {"axes": 1}),
    "vecdot": ((_V, _U), {}),
    "matmul": ((_V, _U.T.copy()), {}),
    "matrix_transpose": ((_V,), {}),
    "broadcast_arrays": ((_V, _S[:3].copy()), {}),
    "broadcast_to": ((_S[:3].copy(), (2, 3)), {}),
    "concat": (([_V, _U],), {"axis": -1}),
    "expand_dims": ((_V,), {"axis": 1}),
    "flip": ((_V,), {"axis": 0}),
    "moveaxis": ((_V[None], 0, -1), {}),
    "permute_dims": ((_V,), {"axes": (1, 0)}),
    "repeat": ((_V, 2), {"axis": 1}),
    "reshape": ((_V, (3, 2)), {}),
    "roll": ((_V, 1), {"axis": 1}),
    "squeeze": ((_V[None],), {"axis": 0}),
    "stack": (([_V, _U],), {"axis": 1}),
    "tile": ((_V, (2, 1)), {}),
    "unstack": ((_V,), {"axis": 1}),
    "argmax": ((_V,), {"axis": 1}),
    "argmin": ((_V,), {"axis": 0}),
    "count_nonzero": ((_J - 1,), {"axis": 1}),
    "nonzero": ((_J - 1,), {}),
    "searchsorted": ((np.sort(_S), np.array([2.0, 0.5, 9.0], dtype=F)), {}),
    "where": ((_B, _V, _U), {}),
    "isin": ((_J, _I[0].copy()), {}),
    "unique_all": ((_S,), {}),
    "unique_counts": ((_S,), {}),
    "unique_inverse": ((_S,), {}),
    "unique_values": ((_S,), {}),
    "argsort": ((_S,), {"stable": True}),
    "sort": ((_V,), {"axis": 0, "descending": True}),
    "cumulative_prod": ((_V,), {"axis": 1}),
    "cumulative_sum": ((_I,), {"axis": 0, "include_initial": True}),
    "max": ((_V,), {"axis": 0}),
    "min": ((_V,), {"axis": -1, "keepdims": True}),
    "mean": ((_V,), {}),
    "prod": ((_V,), {"axis": 1}),
    "std": ((_V,), {"correction": 1}),
    "sum": ((_I,), {"axis": (0, 1)}),
    "var": ((_V,), {"axis": 0}),
    "all": ((_B,), {"axis": 0}),
    "any": ((_B,), {"axis": 1}),
    "diff": ((_V,), {"axis": 1}),
    "astype": ((_V, "int32"), {}),
    "empty_like": ((_V,), {}),
    "full_like": ((_V, 7.0), {}),
    "ones_like": ((_I,), {}),
    "zeros_like": ((_V,), {}),
    "tril": ((_SQ,), {"k": -1}),
    "triu": ((_SQ,), {}),
    "meshgrid": ((_S[:3].copy(), _S[3:].copy()), {"indexing": "ij"}),
    "round": ((_V * 3,), {}),
}

LINALG: dict[str, tuple[tuple, dict]] = {
    "cholesky": ((_SQ,), {}), "cross": ((_V, _U), {}), "det": ((_SQ,), {}), "diagonal": ((_SQ,), {"offset": 1}),
    "eigh": ((_SQ,), {}), "eigvalsh": ((_SQ,), {}), "inv": ((_SQ,), {}), "matmul": ((_SQ, _SQ), {}),
    "matrix_norm": ((_SQ,), {"ord": "fro"}), "matrix_power": ((_SQ, 3), {}), "matrix_rank": ((_SQ,), {}),
    "matrix_transpose": ((_V,), {}), "outer": ((_S, _S[:3].copy()), {}), "pinv": ((_V,), {}), "qr": ((_SQ,), {}),
    "slogdet": ((_SQ,), {}), "solve": ((_SQ, _V.T.copy()), {}), "svd": ((_V,), {"full_matrices": False}),
    "svdvals": ((_V,), {}), "tensordot": ((_V, _U.T.copy()), {"axes": 1}), "trace": ((_SQ,), {}),
    "vecdot": ((_V, _U), {}), "vector_norm": ((_V,), {"axis": 1, "ord": 2}),
    "eig": ((_SQ,), {}), "eigvals": ((_SQ,), {}),
}

_CV = (_V[0] + 1j * _U[0]).astype(np.complex64)
FFT: dict[str, tuple[tuple, dict]] = {
    "fft": ((_CV,), {}), "ifft": ((_CV,), {}), "fftn": ((_C,), {}), "ifftn": ((_C,), {}),
    "rfft": ((_V,), {}), "irfft": ((_C,), {}), "rfftn": ((_V,), {}), "irfftn": ((_C,), {}),
    "hfft": ((_CV,), {}), "ihfft": ((_S,), {}), "fftshift": ((_V,), {}), "ifftshift": ((_S,), {}),
}

# Functions whose result depends on nothing but the arguments' shape (no values to compare).
_SHAPE_ONLY = {"empty_like"}
# Results whose sign or order is not unique: compared through an invariant instead.
_INVARIANT = {"eigh", "qr", "svd", "eig", "eigvals"}


def _case(name: str) -> tuple[tuple, dict]:
    if name in CASES:
        return CASES[name]
    fn = getattr(strict, name)
    n_pos = sum(1 for p in inspect.signature(fn).parameters.values() if p.kind is p.POSITIONAL_ONLY)
    if name in _UNARY_INT:
        return (_I,), {}
    if name in _UNARY_CPLX:
        return (_C,), {}
    if name in _UNARY_GE1:
        return (_V,), {}
    if name in _BINARY_INT:
        return (_I, _J), {}
    if name in _BINARY_BOOL:
        return (_B, _B[::-1].copy()), {}
    return ((_U,) if n_pos == 1 else (_V, _U)), {}


def _convert(value: Any, make: Any) -> Any:
    if isinstance(value, np.ndarray):
        return make(value)
    if isinstance(value, list):
        return [_convert(v, make) for v in value]
    if isinstance(value, str) and value in ("int32",):
        return getattr(ua, value) if make is not strict.asarray else getattr(strict, value)
    return value


def _flatten(result: Any) -> list[Any]:
    if isinstance(result, (tuple, list)):
        return [r for part in result for r in _flatten(part)]
    return [result]


def _check(backend: TestBackend, got: Any, expected: Any, name: str) -> None:
    got_parts, exp_parts = _flatten(got), _flatten(expected)
    assert len(got_parts) == len(exp_parts), name
    for g, e in zip(got_parts, exp_parts, strict=True):
        if isinstance(e, (int, float, tuple)) and not hasattr(e, "_array"):
            assert g == e, name
            continue
        assert backend.is_native(g), (name, type(g))
        e_np = np.asarray(e._array)
        g_np = backend.to_numpy(g)
        assert g_np.shape == e_np.shape, (name, g_np.shape, e_np.shape)
        if name in _SHAPE_ONLY:
            continue
        if e_np.dtype.kind in "fc":
            np.testing.assert_allclose(g_np, e_np, rtol=2e-5, atol=2e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(g_np, e_np, err_msg=name)


def _run(backend: TestBackend, fn: Any, ref: Any, name: str, args: tuple, kwargs: dict) -> None:
    got = fn(*[_convert(a, backend.asarray) for a in args], **kwargs)
    expected = ref(*[_convert(a, strict.asarray) for a in args], **kwargs)
    if name in _INVARIANT:
        _check_invariant(backend, got, name, args)
    else:
        _check(backend, got, expected, name)


def _check_invariant(backend: TestBackend, got: Any, name: str, args: tuple) -> None:
    a = args[0].astype(np.float64)
    parts = [backend.to_numpy(p) for p in _flatten(got)]
    for p in _flatten(got):
        assert backend.is_native(p), (name, type(p))
    if name == "eigh":
        w, v = parts
        np.testing.assert_allclose((v * w) @ v.T, a, atol=1e-4)
    elif name == "qr":
        q, r = parts
        np.testing.assert_allclose(q @ r, a, atol=1e-4)
    elif name == "svd":
        u, s, vh = parts
        np.testing.assert_allclose((u * s) @ vh, a, atol=1e-4)
    else:  # eig, eigvals: eigenvalues as a set
        w = parts[0]
        np.testing.assert_allclose(np.sort_complex(w.astype(np.complex128)),
                                   np.sort_complex(np.linalg.eigvals(a)), rtol=1e-4)


_FUNCS = [n for n in _STRICT_ALL if callable(getattr(strict, n)) and not isinstance(getattr(strict, n), type)
          and n not in {"__array_namespace_info__", "asarray", "arange", "empty", "eye", "full", "linspace",
                        "ones", "zeros", "from_dlpack", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
                        "broadcast_shapes"}]


@pytest.mark.parametrize("name", _FUNCS)
def test_function(backend: TestBackend, name: str) -> None:
    args, kwargs = _case(name)
    _run(backend, getattr(ua, name), getattr(strict, name), name, args, kwargs)


@pytest.mark.parametrize("name", _LINALG)
def test_linalg(backend: TestBackend, name: str) -> None:
    args, kwargs = LINALG[name]
    _run(backend, getattr(ua.linalg, name), getattr(strict.linalg, name), name, args, kwargs)


@pytest.mark.parametrize("name", _FFT_ARRAYS)
def test_fft(backend: TestBackend, name: str) -> None:
    args, kwargs = FFT[name]
    _run(backend, getattr(ua.fft, name), getattr(strict.fft, name), name, args, kwargs)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_fft_freq(backend: TestBackend, name: str) -> None:
    r = getattr(ua.fft, name)(8, d=0.5, backend=backend.name)
    assert backend.is_native(r)
    np.testing.assert_allclose(backend.to_numpy(r), getattr(np.fft, name)(8, d=0.5), rtol=1e-6)


def test_creation(backend: TestBackend) -> None:
    b = backend.name
    checks = [
        (ua.zeros((2, 3), backend=b), np.zeros((2, 3))),
        (ua.ones(3, dtype=ua.int32, backend=b), np.ones(3, dtype=np.int32)),
        (ua.full((2,), 5.0, backend=b), np.full(2, 5.0)),
        (ua.arange(1, 7, 2, backend=b), np.arange(1, 7, 2)),
        (ua.linspace(0.0, 1.0, 5, backend=b), np.linspace(0, 1, 5)),
        (ua.eye(3, k=1, backend=b), np.eye(3, k=1)),
        (ua.asarray([[1.5, 2.0]], backend=b), np.array([[1.5, 2.0]])),
    ]
    for got, expected in checks:
        assert backend.is_native(got), type(got)
        np.testing.assert_allclose(backend.to_numpy(got), expected, rtol=1e-6)
    assert tuple(ua.empty((4, 1), backend=b).shape) == (4, 1)


def test_dtype_functions(backend: TestBackend) -> None:
    x = backend.asarray(_V)
    assert (ua.float64 if backend.has_float64 else ua.float32) == ua.result_type(
        x, ua.float64 if backend.has_float64 else ua.float32)
    assert ua.can_cast(ua.int8, ua.int16) and not ua.can_cast(ua.float32, ua.int8)
    assert ua.finfo(x).bits == 32 and ua.iinfo(ua.int16).max == 2**15 - 1
    assert ua.isdtype(x.dtype, "real floating") and not ua.isdtype(x.dtype, "integral")
    assert ua.broadcast_shapes((2, 1), (3,)) == (2, 3)
