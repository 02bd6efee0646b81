"""Dispatch: the leader rule for mixed inputs, and errors translated for the front end.

The backend of one array and the default backend are found in unarray/_lookup.py (re-exported here
for the front end); this module adds what needs the handoff: a call on arrays of several libraries
is led by one of them, and the others are handed to it zero-copy (unarray.interop).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from unarray import interop
from unarray._devices import MeshDevice
from unarray._dtypes import canonical_name, check_int_scalar, promote, promote_names
from unarray._errors import (
    ArgumentError,
    ArgumentTypeError,
    DeviceMismatchError,
    DTypeError,
    ShapeError,
    UnarrayError,
)
from unarray._lookup import (
    BY_TYPE,
    PASSIVE,
    PY_SCALARS,
    Viewed,
    backend_named,
    default_backend,
    one,
    use,
)

if TYPE_CHECKING:
    from unarray._backends._base import Backend

__all__ = ["BY_TYPE", "PROMOTING", "backend_named", "call", "default_backend", "fail", "many", "one", "pair",
           "promoted", "run_as_written", "use"]

# The ops whose array operands promote to one dtype (the standard's type promotion), by the position of the first
# that does (where's condition takes no part).
PROMOTING: dict[str, int] = {
    **dict.fromkeys((
        "add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
        "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal", "hypot", "less", "less_equal",
        "logaddexp", "maximum", "minimum", "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract",
        "matmul", "tensordot", "vecdot", "linalg.cross", "linalg.outer", "linalg.solve", "concat", "stack"), 0),
    "where": 1,
}
_COPYING = frozenset({"concat", "stack"})

def pair(op: str, x1: Any, x2: Any) -> tuple[Backend, Any, Any]:
    """Backend and operands of a two-array call; Python scalars follow the array. Two arrays of two dtypes of an
    op in ``PROMOTING`` are promoted by unarray's rule (:func:`promoted`)."""
    b, x1, x2 = _pair(op, x1, x2)
    if type(x1) not in PY_SCALARS and type(x2) not in PY_SCALARS and op in PROMOTING:
        d1, d2 = x1.dtype, x2.dtype
        if d1 is not d2 and d1 != d2:
            x1, x2 = promoted(op, b, [x1, x2])
    return b, x1, x2


def promoted(op: str, b: Backend, arrays: list[Any], start: int = 0) -> list[Any]:
    """``arrays`` (from ``start``; Python scalars and None left as they are) promoted to one dtype by unarray's rule
    (``unarray._dtypes.promote``): the standard's table, where every backend follows the standard; the higher kind's
    dtype at its own width for mixed kinds, cast here for a library that widens instead (NumPy's int32 with float32
    is float64); and the typed refusal of a pair with no rule (int64 with uint64). Runs only where dtypes differ."""
    idx = [i for i in range(start, len(arrays)) if type(arrays[i]) not in PASSIVE]
    names: list[str] = []
    for i in idx:
        n = canonical_name(arrays[i].dtype)
        if n is None:  # a dtype unarray does not name: the library's own rules
            return arrays
        names.append(n)
    out, crossed = names[0] if names else None, False
    for n in names[1:]:
        assert out is not None
        if n != out:
            crossed = crossed or promote_names(out, n) is None
            out = promote(op, out, n, b.name)
    # (concat and stack copy every operand anyway: cast here, also where the library cannot promote them, as torch
    # cannot uint16 with int8)
    if out is None or (op not in _COPYING and (not crossed or b.native_mixed_kinds)):
        return arrays
    target = b.dtype(out)
    arrays = list(arrays)
    for i, n in zip(idx, names, strict=True):
        if n != out:
            arrays[i] = b.astype(arrays[i], target, copy=False)
    return arrays


def _pair(op: str, x1: Any, x2: Any) -> tuple[Backend, Any, Any]:
    t1, t2 = type(x1), type(x2)
    if t1 is t2:
        return one(x1, op), x1, x2
    if t1 in PY_SCALARS:
        b2 = one(x2, op)
        if t1 is int and not 0 <= x1 <= 127:  # every integer dtype holds 0..127: no lookup for those
            check_int_scalar(op, b2.name, x1, x2.dtype)
        return b2, x1, x2
    b1 = one(x1, op)
    if t2 in PY_SCALARS:
        if t2 is int and not 0 <= x2 <= 127:
            check_int_scalar(op, b1.name, x2, x1.dtype)
        return b1, x1, x2
    b2 = one(x2, op)
    if b1 is b2:
        return b1, x1, x2
    r1 = rank(b1, x1)
    if r1 < 2 and rank(b2, x2) > r1:
        return b2, adopt(op, b2, x2, b1, x1), x2  # a traced, lazy or distributed operand leads wherever it is
    return b1, x1, adopt(op, b1, x1, b2, x2)


