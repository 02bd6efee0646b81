"""Every other public name, at least once per applicable dtype family (bool, int, float,
complex): element-wise functions, creation, data types, indexing, manipulation,
searching, sets, sorting, utility, introspection, ``ua.linalg`` and ``ua.fft``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import numpy as np

from unarray._dtypes import canonical_name
from unarray.conformance.cases_common import Case, Draw, Inputs, Profile, arr, dim, family_of, shape, shape_rng
from unarray.conformance.cases_hot import DT

# name -> (families, lo, hi, signed)
UNARY: dict[str, tuple[str, float, float, bool]] = {
    "abs": ("int float complex", 0.5, 2.0, True),
    "acos": ("float complex", 0.05, 0.9, True),
    "acosh": ("float complex", 1.1, 3.0, False),
    "asin": ("float complex", 0.05, 0.9, True),
    "asinh": ("float complex", 0.1, 3.0, True),
    "atan": ("float complex", 0.1, 3.0, True),
    "atanh": ("float complex", 0.05, 0.9, True),
    "ceil": ("int float", 0.1, 5.0, True),
    "conj": ("float complex", 0.5, 2.0, True),
    "cos": ("float complex", 0.1, 3.0, True),
    "cosh": ("float complex", 0.1, 3.0, True),
    "exp": ("float complex", 0.1, 3.0, True),
    "expm1": ("float complex", 0.1, 3.0, True),
    "floor": ("int float", 0.1, 5.0, True),
    "imag": ("complex", 0.5, 2.0, True),
    "isfinite": ("int float complex", 0.5, 2.0, True),
    "isinf": ("int float complex", 0.5, 2.0, True),
    "isnan": ("int float complex", 0.5, 2.0, True),
    "log": ("float complex", 0.1, 5.0, False),
    "log1p": ("float complex", 0.1, 5.0, False),
    "log2": ("float complex", 0.1, 5.0, False),
    "log10": ("float complex", 0.1, 5.0, False),
    "logical_not": ("bool", 0.5, 2.0, True),
    "negative": ("int float complex", 0.5, 2.0, True),
    "positive": ("int float complex", 0.5, 2.0, True),
    "real": ("float complex", 0.5, 2.0, True),
    "reciprocal": ("float complex", 0.5, 2.0, True),
    "round": ("int float complex", 0.1, 5.0, True),
    "sign": ("int float complex", 0.5, 2.0, True),
    "signbit": ("float", 0.5, 2.0, True),
    "sin": ("float complex", 0.1, 3.0, True),
    "sinh": ("float complex", 0.1, 3.0, True),
    "sqrt": ("float complex", 0.1, 5.0, False),
    "square": ("int float complex", 0.5, 2.0, True),
    "tan": ("float complex", 0.1, 1.2, True),
    "tanh": ("float complex", 0.1, 3.0, True),
    "trunc": ("int float", 0.1, 5.0, True),
    "bitwise_invert": ("bool int", 1, 100, True),
}

# name -> (families, (lo, hi, signed) of x1, (lo, hi, signed) of x2)
_R = (0.5, 2.0, True)
BINARY: dict[str, tuple[str, tuple[float, float, bool], tuple[float, float, bool]]] = {
    **dict.fromkeys(("add", "subtract", "multiply"), ("int float complex", _R, _R)),
    "divide": ("float complex", _R, _R),
    "pow": ("int float complex", (1, 4, True), (0, 3, False)),
    **dict.fromkeys(("atan2", "copysign", "hypot", "logaddexp", "nextafter"), ("float", _R, _R)),
    **dict.fromkeys(("maximum", "minimum"), ("int float", (1, 9, True), (1, 9, True))),
    **dict.fromkeys(("floor_divide", "remainder"), ("int float", (1, 50, True), (1, 7, True))),
    **dict.fromkeys(("equal", "not_equal"), ("bool int float complex", (1, 3, True), (1, 3, True))),
    **dict.fromkeys(("greater", "greater_equal", "less", "less_equal"), ("int float", (1, 3, True), (1, 3, True))),
    **dict.fromkeys(("logical_and", "logical_or", "logical_xor"), ("bool", _R, _R)),
    **dict.fromkeys(("bitwise_and", "bitwise_or", "bitwise_xor"), ("bool int", (1, 100, True), (1, 100, True))),
    **dict.fromkeys(("bitwise_left_shift", "bitwise_right_shift"), ("int", (1, 100, True), (0, 5, False))),
}


def bshape(rng: np.random.Generator, s: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts against ``s``: some dimensions 1, sometimes a leading one dropped."""
    g = shape_rng(rng)
    out = tuple(1 if g.random() < 0.3 else n for n in s)
    return out[int(g.integers(0, 2)):]


