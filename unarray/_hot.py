"""The hot front-end calls in C: ``ua.matmul``, the reductions, the element-wise functions.

A front-end function is the op's reference: its signature, docstring, checks, error frame and every
unusual call. :func:`fast` makes the public name a C callable (``unarray._fast.Hot``, unarray/_fast.c) that runs the
common call, arrays of one library already seen, without the Python frame: it looks the backend up in the
lookup's table, normalises an int ``axis`` as :func:`unarray._axes.many` does, reads the precision scope
where the backend takes it (not for a backend that ignores the policy), and calls the backend's op.
A backend declares an op's common branch that is one native call as a ``HotCall`` (unarray/_backends/hot_calls.py:
the native, the class, the dtypes, the parameters' values, the device rule, the size bound, the policy's route);
its op is written from that declaration, and the C path reads the same declaration and calls the native without
the op's frame, or the op's general path for any other call.
Two arrays of two dtypes run the reference, which promotes them by unarray's rule (``_dispatch.promoted``).
Anything else, and any ``Exception`` the backend raises, runs the reference with the original arguments
(the ops are pure, so the call runs again and its error is framed as the reference frames it). Where the
reference refuses a keyword (torch's ``dim=``, NumPy's ``ddof=``), the C path raises
:func:`unarray._names.keyword_error`'s typed error instead of Python's bare ``TypeError``: built only then. Without
the C module, or with ``UNARRAY_PURE_PYTHON=1``, the public name is the reference itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from unarray import _names, _native, _precision
from unarray._lookup import BY_TYPE
from unarray.interop import _compile_watch

__all__ = ["BACKEND_OPS", "HOT", "REFERENCES", "fast"]

F = TypeVar("F", bound=Callable[..., Any])

_SWITCH = _native.load("_fast")
_MISSING = object()  # a required parameter's default
# The C callables' type (None without the C module), and each one's reference by name: a tracer that substitutes
# the reference for the C callable (torch.compile's) reaches none of the C callable's attributes.
HOT: type | None = None if _SWITCH is None else _SWITCH.Hot
REFERENCES: dict[str, Callable[..., Any]] = {}
# Each hot call's backend op by the public name, where the two differ (var -> var_corrected).
BACKEND_OPS: dict[str, str] = {}
if _SWITCH is not None and hasattr(_SWITCH, "set_keyword_error"):  # (a build older than its source lacks it)
    _SWITCH.set_keyword_error(_names.keyword_error)


def fast(fn: F, *, arrays: int = 1, params: tuple[str, ...] = (), axis: str | None = None,
         policy: bool = False, name: str | None = None) -> F:
    """``fn``'s C hot path, or ``fn`` itself without the C module.

    ``arrays``: the leading array positionals (of one type on the hot path); ``params``: the other parameters
    in the order the backend's op takes them positionally (their defaults read from ``fn``'s signature);
    ``axis``: the one of them that is an axis; ``policy``: the backend's op takes the precision policy last
    (``precision=`` per call, else the scope's); ``name``: the backend's op (``fn``'s name by default).
    """
    if _SWITCH is None:
        return fn
    # fn's parameters read from its code, as inspect.signature reads them (a tenth of its cost, at import)
    code, given = fn.__code__, fn.__defaults__ or ()
    named = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    with_default = named[code.co_argcount - len(given):code.co_argcount]
    default = {**dict(zip(with_default, given, strict=True)), **(fn.__kwdefaults__ or {})}
    npos = 0  # the leading params that may come positionally (positional-or-keyword, in fn's order)
    while npos < len(params) and code.co_posonlyargcount <= arrays + npos < code.co_argcount and \
            params[npos] == named[arrays + npos]:
        npos += 1
    defaults = tuple(default.get(p, _MISSING) for p in params)
    hot = _SWITCH.hot(fn, BY_TYPE, name or fn.__name__, arrays, params, defaults, npos,
                      params.index(axis) if axis is not None else -1,
                      _precision._POLICY if policy else None, _precision.POLICIES, _MISSING)
    if REFERENCES.setdefault(fn.__name__, fn) is not fn:
        raise ValueError(f"two hot calls named {fn.__name__!r}")
    if name is not None and name != fn.__name__:
        BACKEND_OPS[fn.__name__] = name
    # A tracer that runs Python (torch.compile) traces the reference in its place.
    _compile_watch.install(hot, fn, "register_traced")
    return hot  # type: ignore[no-any-return]