def rank(b: Backend, x: Any) -> int:
    """How strongly ``x`` leads a mixed call: 2 traced (a JAX tracer, torch.compile, tf.function), 1 lazy or
    distributed (dask, a JAX array sharded over several devices, a torch DTensor), 0 an eager array.

    Note: the other operands join the leader (handed to it, wrapped as a dask array chunked like it, or
    placed by its engine); a lazy or distributed array is never gathered or computed to join an eager one."""
    if b.is_tracer(x):
        return 2
    if b.lazy:
        return 1
    # Note: only a library whose arrays can spread is asked (no type inspection inside a trace of NumPy code).
    return 1 if b.spreads and b.is_spread(x) else 0


def many(op: str, arrays: Sequence[Any], skip_none: bool = False) -> tuple[Backend, list[Any]]:
    """Backend and operands of a call on a sequence of arrays (the first array leads).

    Python scalars (and ``None`` with ``skip_none``) take no part in choosing.
    """
    arrays = list(arrays)
    passive = PASSIVE if skip_none else PY_SCALARS
    lead_i = next((i for i, a in enumerate(arrays) if type(a) not in passive), None)
    if lead_i is None:
        raise ArgumentTypeError("needs at least one array argument; got only Python scalars", op=op)
    lead_i, lead = _traced_lead(op, arrays, passive, lead_i, one(arrays[lead_i], op))
    for i, a in enumerate(arrays):
        if type(a) in passive:
            continue
        b = one(a, op)
        if b is not lead:
            arrays[i] = adopt(op, lead, arrays[lead_i], b, a)
    start = PROMOTING.get(op)
    if start is not None:
        arrays = promoted(op, lead, arrays, start)
    elif op == "clip":
        arrays = _as_first(op, lead, arrays)
    return lead, arrays


def _as_first(op: str, b: Backend, arrays: list[Any]) -> list[Any]:
    # Note: clip's result has x's dtype (the standard; torch and JAX promoted it): a bound of another dtype is cast
    # to x's first (the same values), after the promotion rule's refusals (int8 with a uint64 bound).
    x = arrays[0]
    if type(x) in PASSIVE:
        return arrays
    out = list(arrays)
    for i in range(1, len(out)):
        m = out[i]
        if type(m) not in PASSIVE and m.dtype is not x.dtype and m.dtype != x.dtype:
            n1, n2 = canonical_name(x.dtype), canonical_name(m.dtype)
            if n1 is not None and n2 is not None:
                promote(op, n1, n2, b.name)
            out[i] = b.astype(m, x.dtype, copy=False)
    return out


def _traced_lead(op: str, arrays: list[Any], passive: frozenset[Any], i: int, lead: Backend) -> tuple[int, Backend]:
    # A traced, lazy or distributed operand leads an eager first array (rank): the eager one joins it (a trace's
    # constant, as in the native expression); the other way cannot work.
    best = -1  # the leader's rank, read once another library shows up (a one-library call reads none)
    for j, a in enumerate(arrays):
        if type(a) not in passive:
            b = one(a, op)
            if b is not lead:
                if best < 0:
                    best = rank(lead, arrays[i])
                    if best == 2:
                        return i, lead
                r = rank(b, a)
                if r > best:
                    i, lead, best = j, b, r
    return i, lead


def leader(op: str, arrays: Sequence[Any]) -> int:
    """Index of the array that leads a call on ``arrays`` (the first, unless a traced, lazy or distributed
    one comes later): what ``ua.explain`` reports."""
    i = next((n for n, a in enumerate(arrays) if type(a) not in PY_SCALARS), 0)
    return _traced_lead(op, list(arrays), PY_SCALARS, i, one(arrays[i], op))[0]


def adopt(op: str, lead: Backend, lead_x: Any, other: Backend, x: Any) -> Any:
    """Hand ``x`` (of backend ``other``) to the leader zero-copy, refusing a device change."""
    if isinstance(other, Viewed):  # np.matrix joining an ndarray: its plain view, no handoff
        x, other = other.plain(x), other.base
        if other is lead:
            return x
    if not lead.is_tracer(lead_x):  # Note: a trace places the constants it captures itself
        same_device(op, lead, lead_x, other, x)
    if lead.lazy:  # an eager array joins a lazy graph (dask: wrapped, chunked like the leader)
        return lead.join(op, lead_x, x, interop.to)
    constant = lead.traced_constant(x)  # inside torch.compile: the trace's own capture of x
    if constant is not None:
        return constant
    out = interop.to(x, lead.name, copy=None, _op=op)
    if lead.spreads and rank(lead, lead_x) == 1:  # joins an array spread over a mesh: placed as the leader says
        return lead.replicate_on(lead_x, out)
    return out


