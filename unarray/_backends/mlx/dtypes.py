# The array-API namespace over MLX: the dtypes, conversion and promotion (the standard's table, not MLX's:
# MLX promotes int64 with uint64 to float32 and makes Python floats float32 whatever the array), and the
# data type functions. Every correction of MLX's own behaviour carries a one-line reason.
from __future__ import annotations

import builtins
import math
from typing import Any

import mlx.core as mx
import numpy as np

from unarray._dtypes import canonical_name, promote_names
from unarray._errors import DTypeError

__array_api_version__ = "2025.12"

_SCALARS = (builtins.bool, int, float, complex)
bool = mx.bool_  # noqa: A001 - the standard's names
int8, int16, int32, int64 = mx.int8, mx.int16, mx.int32, mx.int64
uint8, uint16, uint32, uint64 = mx.uint8, mx.uint16, mx.uint32, mx.uint64
float16, bfloat16, float32, float64 = mx.float16, mx.bfloat16, mx.float32, mx.float64
complex64 = mx.complex64
e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None

DT: dict[str, Any] = {"bool": bool, "int8": int8, "int16": int16, "int32": int32, "int64": int64, "uint8": uint8,
                      "uint16": uint16, "uint32": uint32, "uint64": uint64, "float16": float16,
                      "bfloat16": bfloat16, "float32": float32, "float64": float64, "complex64": complex64}
NAME_OF = {v: k for k, v in DT.items()}
DEFAULT_FLOAT, DEFAULT_INT, INDEX = float32, int64, int64
FLOATS = frozenset({float16, bfloat16, float32, float64})
INTS = frozenset({int8, int16, int32, int64})
UNSIGNED = frozenset({uint8, uint16, uint32, uint64})
_NP = {k: np.dtype(k) for k in DT if k != "bfloat16"}


def name(d: Any) -> str:
    return NAME_OF.get(d) or canonical_name(d) or str(d)


def native(d: Any) -> Any:
    """MLX's dtype for any dtype-like (a ua dtype, a NumPy dtype, a name); complex128 is refused."""
    if d is None or isinstance(d, mx.Dtype):
        return d
    n = canonical_name(d)
    if n == "complex128":
        raise DTypeError("MLX has no complex128; use complex64", backend="mlx")
    if n is None or n not in DT:
        raise DTypeError(f"{d!r} is not a dtype MLX has", backend="mlx")
    return DT[n]


def is_float(d: Any) -> builtins.bool:
    return d in FLOATS


def is_int(d: Any) -> builtins.bool:
    return d in INTS or d in UNSIGNED


# -- conversion and promotion -------------------------------------------------------------
def a(x: Any) -> Any:
    return x if isinstance(x, mx.array) else mx.array(x)


def cast(x: Any, d: Any) -> Any:
    return x if x.dtype == d else x.astype(d)


def scalar_dtype(v: Any, d: Any) -> Any:
    # Note: a Python scalar takes the array's dtype; it widens only the kind (bool -> int -> float -> complex).
    if isinstance(v, builtins.bool) or d == complex64:
        return d
    if isinstance(v, int):
        return DEFAULT_INT if d == bool else d
    if isinstance(v, float):
        return d if d in FLOATS else DEFAULT_FLOAT
    return complex64


def const(v: Any, d: Any) -> Any:
    return mx.array(v, dtype=d)


def promote(x1: Any, x2: Any) -> tuple[Any, Any]:
    if isinstance(x1, _SCALARS):
        x2 = a(x2)
        d = scalar_dtype(x1, x2.dtype)
        return const(x1, d), cast(x2, d)
    x1 = a(x1)
    if isinstance(x2, _SCALARS):
        d = scalar_dtype(x2, x1.dtype)
        return cast(x1, d), const(x2, d)
    x2 = a(x2)
    if x1.dtype == x2.dtype:
        return x1, x2
    d = result_type(x1.dtype, x2.dtype)
    return cast(x1, d), cast(x2, d)


_RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2, "bfloat": 2, "complex": 3}


def _cross_kind(p: str, q: str) -> str | None:
    # Note: mixed kinds are left undefined by the standard; like torch and JAX, the higher kind's dtype wins.
    kp, kq = _RANK[p.rstrip("0123456789")], _RANK[q.rstrip("0123456789")]
    if kp == kq:
        return None
    return p if kp > kq else q


def result_type(*args: Any) -> Any:
    out: str | None = None
    scalars = []
    for x in args:
        if isinstance(x, _SCALARS):
            scalars.append(x)
            continue
        n = name(x.dtype if isinstance(x, mx.array) else native(x))
        if out is None:
            out = n
        else:
            nxt = promote_names(out, n) or _cross_kind(out, n)
            if nxt is None:
                raise DTypeError(f"the standard defines no promotion of {out} with {n}; cast one explicitly")
            if nxt == "complex128":
                raise DTypeError(f"{out} with {n} promotes to complex128, which MLX does not have; cast to "
                                 "complex64 first", backend="mlx")
            out = nxt
    if out is None:
        raise DTypeError("result_type needs at least one array or dtype")
    d = DT[out]
    for s in scalars:
        d = scalar_dtype(s, d)
    return d


# -- data types ---------------------------------------------------------------------------
def astype(x: Any, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Any:
    x, d = a(x), native(dtype)
    if x.dtype == d:
        return mx.array(x) if copy else x
    if x.dtype == complex64 and d != complex64:
        raise DTypeError("the standard leaves complex -> real casts undefined; take ua.real or ua.abs first")
    return x.astype(d)


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    from unarray._dtypes import isdtype as _isdtype

    return _isdtype(dtype, kind)


def can_cast(from_: Any, to: Any, /) -> builtins.bool:
    f = name(from_.dtype if isinstance(from_, mx.array) else native(from_))
    t = name(native(to))
    return promote_names(f, t) == t


class _Info:
    def __init__(self, dtype: Any, info: Any, floating: builtins.bool):
        self.dtype = dtype
        self.bits = int(info.bits)
        self.max = float(info.max) if floating else int(info.max)
        self.min = float(info.min) if floating else int(info.min)
        if floating:
            self.eps = float(info.eps)
            self.smallest_normal = float(info.smallest_normal)

    def __repr__(self) -> str:
        return f"{'finfo' if hasattr(self, 'eps') else 'iinfo'}({name(self.dtype)})"


class _BF16:
    bits, max, min, eps, smallest_normal = 16, 3.3895313892515355e38, -3.3895313892515355e38, 2.0**-7, 2.0**-126


def finfo(type: Any, /) -> Any:  # noqa: A002
    d = type.dtype if isinstance(type, mx.array) else native(type)
    d = float32 if d == complex64 else d
    if d not in FLOATS:
        raise DTypeError(f"finfo needs a floating dtype, got {name(d)}")
    return _Info(d, _BF16 if d == bfloat16 else np.finfo(_NP[name(d)]), True)


def iinfo(type: Any, /) -> Any:  # noqa: A002
    d = type.dtype if isinstance(type, mx.array) else native(type)
    if not is_int(d):
        raise DTypeError(f"iinfo needs an integer dtype, got {name(d)}")
    return _Info(d, np.iinfo(_NP[name(d)]), False)