def _unary(p: Profile) -> Iterator[Case]:
    for name, (fams, lo, hi, signed) in UNARY.items():
        def draw(rng: np.random.Generator, d: str, lo: float = lo, hi: float = hi, signed: bool = signed,
                 name: str = name) -> Inputs:
            x = arr(rng, shape(rng, 2), d, lo, hi, signed)
            if name.startswith("is") and d.startswith(("float", "complex")) and x.size > 1:
                x.flat[0], x.flat[-1] = np.inf, np.nan
            return (x,), {}

        yield from per_dtype(name, "element-wise", fams, p, draw)


def _binary(p: Profile) -> Iterator[Case]:
    for name, (fams, r1, r2) in BINARY.items():
        def draw(rng: np.random.Generator, d: str, r1: Any = r1, r2: Any = r2) -> Inputs:
            s = shape(rng, 3)
            return (arr(rng, s, d, *r1), arr(rng, bshape(rng, s), d, *r2)), {}

        yield from per_dtype(name, "broadcast", fams, p, draw)

    def draw_scalar(rng: np.random.Generator, d: str) -> Inputs:
        return (arr(rng, shape(rng, 2), d), 2), {}

    yield from per_dtype("multiply", "array * Python int", "int float complex", p, draw_scalar)

    def draw_clip(rng: np.random.Generator, d: str) -> Inputs:
        return (arr(rng, shape(rng, 2), d, 1, 9),), {"min": -4, "max": 5}

    yield from per_dtype("clip", "min=-4, max=5", "int float", p, draw_clip)


def per_dtype(name: str, form: str, fams: str, p: Profile, draw: Any, **kw: Any) -> Iterator[Case]:
    for dtype in p.of(fams):
        yield Case(name, form, dtype, draw, examples=p.examples, **kw)


def arrays(*shapes: int | tuple[int, ...], lo: float = 0.5, hi: float = 2.0, **kw: Any) -> Draw:
    """An array per shape (an int: that many dimensions from the shape stream) in ``[lo, hi]``, and keywords ``kw``."""
    def draw(rng: np.random.Generator, d: str) -> Inputs:
        return tuple(arr(rng, shape(rng, s) if isinstance(s, int) else s, d, lo, hi) for s in shapes), dict(kw)
    return draw


def _creation(p: Profile) -> Iterator[Case]:
    all_f = "bool int float complex"
    for name in ("zeros", "ones", "empty"):
        yield from per_dtype(name, "shape, dtype", all_f, p, lambda r, d: ((shape(r, 2),), {"dtype": DT(d)}),
                             creation=True, compare="shape" if name == "empty" else "auto")
    yield from per_dtype("full", "shape, fill, dtype", "int float complex", p,
                         lambda r, d: ((shape(r, 2), 3), {"dtype": DT(d)}), creation=True)
    yield from per_dtype("eye", "n, m, k=1", "int float", p,
                         lambda r, d: ((dim(r, 1, 5), dim(r, 1, 5)), {"k": 1, "dtype": DT(d)}),
                         creation=True)
    yield from per_dtype("arange", "start, stop, step", "int float", p,
                         lambda r, d: ((1, dim(r, 5, 19), 2), {"dtype": DT(d)}), creation=True)
    yield from per_dtype("linspace", "start, stop, num", "float complex", p,
                         lambda r, d: ((0.5, 3.0), {"num": dim(r, 2, 11), "dtype": DT(d)}),
                         creation=True)
    yield from per_dtype("asarray", "from nested lists", "int float", p,
                         lambda r, d: ((arr(r, shape(r, 2), d).tolist(),), {"dtype": DT(d)}), creation=True)
    for name in ("zeros_like", "ones_like", "empty_like"):
        yield from per_dtype(name, "like x", all_f, p, arrays(2), compare="shape" if name == "empty_like" else "auto")
    yield from per_dtype("full_like", "like x, fill 2", "int float complex", p,
                         lambda r, d: ((arr(r, shape(r, 2), d), 2), {}))
    yield from per_dtype("tril", "k=0", "int float", p, arrays(2))
    yield from per_dtype("triu", "k=1", "int float", p, arrays(3, k=1))

    def draw_mesh(rng: np.random.Generator, d: str) -> Inputs:
        return (arr(rng, shape(rng, 1), d), arr(rng, shape(rng, 1), d)), {"indexing": "ij"}

    yield from per_dtype("meshgrid", "two vectors, ij", "int float", p, draw_mesh)


def _dtype_name(d: Any) -> str:
    return canonical_name(d) or str(d)