def same_device(op: str, lead: Backend, lead_x: Any, other: Backend, x: Any) -> None:
    """Raise :class:`DeviceMismatchError` where ``x`` (of backend ``other``) is not on the leading array's device."""
    d_lead, d_other = lead.device_of(lead_x), other.device_of(x)
    if d_lead != d_other:
        fix = f"move one explicitly, e.g. ua.to(x, {lead.name!r}, device={str(d_lead)!r})"
        if isinstance(d_lead, MeshDevice) and lead.mesh_fix:  # a library that takes only its own kind beside it
            fix = lead.mesh_fix
        raise DeviceMismatchError(
            f"the leading {lead.name} array is on {d_lead} but a {other.name} array is on {d_other}; {fix}",
            op=op,
            backend=lead.name,
        )


def run_as_written(*namespaces: Any) -> None:
    """Mark the public functions of ``namespaces`` so that ``tf.function`` calls them unconverted.

    Note: tf.function's AutoGraph rewrites the Python it meets (unarray's own ``if``s and ``raise``s) and
    re-raises an error it cannot rebuild as ``StagingError``; a function that carries ``autograph_info__``
    (the mark ``tf.autograph.experimental.do_not_convert`` leaves) runs as written, so a call traced by
    tf.function raises the same typed error as eagerly. Setting an attribute imports nothing.
    """
    for ns in namespaces:
        for f in vars(ns).values():
            if callable(f) and str(getattr(f, "__module__", "")).startswith("unarray"):
                try:
                    f.autograph_info__ = None
                except (AttributeError, TypeError):  # a C function takes no attributes: nothing to convert
                    pass


# A native refusal's words -> its typed error and the fix, the first that matches (after the library's own words).
_BY_WORDS: tuple[tuple[tuple[str, ...], type[UnarrayError], str], ...] = (
    (("same device", "expected device", "not on the expected device", "different devices", "incompatible devices"),
     DeviceMismatchError, "move the arrays to one device first, e.g. ua.to(x, device=...)"),
    (("dtype", "not implemented for", "type promotion", "expected scalar type", "data type"),
     DTypeError, "cast with ua.astype or pick a dtype the backend supports"),
    (("shape", "broadcast", "dimension", "mismatch", "size", "must match", "incompatible"),
     ShapeError, "check the shapes against the op's documented shapes"),
)


# Arithmetic on bools that the front end refuses (add and multiply are or/and, as NumPy): the way to say it.
_NO_BOOL = {"subtract": "ua.logical_xor(x1, x2)"}


def recover(op: str, backend: Backend, exc: Exception, *args: Any) -> Any:
    """The result of a call whose native kernel refused the arguments, where the backend has another way to
    run it (``Backend.recover``: torch's uint16/32/64 arithmetic); else the typed error for the refusal.
    Called only after a failure, so the common call pays nothing for it."""
    if op in _NO_BOOL and all(a is True or a is False or (type(a) not in PY_SCALARS and
                                                          backend.dtype_name(a) == "bool") for a in args):
        raise DTypeError(f"the standard defines no {op} of bools (and no backend agrees on one); use "
                         f"{_NO_BOOL[op]}, or cast to an integer dtype first", op=op, backend=backend.name) from exc
    try:
        out = backend.recover(op, exc, args)
    except Exception as e:  # the other way refused too (no standard promotion): its reason, typed
        raise fail(op, backend, e) from e
    if out is NotImplemented:
        raise fail(op, backend, exc) from exc
    return out


def fail(op: str, backend: Backend | None, exc: BaseException) -> BaseException:
    """The typed unarray error for a native failure of ``op`` (returned, for ``raise ... from``)."""
    name = None if backend is None else backend.name
    if isinstance(exc, UnarrayError):
        if exc.op is not None:
            return exc
        # Raised below the front end (a dtype lookup, the precision policy): name the op and backend.
        try:
            named = type(exc)(str(exc), op=op, backend=exc.backend or name)
        except TypeError:
            return exc
        return named.with_traceback(exc.__traceback__)
    text = f"{type(exc).__name__}: {exc}".strip()
    low = text.lower()
    own = None if backend is None else backend.failure_hint(low)  # the library's own words, read first
    if own is None:
        own = next(((cls, fix) for words, cls, fix in _BY_WORDS if any(w in low for w in words)), None)
    if own is None:
        own = ((ArgumentTypeError, f"check the argument types against help(ua.{op})") if isinstance(exc, TypeError)
               else (ArgumentError, f"check the arguments against help(ua.{op})"))
    cls, hint = own
    return cls(f"the backend rejected the call ({text}); {hint}", op=op, backend=name)


_fail = fail  # (the name the frame's except clause calls)


def call(op: str, b: Backend, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in the front end's frame (a native failure raises :func:`fail`'s typed error)."""
    try:  # frame(op): its except clause is the template's (tools/gen_frontend.py)
        return fn(*args, **kwargs)
    except Exception as e:
        raise _fail(op, b, e) from e
