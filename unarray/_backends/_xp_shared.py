# The library-free pieces of the array-API namespaces that backends write themselves (a library with no namespace
# of the standard's, or one that follows NumPy's conventions): their assembly, the standard's named results, and the
# steps that are the same whatever the kernels (tensordot's axis split, matrix_power's squaring, the norms' choice of
# reduction). It names no library: each package passes its own ops.
from __future__ import annotations

import math
import types
from collections import namedtuple
from collections.abc import Callable
from typing import Any, NamedTuple

from unarray._backends._promote import Promotion
from unarray._dtypes import isdtype as _isdtype
from unarray._errors import ArgumentError, DTypeError, ShapeError

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def assemble(name: str, doc: str, modules: tuple[types.ModuleType, ...], helpers: tuple[str, ...],
             home: str | None = None, **extra: Any) -> types.ModuleType:
    """The namespace ``name``: the public names of ``modules`` but their ``helpers`` (with ``home``: only those
    defined in their module or in the library module ``home``), and ``extra``."""
    ns = types.ModuleType(name, doc)
    skip = {"annotations", "namedtuple", "Any", "SimpleNamespace", *helpers}
    for mod in modules:
        for k, v in vars(mod).items():
            if k.startswith("_") or k in skip or k.isupper() or isinstance(v, types.ModuleType):
                continue
            if home is None or getattr(v, "__module__", mod.__name__) in (mod.__name__, None, home):
                setattr(ns, k, v)
    for k, v in extra.items():
        setattr(ns, k, v)
    return ns


def python_dtype(obj: Any, boolean: Any, complex64: Any, default_float: Any, default_int: Any) -> Any:
    """The dtype the standard gives Python values (a scalar, or nested lists of them; an empty list is floating);
    None for anything else."""
    import numpy as np

    items = np.asarray(obj, dtype=object).ravel().tolist() if isinstance(obj, (list, tuple)) else [obj]
    if items and all(isinstance(v, bool) for v in items):
        return boolean
    if any(isinstance(v, complex) for v in items):
        return complex64
    if any(isinstance(v, float) for v in items) or not items:
        return default_float
    return default_int if any(isinstance(v, int) for v in items) else None


