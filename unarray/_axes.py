"""The ``axis`` argument, checked once in the front end for every backend.

The standard takes an int, a tuple of ints or ``None``; an axis must lie in
``[-ndim, ndim)`` (so a 0-d array has no valid axis) and may not repeat. The
backends disagree outside that (torch takes axes modulo ``ndim``, NumPy takes
``axis=0`` on a 0-d array, JAX and TensorFlow take ``axis=True`` as 1), so
each reduction, search, sort and cumulative function checks here and hands
the backend non-negative axes only. ``None`` costs nothing; an int axis costs
one rank read and a comparison.
"""

from __future__ import annotations

import operator
from typing import Any

from unarray._dispatch import BY_TYPE
from unarray._dispatch import fail as _fail
from unarray._dispatch import one as backend_of
from unarray._errors import ArgumentError, ArgumentTypeError, AxisError

__all__ = ["many", "one", "reduce", "single"]


def reduce(op: str, x: Any, axis: Any, *args: Any, attr: str = "", tuples: bool = True) -> Any:
    """The backend's ``attr`` (``op`` by default) of ``x`` over the checked ``axis`` (``tuples=False``: one int)
    and ``args``, in the front end's frame: the body of every reduction of the front end."""
    b = BY_TYPE.get(type(x)) or backend_of(x, op)
    if axis is not None:
        axis = many(op, b, x, axis, tuples)
    try:  # frame(op): its except clause is the template's (tools/gen_frontend.py)
        return getattr(b, attr or op)(x, axis, *args)
    except Exception as e:
        raise _fail(op, b, e) from e


def many(op: str, backend: Any, x: Any, axis: Any, tuples: bool = True) -> Any:
    """``axis`` of a reduction (int, sequence of ints): non-negative, in range, no repeats.

    ``tuples=False`` takes one int only (see :func:`one`).
    """
    try:
        nd = x.ndim
    except AttributeError:
        nd = _rank(x)
    if type(axis) is int and nd is not None:
        if -nd <= axis < nd:
            return axis if axis >= 0 else axis + nd
        raise _out_of_range(op, backend, axis, nd, x)
    return _general(op, backend, x, axis, nd, tuples)


def one(op: str, backend: Any, x: Any, axis: Any) -> Any:
    """``axis`` of a function on one axis (argmax, sort, cumulative_sum): one int, in range."""
    return many(op, backend, x, axis, False)


def single(op: str, backend: Any, x: Any, axis: Any) -> int:
    """``axis`` of a cumulative function: ``None`` is the only axis of a 1-D array, and refused otherwise."""
    if axis is not None:
        return int(one(op, backend, x, axis))
    nd = _rank(x)
    if nd is not None and nd != 1:
        raise ArgumentError(f"axis=None needs a 1-D array, got shape {_shape(x)}; pass axis=", op=op,
                            backend=backend.name)
    return 0


def _general(op: str, backend: Any, x: Any, axis: Any, nd: int | None, tuples: bool) -> Any:
    if isinstance(axis, (tuple, list)) and tuples:
        out = tuple(_index(op, backend, a, tuples) for a in axis)
        if nd is None:  # rank unknown while tracing: the backend checks at run time
            return out
        bad = [a for a in out if not -nd <= a < nd]
        if bad:
            raise _out_of_range(op, backend, bad[0], nd, x)
        out = tuple(a if a >= 0 else a + nd for a in out)
        if len(set(out)) != len(out):
            raise AxisError(f"axis {tuple(axis)!r} repeats an axis (array of shape {_shape(x)}); name each once",
                            op=op, backend=backend.name)
        return out
    a = _index(op, backend, axis, tuples)
    if nd is None:
        return a
    if not -nd <= a < nd:
        raise _out_of_range(op, backend, a, nd, x)
    return a if a >= 0 else a + nd


def _index(op: str, backend: Any, a: Any, tuples: bool) -> int:
    # Note: bool is an int subclass; the standard's axis is not, and JAX and TensorFlow would read True as 1.
    if not isinstance(a, bool) and type(a).__name__ not in ("bool", "bool_"):
        try:
            return operator.index(a)
        except TypeError:
            pass
    kinds = "an int, a tuple of ints or None" if tuples else "an int"
    raise ArgumentTypeError(f"axis must be {kinds}, got {a!r} ({type(a).__name__})", op=op, backend=backend.name)


def _out_of_range(op: str, backend: Any, axis: int, nd: int, x: Any) -> AxisError:
    valid = f"pass an axis in [{-nd}, {nd - 1}]" if nd else "a 0-d array has no axis; pass axis=None"
    return AxisError(f"axis {axis} is out of range for an array of {nd} dimensions (shape {_shape(x)}); {valid}",
                     op=op, backend=backend.name)


def _rank(x: Any) -> int | None:
    # Note: a tf.Variable has no ndim; its TensorShape has the rank (None when unknown while tracing).
    nd = getattr(x, "ndim", None)
    return nd if nd is not None else x.shape.rank if hasattr(x.shape, "rank") else len(x.shape)


def _shape(x: Any) -> tuple[Any, ...]:
    try:
        return tuple(x.shape)
    except (TypeError, ValueError):  # a TensorFlow shape of unknown rank
        return ()
