"""The arguments of ``ua.nn``'s functions, checked once in the front end for every backend.

A torch-style positional call (``layer_norm(x, (4,))``) is a typed error naming the keyword to use;
``eps`` is a finite non-negative real number; ``approximate`` is a bool (torch's strings are refused:
both are truthy); ``weight`` and ``bias`` are floating and promote with ``x`` as the standard's
promotion rules say.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable
from typing import Any, TypeVar, cast

from unarray._dispatch import BY_TYPE
from unarray._dtypes import promote_names
from unarray._errors import ArgumentError, ArgumentTypeError, DTypeError

__all__ = ["FLOATS", "check_bool", "check_eps", "keywords", "result_dtype"]

FLOATS = ("float16", "bfloat16", "float32", "float64")
_F = TypeVar("_F", bound=Callable[..., Any])


def keywords(positional: int, hint: str) -> Callable[[_F], _F]:
    """Refuse more than ``positional`` positional arguments with an ``ArgumentTypeError`` saying ``hint``."""

    def mark(fn: _F) -> _F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if len(args) > positional:
                raise _positional(fn.__name__, positional, args, hint)
            return fn(*args, **kwargs)

        return cast(_F, call)

    return mark


def _positional(name: str, n: int, args: tuple[Any, ...], hint: str) -> ArgumentTypeError:
    b = BY_TYPE.get(type(args[0])) if args else None
    taken = "x" if n == 1 else "q, k, v" if n == 3 else f"{n} arrays"
    return ArgumentTypeError(f"takes {taken} as the only positional argument{'s' if n > 1 else ''}, got {len(args)} "
                             f"positional arguments; the rest are keyword-only: {hint}", op=f"nn.{name}",
                             backend=None if b is None else b.name)


def check_eps(op: str, backend: str, eps: Any, allow_none: bool = False) -> float | None:
    """``eps`` as a float: a Python or NumPy real scalar, finite and non-negative (``None`` where allowed)."""
    if eps is None and allow_none:
        return None
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise ArgumentTypeError(f"eps must be a real number (a Python or NumPy scalar), got {type(eps).__name__} "
                                f"{eps!r}; pass a float, e.g. eps=1e-5 (for a 0-d array, float(x) outside any trace)",
                                op=op, backend=backend)
    value = float(eps)
    if not (math.isfinite(value) and value >= 0):
        raise ArgumentError(f"eps must be finite and >= 0, got {value}: it is added to a variance", op=op,
                            backend=backend)
    return value


def check_bool(op: str, backend: str, name: str, value: Any, hint: str) -> bool:
    """A Python bool or a NumPy bool scalar; anything else (a string such as torch's ``'tanh'``) is refused."""
    t = type(value)
    if isinstance(value, bool) or (t.__module__ == "numpy" and t.__name__ in ("bool", "bool_")):
        return bool(value)
    raise ArgumentTypeError(f"{name} must be a bool, got {t.__name__} {value!r}; {hint}", op=op, backend=backend)


def result_dtype(op: str, b: Any, x: Any, params: dict[str, Any]) -> str:
    """The standard's promoted dtype of ``x`` and the array ``params`` (Python scalars take no part)."""
    out: str = b.dtype_name(x)
    for name, p in params.items():
        if p is None or type(p) in (int, float):
            continue
        if isinstance(p, (bool, complex)):
            raise ArgumentTypeError(f"{name} must be an array or a real number, got {type(p).__name__}", op=op,
                                    backend=b.name)
        have = b.dtype_name(p)
        promoted = promote_names(out, have) if have in FLOATS else None
        if promoted is None:
            raise DTypeError(f"{name} has dtype {have}, which does not promote with x's {b.dtype_name(x)} to a "
                             f"real floating dtype; cast it (ua.astype({name}, x.dtype))", op=op, backend=b.name)
        out = promoted
    return out