def axes_of(axis: Any, ndim: int) -> list[int] | None:
    """``axis`` (None, an int or a sequence of ints) as non-negative axes of an ``ndim``-dimensional array."""
    if axis is None:
        return None
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for ax in axes:
        if not -ndim <= ax < max(ndim, 1):
            raise ArgumentError(f"axis {ax} is out of range for an array of {ndim} dimensions")
        out.append(ax % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ArgumentError(f"repeated axis in {axis!r}")
    return out


def moved(ndim: int, src: list[int], dst: list[int]) -> list[int]:
    """moveaxis's permutation: the axes ``src`` at the positions ``dst``, the others in their order."""
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return order


def same_dtype(xs: list[Any], result_type: Callable[..., Any], cast: Callable[[Any, Any], Any]) -> list[Any]:
    """``xs`` (native arrays) in their promoted dtype where their dtypes differ (concat, stack and meshgrid)."""
    if len({x.dtype for x in xs}) > 1:
        d = result_type(*xs)
        xs = [cast(x, d) for x in xs]
    return xs


def cumulative_axis(axis: int | None, shape: Any) -> int:
    """The axis of a cumulative sum or product: ``None`` only for a 1-D array (the standard's rule)."""
    if axis is None:
        if len(shape) != 1:
            raise ArgumentError(f"axis=None needs a 1-D array, got shape {tuple(shape)}; pass axis=")
        axis = 0
    return axes_of(axis, len(shape))[0]  # type: ignore[index]


def differences(x: Any, ax: int, n: int, boolean: Any) -> Any:
    """The ``n``-th differences of ``x`` along ``ax`` (of ``boolean`` arrays: where neighbours differ)."""
    for _ in range(n):
        hi = [slice(None)] * len(x.shape)
        lo = [slice(None)] * len(x.shape)
        hi[ax], lo[ax] = slice(1, None), slice(None, -1)
        x = x[tuple(hi)] != x[tuple(lo)] if x.dtype == boolean else x[tuple(hi)] - x[tuple(lo)]
    return x


def outer(a: Any, b: Any) -> Any:
    """The outer product of the 1-D arrays ``a`` and ``b`` (of one dtype)."""
    if len(a.shape) != 1 or len(b.shape) != 1:
        raise ShapeError(f"outer needs 1-D arrays, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return a[:, None] * b[None, :]


def vector_norm(m: Any, axis: Any, keepdims: bool, ord: Any, stat: Any, sqrt: Any, cast: Any) -> Any:  # noqa: A002
    """The standard's vector norms of the magnitudes ``m``, from a namespace's ``stat`` reductions (sum, max, min,
    count_nonzero), its ``sqrt`` and its ``cast(x, dtype)``."""
    if ord == 2:
        return sqrt(stat.sum(m * m, axis=axis, keepdims=keepdims))
    if ord == math.inf:
        return stat.max(m, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return stat.min(m, axis=axis, keepdims=keepdims)
    if ord == 0:
        return cast(stat.count_nonzero(m, axis=axis, keepdims=keepdims), m.dtype)
    return stat.sum(m**ord, axis=axis, keepdims=keepdims) ** (1 / ord)


def check_qr_mode(mode: str) -> None:
    if mode not in ("reduced", "complete"):
        raise ArgumentError(f"mode must be 'reduced' or 'complete', got {mode!r}")


def contraction(ndim1: int, ndim2: int, axes: Any) -> tuple[list[int], list[int], list[int], list[int]]:
    """tensordot's axes as (contracted of x1, contracted of x2, free of x1, free of x2), each in order."""
    if isinstance(axes, int):
        a1, a2 = list(range(ndim1 - axes, ndim1)), list(range(axes))
    else:
        a1, a2 = [i % ndim1 for i in axes[0]], [i % ndim2 for i in axes[1]]
    return a1, a2, [i for i in range(ndim1) if i not in a1], [i for i in range(ndim2) if i not in a2]


def power(eye: Any, x: Any, n: int, matmul: Callable[[Any, Any], Any]) -> Any:
    """``x`` to the power ``n >= 0`` by repeated squaring, starting from ``eye`` (the identity of x's shape)."""
    out, base = eye, x
    while n:
        if n & 1:
            out = matmul(out, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return out


class Reductions(NamedTuple):
    """A library's reductions over an axis (an int or a tuple of ints), and its square root."""

    sum: Callable[[Any, Any], Any]
    max: Callable[[Any, Any], Any]
    min: Callable[[Any, Any], Any]
    sqrt: Callable[[Any], Any]


def matrix_norm(m: Any, ord: Any, svdvals: Callable[[], Any], r: Reductions) -> Any:  # noqa: A002
    """The standard's matrix norms of ``m`` (the magnitudes), ``svdvals`` giving the singular values when needed."""
    if ord == "fro":
        return r.sqrt(r.sum(m * m, (-2, -1)))
    if ord == "nuc":
        return r.sum(svdvals(), -1)
    if ord in (1, -1, math.inf, -math.inf):
        s = r.sum(m, -2 if ord in (1, -1) else -1)
        return r.max(s, -1) if ord > 0 else r.min(s, -1)
    if ord in (2, -2):
        s = svdvals()
        return r.max(s, -1) if ord == 2 else r.min(s, -1)
    raise ArgumentError(f"unknown matrix norm ord={ord!r}")


def bool_arith(promote: Callable[..., Any], boolean: Any, fn: Any, on_bool: Any, run: Any = None,
               home: str | None = None) -> Any:
    # unarray's rule for bools (as NumPy's): or for add, and for multiply; the standard has no bool subtract.
    # home: the module that names the op (a namespace takes, and ua.explain finds, a module's own functions).
    def op(x1: Any, x2: Any, /) -> Any:
        a, b = promote(x1, x2)
        if a.dtype == boolean:
            if on_bool is None:
                raise DTypeError("the standard defines no subtraction of bools")
            return on_bool(a, b)
        return fn(a, b) if run is None else run(fn, a, b)

    op.__name__ = fn.__name__
    op.__module__ = home or op.__module__
    return op


def statistics(home: str, sums: tuple[Any, Any, Any], extremes: tuple[Any, Any, Any], args: tuple[Any, Any, Any],
               cumulatives: tuple[Any, Any, Any], var: Any, sqrt: Any) -> tuple[Callable[..., Any], ...]:
    """sum, prod, max, min, argmax, argmin, cumulative_sum, cumulative_prod and std of the package module ``home``.

    Each group is (the package's step, the library's kernel for the first op, for the second); the steps take
    (kernel, x, axis, dtype, keepdims) for sums, (kernel, op, x, axis, keepdims) for extremes and args, and
    (kernel, identity, x, axis, dtype, include_initial) for cumulatives; std is ``sqrt`` of the package's ``var``."""
    sum_like, k_sum, k_prod = sums
    extreme, k_max, k_min = extremes
    arg, k_argmax, k_argmin = args
    cumulative, k_cumsum, k_cumprod = cumulatives

    def sum(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
        return sum_like(k_sum, x, axis, dtype, keepdims)

    def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        return sum_like(k_prod, x, axis, dtype, keepdims)

    def max(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
        return extreme(k_max, "max", x, axis, keepdims)

    def min(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
        return extreme(k_min, "min", x, axis, keepdims)

    def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
        return arg(k_argmax, "argmax", x, axis, keepdims)

    def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
        return arg(k_argmin, "argmin", x, axis, keepdims)

    def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
        return cumulative(k_cumsum, 0, x, axis, dtype, include_initial)

    def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                        include_initial: bool = False) -> Any:
        return cumulative(k_cumprod, 1, x, axis, dtype, include_initial)

    def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
        return sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))

    return _homed(home, sum, prod, max, min, argmax, argmin, cumulative_sum, cumulative_prod, std)


def _homed(home: str, *fns: Callable[..., Any]) -> tuple[Callable[..., Any], ...]:
    for fn in fns:  # (a namespace takes, and ua.explain finds, a module's own functions)
        fn.__module__, fn.__qualname__ = home, fn.__name__
    return fns


def dtype_functions(home: str, promotion: Promotion) -> tuple[Callable[..., Any], ...]:
    """result_type, isdtype and can_cast of the package module ``home``, by its ``promotion``."""

    def result_type(*arrays_and_dtypes: Any) -> Any:
        return promotion.result_type(*arrays_and_dtypes)

    def isdtype(dtype: Any, kind: Any) -> bool:
        return _isdtype(dtype, kind)

    def can_cast(from_: Any, to: Any, /) -> bool:
        return promotion.can_cast(from_, to)

    return _homed(home, result_type, isdtype, can_cast)


def uniques(home: str, unique: Callable[[Any, str], tuple[Any, Any, Any, Any]]) -> tuple[Callable[..., Any], ...]:
    """unique_values, unique_counts, unique_inverse and unique_all of the package module ``home``, from its
    ``unique(x, op)``: the values, their first indices, the inverse indices and the counts."""

    def unique_values(x: Any, /) -> Any:
        return unique(x, "unique_values")[0]

    def unique_counts(x: Any, /) -> Any:
        v, _, _, c = unique(x, "unique_counts")
        return UniqueCountsResult(v, c)

    def unique_inverse(x: Any, /) -> Any:
        v, _, inv, _ = unique(x, "unique_inverse")
        return UniqueInverseResult(v, inv)

    def unique_all(x: Any, /) -> Any:
        return UniqueAllResult(*unique(x, "unique_all"))

    return _homed(home, unique_values, unique_counts, unique_inverse, unique_all)
