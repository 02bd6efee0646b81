# The array-API namespace over MLX: the dtypes, conversion and promotion (the standard's table, not MLX's:
# MLX promotes int64 with uint64 to float32 and makes Python floats float32 whatever the array), and the
# data type functions. Every correction of MLX's own behaviour carries a one-line reason.
from __future__ import annotations

import builtins
import math
from typing import Any

import mlx.core as mx
import numpy as np

from unarray._backends import _promote, _xp_shared
from unarray._dtypes import DTYPE_NAMES, canonical_name
from unarray._errors import DTypeError

__array_api_version__ = "2025.12"

SCALARS = _promote.SCALARS
bool = mx.bool_  # noqa: A001 - the standard's names
int8, int16, int32, int64 = mx.int8, mx.int16, mx.int32, mx.int64
uint8, uint16, uint32, uint64 = mx.uint8, mx.uint16, mx.uint32, mx.uint64
float16, bfloat16, float32, float64 = mx.float16, mx.bfloat16, mx.float32, mx.float64
complex64 = mx.complex64
_COMPLEX = frozenset({complex64})
e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None

DT: dict[str, Any] = {n: getattr(mx, "bool_" if n == "bool" else n) for n in DTYPE_NAMES if n != "complex128"}
NAME_OF = {v: k for k, v in DT.items()}
DEFAULT_FLOAT, DEFAULT_INT, INDEX = float32, int64, int64
FLOATS = frozenset({float16, bfloat16, float32, float64})
INTS = frozenset({int8, int16, int32, int64})
UNSIGNED = frozenset({uint8, uint16, uint32, uint64})


class NamespaceDtype(mx.Dtype):
    """MLX's dtype as the bound namespace hands it out: equal to MLX's own (``x.dtype == xp.float32`` on an MLX
    array, either side) and False beside anything else, ``None`` included, where MLX's own raises TypeError
    (generic code's ``dtype == None``).

    Note: a subclass, so that Python asks its ``__eq__`` first even with MLX's dtype on the left; MLX defines no
    constructor, so the instance never holds MLX's value itself: every MLX call gets ``.native`` (``native``)."""

    native: Any

    def __eq__(self, other: object) -> builtins.bool:
        if isinstance(other, NamespaceDtype):
            return builtins.bool(other.native == self.native)
        return type(other) is mx.Dtype and builtins.bool(other == self.native)

    def __ne__(self, other: object) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.native)

    def __repr__(self) -> str:
        return repr(self.native)

    __str__ = __repr__

    @property
    def size(self) -> int:
        return int(self.native.size)


def _namespace_dtype(d: Any) -> NamespaceDtype:
    out = NamespaceDtype.__new__(NamespaceDtype)
    out.native = d
    return out


NAMESPACE_DT: dict[str, NamespaceDtype] = {k: _namespace_dtype(v) for k, v in DT.items()}


def name(d: Any) -> str:
    return NAME_OF.get(native(d) if isinstance(d, NamespaceDtype) else d) or canonical_name(d) or str(d)


def native(d: Any) -> Any:
    """MLX's dtype for any dtype-like (a ua dtype, a NumPy dtype, a name); complex128 is refused."""
    if isinstance(d, NamespaceDtype):
        return d.native
    if d is None or isinstance(d, mx.Dtype):
        return d
    n = canonical_name(d)
    if n == "complex128":
        raise DTypeError("MLX has no complex128; use complex64", backend="mlx")
    if n is None or n not in DT:
        raise DTypeError(f"{d!r} is not a dtype MLX has", backend="mlx")
    return DT[n]


# -- conversion and promotion -------------------------------------------------------------
def a(x: Any) -> Any:
    return x if isinstance(x, mx.array) else mx.array(x)


def cast(x: Any, d: Any) -> Any:
    return x if x.dtype == d else x.astype(d)


def scalar_dtype(v: Any, d: Any) -> Any:
    return _promote.scalar_dtype(v, d, default_int=DEFAULT_INT, default_float=DEFAULT_FLOAT, bool_=bool,
                                 floats=FLOATS, complexes=_COMPLEX, complex_of=lambda _: complex64)


def const(v: Any, d: Any) -> Any:
    return mx.array(v, dtype=d)


def _name_of(x: Any) -> str:
    return name(x.dtype if isinstance(x, mx.array) else native(x))


def _check(p: str, q: str, out: str) -> None:
    if out == "complex128":
        raise DTypeError(f"{p} with {q} promotes to complex128, which MLX does not have; cast to complex64 first",
                         backend="mlx")


_PROMOTION = _promote.Promotion(a, cast, const, scalar_dtype, _name_of, DT.__getitem__, _check)
promote = _PROMOTION.promote
result_type, isdtype, can_cast = _xp_shared.dtype_functions(__name__, _PROMOTION)


# -- data types ---------------------------------------------------------------------------
def astype(x: Any, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Any:
    x, d = a(x), native(dtype)
    if x.dtype == d:
        return mx.array(x) if copy else x
    if d == mx.bool_:  # (the standard: a complex element is True when nonzero, as for reals)
        return x != 0
    _promote.refuse_complex_to_real(x.dtype == complex64, d == complex64)
    return x.astype(d)


class _BF16:
    bits, max, min, eps, smallest_normal = 16, 3.3895313892515355e38, -3.3895313892515355e38, 2.0**-7, 2.0**-126


def finfo(type: Any, /) -> Any:  # noqa: A002
    d = type.dtype if isinstance(type, mx.array) else native(type)
    d = float32 if d == complex64 else d
    if d not in FLOATS:
        raise DTypeError(f"finfo needs a floating dtype, got {name(d)}")
    return _promote.Info(d, _BF16 if d == bfloat16 else np.finfo(name(d)), True, name(d))


def iinfo(type: Any, /) -> Any:  # noqa: A002
    d = type.dtype if isinstance(type, mx.array) else native(type)
    if d not in INTS and d not in UNSIGNED:
        raise DTypeError(f"iinfo needs an integer dtype, got {name(d)}")
    return _promote.Info(d, np.iinfo(name(d)), False, name(d))
