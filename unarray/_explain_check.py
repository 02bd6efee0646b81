"""What ``ua.explain`` refuses: the calls that ``ua.<op>`` itself would refuse before running.

An op name that names no ``ua`` function, ``from_dlpack`` (a data move, not an op; ``to`` is explained
as a handoff), and arguments that do not fit the op's signature or are not arrays where the op
takes arrays. Each refusal is a typed error naming ``explain``, the op and the fix, instead of an
explanation of a call that cannot happen. ``explain`` is not a hot path: the signature is read here.
"""

from __future__ import annotations

import inspect
import re
import sys
from typing import Any

from unarray._errors import ArgumentError, ArgumentTypeError, UnarrayError, UnknownArrayTypeError
from unarray._hot import HOT, REFERENCES
from unarray._lookup import SCALARS, one
from unarray._names import suggestion

__all__ = ["resolve"]

# Public callables of the namespace that are not ops on arrays.
_NOT_OPS = frozenset({"explain", "use", "precision", "backends", "backend_of", "namespace", "array_namespace",
                      "device", "stats", "checking_readonly", "verify_readonly", "__array_namespace_info__"})
_HANDOFF = frozenset({"from_dlpack"})  # ua.to is explained: interop._public.explain_to
# Parameter annotations (as written, ``from __future__ import annotations``) that take arrays only,
# arrays or Python scalars, and sequences of arrays.
_SCALAR_WORDS = frozenset({"Array", "bool", "int", "float", "complex", "None"})
_PASSIVE = (*SCALARS, type(None))
_LEADER = re.compile(r"\bA\b")


def bind(op: str, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], example: str = "") -> Any:
    """``fn``'s signature bound to the arguments, or the typed refusal ``ua.explain`` gives (``example``: a call
    to write, appended to the message)."""
    try:
        return inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise ArgumentTypeError(f"ua.{op} does not take these arguments ({e}); pass them as ua.{op} takes them"
                                + (f": {example}" if example else ""), op="explain") from None


def resolve(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Raise what ``ua.<op>(*args, **kwargs)`` would raise for its name or its argument types."""
    fn = _function(op)
    bound = bind(op, fn, args, kwargs)
    takes_arrays = False
    lead = _lead(fn)
    params = inspect.signature(fn).parameters
    values: list[Any] = []  # the arguments but sequences, each of *arrays one
    for name, value in bound.arguments.items():
        star = params[name].kind is inspect.Parameter.VAR_POSITIONAL  # (*arrays: each one is an argument)
        for v in value if star else (value,):
            takes_arrays |= _check(op, name, _annotation(fn, name), v, not star and name == lead)
        if star or not isinstance(value, (tuple, list)):
            values += value if star else [value]
    if takes_arrays and bound.arguments.get("backend") is None and all(isinstance(v, _PASSIVE) for v in values):
        raise ArgumentTypeError(f"ua.{op} needs at least one array argument, got only Python scalars; pass an "
                                "array (ua.asarray(...) makes one)", op="explain")


def _function(op: Any) -> Any:
    if not isinstance(op, str):
        raise ArgumentTypeError(f"the op is a name such as 'matmul', got {type(op).__name__} {op!r}", op="explain")
    if op in _HANDOFF:
        raise ArgumentError(f"{op!r} is a handoff, not an op: explain describes the calls of ops (which backend, "
                            f"kernel and copies); to see what ua.{op} copies, call it and read ua.stats()",
                            op="explain")
    ua = sys.modules["unarray"]
    obj: Any = ua
    for part in op.split("."):  # "linalg.solve" is ua.linalg.solve
        obj = getattr(obj, part, None) if part and not part.startswith("_") else None
    if HOT is not None and type(obj) is HOT:  # a C hot call: its reference (unarray/_hot.py)
        obj = REFERENCES[op.rpartition(".")[2]]
    known = inspect.isfunction(obj) and obj.__module__.startswith("unarray.") and op not in _NOT_OPS
    if not known:
        names = [n for n in ua.__all__ if _is_function(getattr(ua, n, None)) and n not in _NOT_OPS]
        close = suggestion(op, names)  # NumPy's and torch's names first (ua.concatenate: concat)
        hint = f"did you mean {', '.join(close)}?" if close else "pass the name of a ua function, e.g. 'matmul'"
        why = "is not an op" if op in _NOT_OPS else "names no unarray function"
        raise ArgumentError(f"{op!r} {why}; {hint}", op="explain")
    return obj


def _is_function(obj: Any) -> bool:
    # A Python function, or a C hot call of the front end wrapping one (unarray/_hot.py).
    return inspect.isfunction(obj) or (HOT is not None and type(obj) is HOT)


def _lead(fn: Any) -> str | None:
    # The parameter whose array picks the backend: the first array-only one, unless the front end
    # dispatches over all its operands (_many: Python scalars there take no part, as in ua.where).
    if "_many" in inspect.unwrap(fn).__code__.co_names:  # the function under a signature guard
        return None
    return next((n for n in fn.__annotations__ if _annotation(fn, n) == "Array"), None)


def _annotation(fn: Any, name: str) -> str:
    # The annotation as written, with the typed leader ``A`` (unarray/_typing.py) read as ``Array``.
    return _LEADER.sub("Array", str(fn.__annotations__.get(name, "")))


def _check(op: str, name: str, annotation: str, value: Any, lead: bool) -> bool:
    # Whether the parameter is an array parameter (raising where the call would refuse its value).
    words = {w.strip() for w in annotation.split("|")}
    if words == {"tuple[Array, ...]", "list[Array]"}:
        if not isinstance(value, (tuple, list)):
            _refuse(UnknownArrayTypeError, op, name, value)
        for v in value:
            _require_array(op, name, v)
        return False  # a sequence of arrays: checked element by element
    if "Array" not in words or not words <= _SCALAR_WORDS:
        return False  # a shape, a dtype, an axis...: the call checks those itself
    if (value is None and "None" in words) or (isinstance(value, SCALARS) and (words != {"Array"} or not lead)):
        return True  # a Python scalar off the lead: the call passes it on (the backend may refuse its value)
    _require_array(op, name, value)
    return True


def _require_array(op: str, name: str, value: Any) -> None:
    # The call's own dispatch decides, and its error type is kept (ArgumentTypeError, UnknownArrayTypeError).
    try:
        one(value, op)
    except UnarrayError as e:
        _refuse(type(e), op, name, value)


def _refuse(cls: Any, op: str, name: str, value: Any) -> None:
    kind = f"{type(value).__module__}.{type(value).__name__}"
    raise cls(f"ua.{op} takes an array as {name!r}, got {kind}, which ua.{op} refuses too; "
              f"pass an array (ua.asarray(...) makes one)", op="explain")
