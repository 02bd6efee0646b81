"""The arguments of ``ua.nn``'s functions, checked once in the front end for every backend.

Attention's shapes, mask, ``is_causal`` and ``scale`` against its shape legend (``check_attention``).

A torch-style positional call (``layer_norm(x, (4,))``) is a typed error naming the keyword to use;
``eps`` is a finite non-negative real number; ``approximate`` is a bool (torch's strings are refused:
both are truthy); ``weight`` and ``bias`` are floating and promote with ``x`` as the standard's
promotion rules say.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from unarray import _backends
from unarray._backends.attention_masks import CAUSAL, NONE, MaskSpec
from unarray._dispatch import BY_TYPE
from unarray._dtypes import promote_names
from unarray._errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from unarray._names import keyword_error
from unarray._precision import scope

__all__ = ["FLOATS", "check_attention", "check_bool", "check_eps", "keywords", "owner", "result_dtype", "their"]

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_OP = "scaled_dot_product_attention"
_F = TypeVar("_F", bound=Callable[..., Any])


def owner(arg: str) -> str:
    """Whose API names ``arg`` (``Library.api_names``), for a hint that says what to pass instead: ``"torch's"``."""
    owners = [lib.name for lib in _backends.LIBRARIES.values() if arg in lib.api_names]
    return f"{'/'.join(owners)}'s" if owners else "another library's"


def their(arg: str) -> str:
    """``arg`` named as its library's: ``"torch's dim"``."""
    return f"{owner(arg)} {arg}"


def keywords(positional: int, hint: str) -> Callable[[_F], _F]:
    """Refuse more than ``positional`` positional arguments with an ``ArgumentTypeError`` saying ``hint``, and a
    keyword ``fn`` does not take (torch's ``dim=``, ``attn_mask=``) with one naming the standard's keyword."""

    def mark(fn: _F) -> _F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if len(args) > positional:
                raise _positional(fn.__name__, positional, args, hint)
            try:  # (free until it raises)
                return fn(*args, **kwargs)
            except TypeError:
                op = fn.__name__ if fn.__name__ == _OP else f"nn.{fn.__name__}"
                first = args[0] if args else next(iter(kwargs.values()), None)
                err = keyword_error(fn, kwargs, first, op=op) if kwargs else None
                if err is None:
                    raise
                raise err from None

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
    if isinstance(value, bool) or _numpy_scalar(value):
        return bool(value)
    raise ArgumentTypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}; {hint}", op=op,
                            backend=backend)


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


# -- scaled_dot_product_attention ---------------------------------------------------------------
ROUTES: dict[Any, tuple[Any, Any]] = {}  # a call's signature -> (its backend, its route's Plan.again)


def route(q: Any, k: Any, v: Any, mask: Any, is_causal: Any, window: Any, ids: Any, scale: Any, layout: Any,
          precision: Any) -> tuple[Any, Any, Any]:
    """The call's signature (None where it is planned in full: a mask array, segment ids, mixed libraries, a trace)
    and the backend and Plan.again of the route planned for it before (its arguments were checked then), if any."""
    t = type(q)
    b = BY_TYPE.get(t)
    arrays = None if b is None or mask is not None or ids is not None or type(k) is not t or type(v) is not t \
        else b.attention_signature(q, k, v)
    if arrays is None:
        return None, None, None
    # (the scalars' types too: 1 == True == 1.0 would otherwise reach a route checked for another argument)
    sides = (window, type(window), *(map(type, window) if isinstance(window, tuple) else ()))
    key = (t, arrays, is_causal, type(is_causal), sides, scale, type(scale), layout,
           scope() if precision is None else precision)
    try:
        return (key, *ROUTES.get(key, (None, None)))
    except TypeError:  # an unhashable argument (a list for window): planned in full
        return None, None, None


def remember(key: Any, b: Any, plan: Any) -> None:
    """Keep the route of a call's signature where its plan can run again (Plan.again holds no arrays)."""
    if key is not None and plan.again is not None:
        if len(ROUTES) >= 256:  # (a growing KV cache gives a new signature per step)
            ROUTES.clear()
        ROUTES[key] = (b, plan.again)


