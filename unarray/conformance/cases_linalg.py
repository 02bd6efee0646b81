"""Manipulation, indexing, searching, sets, sorting and utility functions, ``ua.linalg`` and
``ua.fft``. Results that the standard leaves unordered or non-unique (unique values,
eigenvectors, QR/SVD factors) are compared through invariants."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from unarray.conformance.cases_common import Case, Inputs, Profile, arr, dim, shape
from unarray.conformance.cases_hot import DT
from unarray.conformance.cases_namespace import arrays, bshape, per_dtype

ALL = "bool int float complex"
NUM = "int float complex"


def manipulation_cases(p: Profile) -> Iterator[Case]:
    def two(r: np.random.Generator, d: str) -> tuple[Any, Any]:
        s = shape(r, 2)
        return arr(r, s, d), arr(r, s, d)

    yield from per_dtype("broadcast_arrays", "two arrays", ALL, p,
                         lambda r, d: (lambda s: ((arr(r, s, d), arr(r, bshape(r, s), d)), {}))(shape(r, 3)))
    yield from per_dtype("broadcast_to", "to a larger shape", ALL, p, arrays((1, 3), shape=(2, 4, 3)))
    yield from per_dtype("broadcast_shapes", "shapes only", "float", p,
                         lambda r, d: (((2, 1, 3), (4, 1)), {}), compare="exact", check_dtype=False)
    yield from per_dtype("concat", "axis=1", ALL, p, lambda r, d: ((list(two(r, d)),), {"axis": 1}))
    yield from per_dtype("concat", "axis=None", "float", p, lambda r, d: ((list(two(r, d)),), {"axis": None}))
    yield from per_dtype("stack", "axis=-1", ALL, p, lambda r, d: ((list(two(r, d)),), {"axis": -1}))
    yield from per_dtype("expand_dims", "axis=1", ALL, p, arrays(2, axis=1))
    yield from per_dtype("flip", "axis=None", ALL, p, arrays(3))
    yield from per_dtype("flip", "axis=(0, 2)", "float", p, arrays(3, axis=(0, 2)))
    yield from per_dtype("moveaxis", "0 -> -1", ALL, p, lambda r, d: ((arr(r, shape(r, 3), d), 0, -1), {}))
    yield from per_dtype("repeat", "int repeats, axis=0", ALL, p,
                         lambda r, d: ((arr(r, shape(r, 2), d), 2), {"axis": 0}))
    yield from per_dtype("repeat", "array repeats, axis=None", "float", p,
                         lambda r, d: (lambda x: ((x, r.integers(0, 3, size=x.size)), {}))(arr(r, shape(r, 2), d)))
    yield from per_dtype("reshape", "to (-1,)", ALL, p, arrays(3, shape=(-1,)))
    yield from per_dtype("roll", "shift=2, axis=0", ALL, p, arrays(2, shift=2, axis=0))
    yield from per_dtype("roll", "shift=1, axis=None", "float", p, arrays(2, shift=1))
    yield from per_dtype("squeeze", "axis=1", ALL, p, arrays((3, 1, 2), axis=1))
    yield from per_dtype("tile", "(2, 1, 3)", ALL, p, lambda r, d: ((arr(r, shape(r, 2), d), (2, 1, 3)), {}))
    yield from per_dtype("unstack", "axis=1", ALL, p, arrays(3, axis=1))
    yield from per_dtype("linalg.matrix_transpose", "ndim 3", "float", p, arrays(3))


def _sorted_unique(a: Any) -> Any:
    return np.sort(a.ravel()) if a.dtype.kind != "c" else np.sort_complex(a.ravel())


def _cmp_unique_values(actual: Any, expected: Any, args: Any) -> float:
    return 0.0 if np.array_equal(_sorted_unique(actual), _sorted_unique(expected)) else float("inf")


def _cmp_unique_counts(actual: Any, expected: Any, args: Any) -> float:
    va, ca = actual[0].ravel(), actual[1].ravel()
    o, oe = np.argsort(va, kind="stable"), np.argsort(expected[0].ravel(), kind="stable")
    same = np.array_equal(va[o], expected[0].ravel()[oe]) and np.array_equal(ca[o], expected[1].ravel()[oe])
    return 0.0 if same else float("inf")


def _cmp_unique_inverse(actual: Any, expected: Any, args: Any) -> float:
    values, inverse = actual[0], actual[1]
    ok = np.array_equal(values.ravel()[inverse.ravel()].reshape(args[0].shape), args[0])
    return 0.0 if ok and np.array_equal(_sorted_unique(values), _sorted_unique(expected[0])) else float("inf")


def _cmp_unique_all(actual: Any, expected: Any, args: Any) -> float:
    values, indices, inverse, counts = (np.asarray(a) for a in actual)
    indexed = 0.0 if np.array_equal(args[0].ravel()[indices.ravel()], values.ravel()) else float("inf")
    return max(indexed, _cmp_unique_inverse((values, inverse), expected, args),
               _cmp_unique_counts((values, counts), (expected[0], expected[3]), args))


def searching_cases(p: Profile) -> Iterator[Case]:
    ints = "int float"
    yield from per_dtype("take", "axis=1", ALL, p, lambda r, d: (lambda x: (
        (x, r.integers(0, x.shape[1], size=4)), {"axis": 1}))(arr(r, shape(r, 2), d)))
    yield from per_dtype("take_along_axis", "argsort indices, axis=-1", ALL, p, lambda r, d: (lambda x: (
        (x, np.argsort(r.random(x.shape), axis=-1)), {"axis": -1}))(arr(r, shape(r, 2), d)))
    yield from per_dtype("count_nonzero", "axis=None / 1", ALL, p, lambda r, d: (
        (np.where(r.random((3, 4)) < 0.4, np.zeros((), d), arr(r, (3, 4), d)),), {"axis": 1}))
    yield from per_dtype("nonzero", "2-d", ALL, p, lambda r, d: (
        (np.where(r.random((3, 4)) < 0.4, np.zeros((), d), arr(r, (3, 4), d)),), {}))
    yield from per_dtype("searchsorted", "side=right", ints, p, lambda r, d: (
        (np.sort(arr(r, (7,), d, 1, 20)), arr(r, (4,), d, 1, 20)), {"side": "right"}))
    yield from per_dtype("where", "broadcast condition", ALL, p, lambda r, d: (lambda s: (
        (r.random(s) < 0.5, arr(r, s, d), arr(r, bshape(r, s), d)), {}))(shape(r, 2)))
    yield from per_dtype("isin", "x1 in x2", "int float", p, arrays((6,), (4,), lo=1, hi=6))
    uniq = arrays((3, 5), lo=1, hi=4)
    yield from per_dtype("unique_values", "sorted for comparison", ints, p, uniq, compare=_cmp_unique_values)
    yield from per_dtype("unique_counts", "sorted for comparison", ints, p, uniq, compare=_cmp_unique_counts)
    yield from per_dtype("unique_inverse", "values[inverse] == x", ints, p, uniq, compare=_cmp_unique_inverse)
    yield from per_dtype("unique_all", "indices, inverse, counts", ints, p, uniq, compare=_cmp_unique_all)
    yield from per_dtype("sort", "axis=-1", ints, p, arrays(2, lo=1, hi=50))
    yield from per_dtype("sort", "descending, axis=0", ints, p, arrays(2, lo=1, hi=50, axis=0, descending=True),
                         ref=lambda x, axis, descending: np.flip(np.sort(x, axis=axis), axis=axis))
    yield from per_dtype("argsort", "stable with ties", ints, p, arrays(2, lo=1, hi=3),
                         ref=lambda x: np.argsort(x, axis=-1, stable=True))
    yield from per_dtype("argsort", "descending, stable with ties", ints, p, arrays(2, lo=1, hi=3, descending=True),
                         ref=lambda x, descending: _desc_argsort(x))
    yield from per_dtype("diff", "n=1", NUM, p, arrays(2))
    yield from per_dtype("diff", "n=2, prepend, axis=0", "float", p, lambda r, d: (lambda x: (
        (x,), {"n": 2, "axis": 0, "prepend": arr(r, (1, x.shape[1]), d)}))(arr(r, (4, 3), d)))
    yield from per_dtype("tensordot", "axes=1", NUM, p, arrays((3, 4), (4, 2), axes=1), n_terms=4)
    yield from per_dtype("tensordot", "axes=([1, 2], [0, 1])", "float", p,
                         arrays((2, 3, 4), (3, 4, 5), axes=([1, 2], [0, 1])), n_terms=12)
    yield from per_dtype("vecdot", "axis=-1 (conjugates x1)", NUM, p, arrays((3, 4), (2, 1, 4)), n_terms=4)


def _desc_argsort(x: Any) -> Any:
    # Note: a stable descending sort keeps equal elements in their original order.
    n = x.shape[-1]
    keys = -x.astype(np.int64) if x.dtype.kind in "biu" else -x
    return np.argsort(keys, axis=-1, stable=True) if n else np.argsort(keys, axis=-1)


def _mat(n_lo: int = 2, n_hi: int = 5, batch: bool = True) -> Any:
    # Well conditioned: random entries plus n on the diagonal.
    def draw(rng: np.random.Generator, d: str) -> Inputs:
        n = dim(rng, n_lo, n_hi)
        b = (dim(rng, 1, 2),) if batch else ()
        a = arr(rng, (*b, n, n), d) + (2 * n * np.eye(n)).astype(d)
        return (a,), {}
    return draw


def _spd(rng: np.random.Generator, d: str) -> Inputs:
    n = dim(rng, 2, 5)
    a = arr(rng, (n, n), d)
    return ((a @ np.conj(a.T) + n * np.eye(n)).astype(d),), {}


def _herm(rng: np.random.Generator, d: str) -> Inputs:
    n = dim(rng, 2, 5)
    a = arr(rng, (n, n), d)
    return ((a + np.conj(a.T)).astype(d),), {}


def _cmp_eigvals(actual: Any, expected: Any, args: Any) -> float:
    a, e = np.sort_complex(np.asarray(actual, np.complex128).ravel()), np.sort_complex(expected.ravel())
    return float(np.max(np.abs(a - e)) / max(np.max(np.abs(e)), 1e-300))


def _cmp_eig(actual: Any, expected: Any, args: Any) -> float:
    w, v = (np.asarray(t, np.complex128) for t in actual)
    x = args[0]
    resid = np.max(np.abs(x @ v - v * w[..., None, :])) / max(np.max(np.abs(x)), 1e-300)
    return max(float(resid), _cmp_eigvals(w, np.linalg.eigvals(x), args))


def _cmp_eigh(actual: Any, expected: Any, args: Any) -> float:
    w, v = (np.asarray(t) for t in actual)
    x = args[0]
    resid = np.max(np.abs(x @ v - v * w[..., None, :])) / max(np.max(np.abs(x)), 1e-300)
    return max(float(resid), float(np.max(np.abs(w - expected[0])) / np.max(np.abs(expected[0]))))


def _cmp_qr(actual: Any, expected: Any, args: Any) -> float:
    q, r = (np.asarray(t) for t in actual)
    x = args[0]
    upper = np.max(np.abs(np.tril(r, -1))) if r.size else 0.0
    return float(max(np.max(np.abs(q @ r - x)), upper) / np.max(np.abs(x)))


def _cmp_svd(actual: Any, expected: Any, args: Any) -> float:
    u, s, vh = (np.asarray(t) for t in actual)
    x = args[0]
    k = s.shape[-1]
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    return float(max(np.max(np.abs(rec - x)), np.max(np.abs(s - expected[1]))) / np.max(np.abs(x)))


def linalg_cases(p: Profile) -> Iterator[Case]:
    fc = "float complex"
    la = {"tol_factor": 8.0, "n_terms": 25}
    mat = _mat()
    for name in ("det", "inv", "pinv", "matrix_rank", "svdvals"):
        yield from per_dtype(f"linalg.{name}", "batched, well conditioned", fc, p, mat, **la)
    yield from per_dtype("linalg.slogdet", "sign, logabsdet", fc, p, mat, **la)
    yield from per_dtype("linalg.cholesky", "Hermitian positive definite", fc, p, _spd, **la)
    yield from per_dtype("linalg.cholesky", "upper=True", "float", p,
                         lambda r, d: (_spd(r, d)[0], {"upper": True}),
                         ref=lambda x, upper: np.swapaxes(np.linalg.cholesky(x), -1, -2), **la)
    yield from per_dtype("linalg.eigh", "values + A v = v w", fc, p, _herm, compare=_cmp_eigh, **la)
    yield from per_dtype("linalg.eigvalsh", "Hermitian", fc, p, _herm, **la)
    yield from per_dtype("linalg.eig", "A v = v w", fc, p, _mat(batch=False), compare=_cmp_eig, check_dtype=False,
                         **la)
    yield from per_dtype("linalg.eigvals", "general", fc, p, _mat(batch=False), compare=_cmp_eigvals,
                         check_dtype=False, **la)
    yield from per_dtype("linalg.qr", "reduced, Q R = A", fc, p, arrays((5, 3)), compare=_cmp_qr, **la)
    yield from per_dtype("linalg.svd", "full_matrices=False, U S Vh = A", fc, p,
                         arrays((4, 3), full_matrices=False), compare=_cmp_svd, **la)
    yield from per_dtype("linalg.solve", "matrix right-hand side", fc, p,
                         lambda r, d: (lambda a: ((a, arr(r, (a.shape[-1], 2), d)), {}))(mat(r, d)[0][0]),
                         ref=np.linalg.solve, **la)
    yield from per_dtype("linalg.matrix_power", "n=3", "int float complex", p,
                         lambda r, d: ((arr(r, (3, 3), d, 1, 3), 3), {}), **la)
    yield from per_dtype("linalg.matrix_power", "n=-2", "float", p, lambda r, d: ((mat(r, d)[0][0], -2), {}), **la)
    for ord_ in ("fro", "nuc", 1, 2, np.inf):
        yield from per_dtype("linalg.matrix_norm", f"ord={ord_}", "float" if ord_ != "fro" else fc, p,
                             arrays((2, 3, 4), ord=ord_), **la)
    for ord_ in (1, 2, np.inf, 0.5):
        yield from per_dtype("linalg.vector_norm", f"ord={ord_}, axis=1", "float" if ord_ != 2 else fc, p,
                             arrays((3, 4, 2), ord=ord_, axis=1), **la)
    yield from per_dtype("linalg.cross", "3-vectors, broadcast", NUM, p, arrays((2, 3), (1, 3)))
    yield from per_dtype("linalg.diagonal", "offset=1", ALL, p, arrays((2, 3, 4), offset=1))
    yield from per_dtype("linalg.outer", "vectors", NUM, p, arrays((3,), (4,)))
    yield from per_dtype("linalg.trace", "offset=0", NUM, p, arrays(3), n_terms=5)
    yield from per_dtype("linalg.vecdot", "axis=-1", NUM, p, arrays((3, 4), (3, 4)), n_terms=4)
    yield from per_dtype("linalg.tensordot", "axes=1", "float", p, arrays((3, 4), (4, 2), axes=1), n_terms=4)
    yield from per_dtype("linalg.matmul", "(M,K)@(K,N)", NUM, p, arrays((3, 4), (4, 2), lo=1, hi=3),
                         ref=lambda a, b: np.matmul(a, b), n_terms=4)


def _freq_ref(name: str) -> Any:
    f = getattr(np.fft, name)
    return lambda n, d, dtype: f(n, d).astype(dtype)


def fft_cases(p: Profile) -> Iterator[Case]:
    fc = "float complex"
    ft = {"n_terms": 64, "tol_factor": 2.0}
    for name in ("fft", "ifft"):
        yield from per_dtype(f"fft.{name}", "n=None, axis=-1, norm=backward", "complex", p, arrays(2), **ft)
        yield from per_dtype(f"fft.{name}", "n=8, axis=0, norm=ortho", "complex", p,
                             arrays(2, n=8, axis=0, norm="ortho"), **ft)
    for name in ("fftn", "ifftn"):
        yield from per_dtype(f"fft.{name}", "axes=(0, 1), norm=forward", "complex", p,
                             arrays(3, axes=(0, 1), norm="forward"), **ft)
    yield from per_dtype("fft.rfft", "n=None", "float", p, arrays(2), **ft)
    yield from per_dtype("fft.rfftn", "axes=(0, 1)", "float", p,
                         lambda r, d: ((arr(r, shape(r, 2, 2, 6), d),), {"axes": (0, 1)}), **ft)
    yield from per_dtype("fft.irfft", "n=10", "complex", p, arrays((3, 6), n=10), **ft)
    yield from per_dtype("fft.irfftn", "s=(4, 6)", "complex", p,
                         arrays((4, 4), s=(4, 6), axes=(0, 1)), **ft)
    yield from per_dtype("fft.hfft", "n=8", "complex", p, arrays((5,), n=8), **ft)
    yield from per_dtype("fft.ihfft", "n=None", "float", p, arrays(1), **ft)
    for name in ("fftshift", "ifftshift"):
        yield from per_dtype(f"fft.{name}", "axes=None", fc, p, arrays(2))
    for name in ("fftfreq", "rfftfreq"):
        yield from per_dtype(f"fft.{name}", "n, d=0.5, dtype", "float", p,
                             lambda r, d: ((dim(r, 2, 11),), {"d": 0.5, "dtype": DT(d)}), creation=True,
                             ref=_freq_ref(name))
