# The standard's type promotion for the backends that write their own array-API namespace (a library with none,
# or one whose own promotion is not the standard's): binary promotion with Python scalars, result_type, can_cast
# and the finfo/iinfo record, written once. It names no library: each package fills a Promotion with its helpers
# (to-array, cast, constant, dtype <-> name) and the scalar rule its dtypes allow.
from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, NamedTuple

from unarray._dtypes import promote, promote_names
from unarray._errors import DTypeError

SCALARS = (builtins.bool, int, float, complex)


def scalar_dtype(v: Any, d: Any, *, default_int: Any, default_float: Any, bool_: Any, floats: Any,
                 complexes: Any, complex_of: Callable[[Any], Any]) -> Any:
    """The dtype of ``v`` (a Python scalar) with an array of dtype ``d``: the array's dtype, widened only in kind
    (bool -> int -> float -> complex); a kind the array lacks takes the library's default of that kind."""
    if isinstance(v, builtins.bool) or d in complexes:
        return d
    if isinstance(v, int):
        return default_int if d == bool_ else d
    if isinstance(v, float):
        return d if d in floats else default_float
    return complex_of(d)


class Promotion(NamedTuple):
    """One library's helpers, which the rules below run with.

    ``array(x)`` makes the library's array of ``x``; ``cast(x, d)`` casts an array (a no-op at its dtype);
    ``const(v, d)`` is the 0-d array of a Python scalar; ``scalar_dtype(v, d)`` the dtype of a Python scalar with
    an array of dtype ``d``; ``name_of(x)`` the standard's name of an array's or dtype-like's dtype; ``dtype(n)``
    the library's dtype of a name; ``check(a, b, out)`` refuses a promotion to a dtype the library lacks.
    """

    array: Callable[[Any], Any]
    cast: Callable[[Any, Any], Any]
    const: Callable[[Any, Any], Any]
    scalar_dtype: Callable[[Any, Any], Any]
    name_of: Callable[[Any], str]
    dtype: Callable[[str], Any]
    check: Callable[[str, str, str], None] = lambda a, b, out: None

    def promote(self, x1: Any, x2: Any) -> tuple[Any, Any]:
        """Both operands as arrays of their common dtype (a Python scalar takes the array's, widened in kind)."""
        if isinstance(x1, SCALARS):
            x2 = self.array(x2)
            d = self.scalar_dtype(x1, x2.dtype)
            return self.const(x1, d), self.cast(x2, d)
        x1 = self.array(x1)
        if isinstance(x2, SCALARS):
            d = self.scalar_dtype(x2, x1.dtype)
            return self.cast(x1, d), self.const(x2, d)
        x2 = self.array(x2)
        if x1.dtype == x2.dtype:
            return x1, x2
        d = self.result_type(x1.dtype, x2.dtype)
        return self.cast(x1, d), self.cast(x2, d)

    def result_type(self, *args: Any) -> Any:
        """The standard's result type of arrays, dtypes and Python scalars (the scalars applied last)."""
        out: str | None = None
        scalars = []
        for x in args:
            if isinstance(x, SCALARS):
                scalars.append(x)
                continue
            n = self.name_of(x)
            if out is None:
                out = n
                continue
            nxt = promote(None, out, n)  # the standard's table, else unarray's rule for mixed kinds
            self.check(out, n, nxt)
            out = nxt
        if out is None:
            raise DTypeError("result_type needs at least one array or dtype")
        d = self.dtype(out)
        for s in scalars:
            d = self.scalar_dtype(s, d)
        return d

    def can_cast(self, from_: Any, to: Any) -> builtins.bool:
        f, t = self.name_of(from_), self.name_of(to)
        return promote_names(f, t) == t


def refuse_complex_to_real(x_complex: builtins.bool, d_complex: builtins.bool) -> None:
    if x_complex and not d_complex:
        raise DTypeError("the standard leaves complex -> real casts undefined; take ua.real or ua.abs first")


class Info:
    """What finfo and iinfo return: the standard's fields as Python numbers, from any object carrying them."""

    def __init__(self, dtype: Any, info: Any, floating: builtins.bool, name: str):
        self.dtype = dtype
        self.bits = int(info.bits)
        self.max = float(info.max) if floating else int(info.max)
        self.min = float(info.min) if floating else int(info.min)
        if floating:
            self.eps = float(info.eps)
            self.smallest_normal = float(info.smallest_normal)
        self._name = name

    def __repr__(self) -> str:
        return f"{'finfo' if hasattr(self, 'eps') else 'iinfo'}({self._name})"