def check_attention(backend: str, q: Any, k: Any, v: Any, mask: Any, is_causal: Any, scale: Any, layout: str,
                    dtype_name: Any, window: Any = None, ids: Sequence[Any] = (None, None)) -> tuple[float, MaskSpec]:
    """The scale, and the mask arguments as one MaskSpec."""
    if layout not in ("bhsd", "bshd"):
        raise ArgumentError(f"layout must be 'bhsd' or 'bshd', got {layout!r}", op=_OP, backend=backend)
    if not (isinstance(is_causal, bool) or _numpy_scalar(is_causal)):  # never an array (it may be a traced value)
        raise ArgumentTypeError(f"is_causal must be a bool (Python or NumPy scalar), got {type(is_causal).__name__}; "
                                "for a 0-d array pass bool(x) outside any trace", op=_OP, backend=backend)
    names = (dtype_name(q), dtype_name(k), dtype_name(v))
    if not (names[0] == names[1] == names[2]) or names[0] not in FLOATS:
        raise DTypeError(f"q, k, v must share one floating dtype ({', '.join(FLOATS)}); got {', '.join(names)}; "
                         "cast with ua.astype", op=_OP, backend=backend)
    shapes = (tuple(q.shape), tuple(k.shape), tuple(v.shape))
    rank = len(shapes[0])
    if rank < 3 or len(shapes[1]) != rank or len(shapes[2]) != rank:
        raise ShapeError(f"q, k, v need the same rank >= 3 ((*B, H, S, D) for {layout!r}); got shapes "
                         f"{shapes[0]}, {shapes[1]}, {shapes[2]}", op=_OP, backend=backend)
    (qs, ks, vs) = shapes
    h, s = (-3, -2) if layout == "bhsd" else (-2, -3)
    problem = None
    # Note: a dimension unknown while tracing (None inside tf.function) is checked by the kernel at run time.
    if not (_same(qs[:-3], ks[:-3]) and _same(ks[:-3], vs[:-3])):
        problem = "batch dimensions *B differ"
    elif not (_same((ks[h], ks[s]), (vs[h], vs[s]))):
        problem = "k and v differ in heads Hk or length Sk"
    elif not _same(qs[-1:], ks[-1:]):
        problem = "q and k differ in head dimension D"
    elif ks[h] == 0 or (qs[h] is not None and ks[h] is not None and qs[h] % ks[h] != 0):
        problem = f"query heads Hq={qs[h]} are not a multiple of key/value heads Hk={ks[h]}"
    if problem is not None:
        raise ShapeError(f"{problem}: q {qs}, k {ks}, v {vs} (layout {layout!r}: q (*B, {_legend(layout, 'q')}), "
                         f"k (*B, {_legend(layout, 'k')}), v (*B, {_legend(layout, 'v')}))", op=_OP, backend=backend)
    if mask is not None:
        _check_mask(backend, mask, qs[:-3] + (qs[h], qs[s], ks[s]), dtype_name)
    spec = _mask_spec(backend, bool(is_causal), window, ids, qs[:-3], qs[s], ks[s], dtype_name)
    if scale is None:
        if qs[-1] is None:
            raise ShapeError(f"the head dimension D of q {qs} is unknown while tracing, so the default scale "
                             "1/sqrt(D) cannot be set; pass scale= or trace with D known", op=_OP, backend=backend)
        return (1.0 / math.sqrt(qs[-1]) if qs[-1] else 1.0), spec
    return _check_scale(backend, scale), spec


