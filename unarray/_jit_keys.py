"""What a ``ua.jit`` entry is keyed on beyond the leading backend: its static arguments, by type and value, and
the globals and closure variables its function reads that a trace would bake in (:class:`Reads`, read again at
each call; the rule and why: docs/jit.md, "Globals and closure variables").
"""

from __future__ import annotations

import dis
import functools
import inspect
import types
import warnings
from collections.abc import Callable
from enum import Enum
from typing import Any

from unarray._backends._compiler import ATOMS, typed
from unarray._lookup import BY_TYPE

__all__ = ["JitStateWarning", "Reads", "static_positions", "typed"]

# Values a function reads that are code, not state: rebinding one is rare, and reading them at each call would
# cost every call (a function written with ua reads the module ``ua`` at least).
_CODE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
         types.BuiltinMethodType, staticmethod, classmethod)
# Keys are read at every call: a container larger than this is keyed by identity (and warned about).
_BUDGET = 64
_MISSING = object()


class JitStateWarning(UserWarning):
    """A function compiled by ``jax.jit`` or ``tf.function`` under ``ua.jit`` reads a global or closure variable
    whose contents ``ua.jit`` cannot key on: a change made to it in place is not seen by the compiled code."""


class _Unkeyable(Exception):
    pass


class _Same:
    """A key part by identity (holding the object, so that its id is not reused while the entry lives)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return type(other) is _Same and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def _freeze(v: Any, budget: list[int]) -> Any:
    # v's contents as a hashable key, by type; _Unkeyable where they cannot be (or are too many to read per call).
    budget[0] -= 1
    if budget[0] < 0:
        raise _Unkeyable
    t = type(v)
    if t in ATOMS or isinstance(v, Enum):
        return t, v
    if t is float or t is complex:
        return typed(v)
    if t is tuple or t is list:
        return t, tuple([_freeze(e, budget) for e in v])
    if t is dict:
        return t, tuple([(_freeze(k, budget), _freeze(e, budget)) for k, e in v.items()])
    if t is set or t is frozenset:
        return t, frozenset([_freeze(e, budget) for e in v])
    raise _Unkeyable


def _key_of(v: Any) -> Any:
    try:
        return _freeze(v, [_BUDGET])
    except _Unkeyable:
        return _Same(v)


def _silent(v: Any) -> bool:
    # Keyed by identity without a warning: arrays that cannot change in place (the backend declares it), and
    # objects a trace reads at run time (a tf.Variable: its tracing type is a reference).
    b = BY_TYPE.get(type(v))
    return (b is not None and b.immutable) or hasattr(type(v), "__tf_tracing_type__")


# Methods that change a container: a name used only through them is written (a log), not read.
_WRITES = frozenset(("append", "extend", "add", "update", "insert", "appendleft", "setdefault"))


def _code_reads(code: types.CodeType, free: frozenset[str]) -> set[tuple[str, str, tuple[str, ...]]]:
    # (kind "g" or "c", name, attribute path) of each global or free variable code reads, and the code nested in
    # it reads (lambdas, comprehensions, inner defs); ``x.a.b`` is read as the path ("a", "b").
    out: set[tuple[str, str, tuple[str, ...]]] = set()
    ins = list(dis.get_instructions(code))
    for i, op in enumerate(ins):
        if op.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            kind = "g"
        elif op.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF") and op.argval in free:
            kind = "c"
        else:
            continue
        path: list[str] = []
        for nxt in ins[i + 1:]:
            if nxt.opname not in ("LOAD_ATTR", "LOAD_METHOD"):
                break
            path.append(nxt.argval)
        if path and path[0] in _WRITES:
            continue
        out.add((kind, op.argval, tuple(path)))
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _code_reads(c, free & frozenset(c.co_freevars))
    return out


def _follow(v: Any, path: tuple[str, ...]) -> tuple[Any, bool]:
    # (the value at the end of path, whether it is state); code (modules, functions, methods, classes) is not.
    for a in path:
        if isinstance(v, _CODE) or _is_jit(v):
            return v, False
        v = getattr(v, a)
    return v, not (isinstance(v, _CODE) or _is_jit(v))


class Reads:
    """The globals and closure variables ``fn`` reads (with the attributes it reads of them, and what the functions
    of its own module it calls read), the ones holding state (not modules, functions or classes) found once here:
    ``key()`` reads them again."""

    def __init__(self, fn: Callable[..., Any], compiler: str) -> None:
        self._read: list[tuple[Any, str, tuple[str, ...]]] = []  # (globals dict or cell, name, path)
        self._seen: set[int] = set()
        self._visit(inspect.unwrap(fn), 0)
        self.watched = bool(self._read)
        name = getattr(fn, "__qualname__", repr(fn))
        for where, n, path in self._read:
            v = self._value(where, n, path)
            if type(_key_of(v)) is _Same and not _silent(v):
                what = ".".join((n, *path))
                warnings.warn(JitStateWarning(
                    f"ua.jit [{compiler}]: {name} reads {what} (a {type(v).__name__}), which ua.jit keys by "
                    "identity only: rebinding it recompiles, but a change made to it in place is not seen by the "
                    "compiled code (eager code sees it, as does a compiler that guards what it reads). Pass it as "
                    "an argument (static if hashable), or rebind it instead of changing it"), stacklevel=6)

    def _visit(self, fn: Any, depth: int) -> None:
        code = getattr(fn, "__code__", None)
        if code is None or id(code) in self._seen or depth > 3:
            return
        self._seen.add(id(code))
        g: dict[str, Any] = fn.__globals__
        cells = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
        for kind, n, path in sorted(_code_reads(code, frozenset(code.co_freevars))):
            where: Any = g if kind == "g" else cells.get(n)
            try:
                v, state = _follow(self._value(where, n, ()), path)
            except Exception:
                continue  # a builtin, a name not bound yet, an attribute missing: the call would fail eagerly too
            if isinstance(v, types.FunctionType) and (kind == "c" or v.__globals__ is g):
                self._visit(v, depth + 1)  # a helper of the same module or a closure: what it reads counts
            elif state:
                self._read.append((where, n, path))

    @staticmethod
    def _value(where: Any, n: str, path: tuple[str, ...]) -> Any:
        return functools.reduce(getattr, path, where[n] if type(where) is dict else where.cell_contents)

    def key(self) -> tuple[Any, ...]:
        """The values read now, each by type and contents (or by identity where it has no keyable contents)."""
        out = []
        for where, n, path in self._read:
            try:
                out.append(_key_of(self._value(where, n, path)))
            except Exception:  # unbound or deleted since: the call raises as eagerly
                out.append(_MISSING)
        return tuple(out)


def _is_jit(v: Any) -> bool:
    return type(v).__name__ == "jit" and type(v).__module__ == "unarray._jit"


def static_positions(fn: Callable[..., Any], nums: tuple[int, ...], names: tuple[str, ...],
                     error: Callable[[str], Exception]) -> dict[int, str | None]:
    """Position -> name of each static argument passed positionally (names resolved through the signature)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    by_name = {p.name for p in params}
    takes_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    for n in names:
        if params and n not in by_name and not takes_kw:
            raise error(f"static_argnames names {n!r}, which is not a parameter of "
                        f"{getattr(fn, '__qualname__', fn)}; its parameters are {sorted(by_name)}")
    out: dict[int, str | None] = {i: positional[i] if i < len(positional) else None for i in nums}
    out.update({positional.index(n): n for n in names if n in positional})
    return out