def _datatypes(p: Profile) -> Iterator[Case]:
    def draw_astype(rng: np.random.Generator, d: str) -> Inputs:
        return (arr(rng, shape(rng, 2), d, 1, 9), DT("float64" if d != "float64" else "int32")), {}

    yield from per_dtype("astype", "to float64 / int32", "bool int float", p, draw_astype)
    x1 = arrays(1)
    yield from per_dtype("can_cast", "x -> float64", "bool int float complex", p, x1,
                         call=lambda ua, a, kw: ua.can_cast(a[0], ua.float64),
                         ref=lambda x: x.dtype.kind == "f", ref_upcast=False, check_dtype=False)
    yield from per_dtype("finfo", "eps, max", "float complex", p, x1,
                         call=lambda ua, a, kw: (float(ua.finfo(a[0]).eps), float(ua.finfo(a[0]).max)),
                         ref=lambda x: (float(np.finfo(x.dtype).eps), float(np.finfo(x.dtype).max)), check_dtype=False,
                         ref_upcast=False)
    yield from per_dtype("iinfo", "min, max", "int", p, x1,
                         call=lambda ua, a, kw: (int(ua.iinfo(a[0]).min), int(ua.iinfo(a[0]).max)),
                         ref=lambda x: (int(np.iinfo(x.dtype).min), int(np.iinfo(x.dtype).max)), check_dtype=False)
    yield from per_dtype("isdtype", "real floating / integral", "bool int float complex", p, x1,
                         call=lambda ua, a, kw: (ua.isdtype(a[0].dtype, "real floating"),
                                               ua.isdtype(a[0].dtype, "integral")),
                         ref=lambda x: (np.isdtype(x.dtype, "real floating"), np.isdtype(x.dtype, "integral")))

    # Note: only promotions the standard defines (within a kind, and real with complex floating).
    other = {"int": "int64", "float": "float64", "complex": "float64"}

    def draw_rt(rng: np.random.Generator, d: str) -> Inputs:
        return (arr(rng, (2,), d), arr(rng, (2,), other[family_of(d)])), {}

    yield from per_dtype("result_type", "x, wider array of its kind", "int float complex", p, draw_rt,
                         call=lambda ua, a, kw: _dtype_name(ua.result_type(*a)),
                         ref=lambda x, y: str(np.result_type(x, y)), compare="exact", check_dtype=False,
                         ref_upcast=False)


def _introspection(p: Profile) -> Iterator[Case]:
    x1 = arrays(1)
    true = {"ref": lambda *a: True, "compare": "exact", "check_dtype": False, "with_env": True}
    yield from per_dtype("backend_of", "names the backend", "float", p, x1,
                         call=lambda ua, a, kw, env: ua.backend_of(a[0]) == env.backend, **true)
    yield from per_dtype("device", "names the device", "float", p, x1,
                         call=lambda ua, a, kw, env: ua.device(a[0]) == env.device, **true)
    yield from per_dtype("array_namespace", "is bound to the array's backend", "float", p, x1,
                         call=lambda ua, a, kw, env: ua.array_namespace(a[0]).backend == env.backend, **true)
    yield from per_dtype("explain", "matmul names backend and device", "float", p,
                         arrays((3, 3), (3, 3)),
                         call=lambda ua, a, kw, env: (lambda e: e.backend == env.backend and e.device == env.device)(
                           ua.explain("matmul", *a)), **true)
    yield from per_dtype("backends", "lists this backend as loaded", "float", p, x1,
                         call=lambda ua, a, kw, env: any(i.name == env.backend and i.loaded for i in ua.backends()),
                         **true)
    yield from per_dtype("get_precision", "inside ua.precision('tf32')", "float", p, x1,
                         call=lambda ua, a, kw, env: _precision_scope(ua), **true)
    yield from per_dtype("apply_numpy", "np.sort, shape and dtype stated", "float", p, arrays(2),
                         call=lambda ua, a, kw: ua.apply_numpy(np.sort, a[0], shape=tuple(a[0].shape),
                                                               dtype=a[0].dtype),
                         ref=lambda x: np.sort(x), compare="exact")
    yield from per_dtype("from_dlpack", "round trip into the same backend", "float", p, x1,
                         call=lambda ua, a, kw, env: ua.from_dlpack(a[0], backend=env.backend), ref=lambda x: x,
                         with_env=True)


def _precision_scope(ua: Any) -> bool:
    with ua.precision("tf32"):
        inside = ua.get_precision()
    return cast(bool, inside == "tf32" and ua.get_precision() == "highest")


def cases(p: Profile) -> Iterator[Case]:
    yield from _unary(p)
    yield from _binary(p)
    yield from _creation(p)
    yield from _datatypes(p)
    yield from _introspection(p)