def _mask_spec(backend: str, causal: bool, window: Any, ids: Sequence[Any], batch: tuple[int, ...], sq: int,
               sk: int, dtype_name: Any) -> MaskSpec:
    if window is None and ids[0] is None:
        return CAUSAL if causal else NONE
    sides = window if isinstance(window, (tuple, list)) else (window, window)
    if len(sides) != 2 or not all(w is None or (isinstance(w, numbers.Integral) and not isinstance(w, bool))
                                  for w in sides):
        raise ArgumentTypeError(f"window must be None, an int w >= 0 (the pair (w, w)) or a pair (left, right) of ints "
                                f">= 0 or None (unbounded on that side), got {window!r}", op=_OP, backend=backend)
    left, right = (None if w is None else int(w) for w in sides)
    if (left or 0) < 0 or (right or 0) < 0:
        raise ArgumentError(f"window sides must be >= 0 (keys before and after the query's position), got "
                            f"{window!r}", op=_OP, backend=backend)
    for name, a, n in (("q_ids", ids[0], sq), ("kv_ids", ids[1], sk)) if ids[0] is not None else ():
        if dtype_name(a) not in INTEGERS:
            raise DTypeError(f"segment_ids must be integer arrays, got {name} of dtype {dtype_name(a)}; cast with "
                             "ua.astype(ids, ua.int32)", op=_OP, backend=backend)
        ms = tuple(a.shape)
        if not ms or ms[-1] not in (n, None) or not _broadcasts(ms[:-1], batch) or (ids[0] is ids[1] and sq != sk):
            raise ShapeError(f"segment_ids {name} of shape {ms} must be (*B, {'Sq' if name == 'q_ids' else 'Sk'}) "
                             f"with *B broadcastable to q's batch dims {batch} and S = {n}; for Sq != Sk pass the pair "
                             "(q_ids, kv_ids)", op=_OP, backend=backend)
    right = (0 if right is None else min(right, 0)) if causal else right
    return MaskSpec(causal, left, right, ids[0], ids[1])


def _check_scale(backend: str, scale: Any) -> float:
    # numbers.Real covers Python ints and floats and NumPy's scalars (NumPy registers them); not bool, not arrays.
    if isinstance(scale, bool) or _numpy_scalar(scale) or not isinstance(scale, numbers.Real):
        raise ArgumentTypeError(f"scale must be a real number (Python or NumPy scalar) or None, got "
                                f"{type(scale).__name__}; for a 0-d array pass float(x) outside any trace", op=_OP,
                                backend=backend)
    value = float(scale)
    if not math.isfinite(value):
        raise ArgumentError(f"scale must be finite, got {value}: every score would be NaN or infinite", op=_OP,
                            backend=backend)
    return value


def _numpy_scalar(x: Any) -> bool:
    # NumPy's bool scalar (np.bool_, named "bool" since NumPy 2), told apart without importing NumPy: a scalar type
    # of that name with an empty shape (the other libraries have no scalar types).
    t = type(x)
    return t.__name__ in ("bool", "bool_") and t is not bool and getattr(x, "shape", None) == ()


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(m is None or n is None or m == n for m, n in zip(a, b, strict=True))


def _check_mask(backend: str, mask: Any, target: tuple[int, ...], dtype_name: Any) -> None:
    name = dtype_name(mask)
    if name != "bool" and name not in FLOATS:
        raise DTypeError(f"mask must be boolean (True = attend) or floating (additive), got {name}", op=_OP,
                         backend=backend)
    ms = tuple(mask.shape)
    if not _broadcasts(ms, target):
        raise ShapeError(f"mask of shape {ms} does not broadcast to (*B, Hq, Sq, Sk) = {target}", op=_OP,
                         backend=backend)


def _broadcasts(ms: tuple[Any, ...], target: tuple[Any, ...]) -> bool:
    return len(ms) <= len(target) and all(m in (1, t) or m is None or t is None
                                          for m, t in zip(ms[::-1], target[::-1], strict=False))


def _legend(layout: str, which: str) -> str:
    h, s, d = {"q": ("Hq", "Sq", "D"), "k": ("Hk", "Sk", "D"), "v": ("Hk", "Sk", "Dv")}[which]
    return f"{h}, {s}, {d}" if layout == "bhsd" else f"{s}, {h}, {d}"
