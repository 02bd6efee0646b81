"""The names a NumPy, torch or JAX user reaches for, mapped to the standard's function and keyword.

One table for ``ua.<name>`` (the module's ``__getattr__``) and ``xp.<name>`` (the bound namespace's
descriptors), both an :class:`UnknownNameError` naming the standard's function, and for
``ua.explain("<name>", ...)``'s "did you mean". A name with no entry gets difflib's closest names of the
namespace. A second table maps keywords (``dim``, ``keepdim``, ``ddof``, ``attn_mask``, ``out``...) to the
standard's: :func:`keyword_error` turns the call's ``TypeError`` into an :class:`ArgumentTypeError` naming the
keyword to use. It runs only once a call has failed (the C hot path's fallback and ``ua.nn``'s argument check
call it), so a correct call pays nothing for it; a function without either catches what it has no parameter for
in ``**refused`` (an empty dict per call, the cheapest hook: docs/design-notes.md) and calls
:func:`refuse`. :func:`public_dir` is what ``dir()`` lists.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, cast

from unarray import _backends
from unarray._errors import ArgumentTypeError, UnknownNameError
from unarray._lookup import of_array

__all__ = ["FOREIGN", "KEYWORDS", "RECIPES", "error", "keyword_error", "public_dir", "refuse", "suggestion"]

# Keys are never names of the namespace (tests/ops/test_names.py holds it); values are the standard's
# functions to use instead, best first ("linalg.vector_norm" is ua.linalg.vector_norm).
FOREIGN: dict[str, tuple[str, ...]] = {
    # NumPy (and jax.numpy, CuPy) names
    "concatenate": ("concat",), "hstack": ("concat", "stack"), "vstack": ("concat", "stack"),
    "column_stack": ("stack", "concat"), "transpose": ("permute_dims", "matrix_transpose"),
    "swapaxes": ("permute_dims", "moveaxis"), "rollaxis": ("moveaxis",), "ravel": ("reshape",),
    "flatten": ("reshape",), "fliplr": ("flip",), "flipud": ("flip",), "cumsum": ("cumulative_sum",),
    "cumprod": ("cumulative_prod",), "power": ("pow",), "float_power": ("pow",), "absolute": ("abs",),
    "fabs": ("abs",), "arccos": ("acos",), "arcsin": ("asin",), "arctan": ("atan",), "arctan2": ("atan2",),
    "arccosh": ("acosh",), "arcsinh": ("asinh",), "arctanh": ("atanh",), "amax": ("max",), "amin": ("min",),
    "dot": ("matmul", "vecdot", "tensordot"), "inner": ("vecdot",), "invert": ("bitwise_invert",),
    "bitwise_not": ("bitwise_invert",), "left_shift": ("bitwise_left_shift",),
    "right_shift": ("bitwise_right_shift",), "true_divide": ("divide",), "mod": ("remainder",),
    "conjugate": ("conj",), "around": ("round",), "rint": ("round",), "alltrue": ("all",),
    "sometrue": ("any",), "array": ("asarray",), "asanyarray": ("asarray",), "identity": ("eye",),
    "in1d": ("isin",), "unique": ("unique_values", "unique_counts", "unique_inverse", "unique_all"),
    "argwhere": ("nonzero",), "average": ("mean",), "norm": ("linalg.vector_norm", "linalg.matrix_norm"),
    "NaN": ("nan",), "NAN": ("nan",), "Inf": ("inf",), "Infinity": ("inf",), "PINF": ("inf",),
    # torch names
    "cat": ("concat",), "permute": ("permute_dims",), "t": ("matrix_transpose",), "clamp": ("clip",),
    "clamp_min": ("clip", "maximum"), "clamp_max": ("clip", "minimum"), "mm": ("matmul",),
    "bmm": ("matmul",), "unsqueeze": ("expand_dims",), "sub": ("subtract",), "mul": ("multiply",),
    "div": ("divide",), "neg": ("negative",), "ge": ("greater_equal",), "gt": ("greater",),
    "le": ("less_equal",), "lt": ("less",), "eq": ("equal",), "ne": ("not_equal",),
    "gather": ("take_along_axis",), "index_select": ("take",), "tensor": ("asarray",),
    "from_numpy": ("asarray",), "softmax": ("nn.softmax",), "log_softmax": ("nn.log_softmax",),
    "logsumexp": ("nn.logsumexp",), "gelu": ("nn.gelu",), "silu": ("nn.silu",),
    "layer_norm": ("nn.layer_norm",), "rms_norm": ("nn.rms_norm",),
}

# Names whose answer is an expression of the standard's functions rather than one function.
RECIPES: dict[str, str] = {
    "allclose": "ua.all(ua.abs(x1 - x2) <= atol + rtol * ua.abs(x2))",
    "isclose": "ua.abs(x1 - x2) <= atol + rtol * ua.abs(x2)",
    "array_equal": "ua.all(x1 == x2) (after comparing shapes)",
}

# Keywords of NumPy's and torch's functions -> (the standard's keywords for it, the first an op takes is named;
# how to say it where that needs more words, or where the standard has none).
KEYWORDS: dict[str, tuple[tuple[str, ...], str]] = {
    "dim": (("axis", "axes"), ""), "dims": (("axes", "axis"), ""), "keepdim": (("keepdims",), ""),
    "ddof": (("correction",), ""),
    "unbiased": (("correction",), "unbiased=True is correction=1, False is correction=0"),
    "attn_mask": (("mask",), ""), "normalized_shape": (("axis",), "axis= names the normalised axes"),
    "axes": (("axis",), ""), "axis": (("axes",), ""), "kind": (("stable",), "stable=True asks for a stable sort"),
    "out": ((), "the standard has no out=: unarray returns a new array, so assign the result"),
    "dtype": ((), "cast with ua.astype(x, dtype) before or after the call"),
    "input": ((), "pass the array positionally"), "other": ((), "pass the arrays positionally"),
    "a": ((), "pass the array positionally"),
    "inplace": ((), "unarray never writes into its inputs; assign the result"),
    "dropout_p": ((), "there is no dropout: results are deterministic on every backend"),
    "enable_gqa": ((), "grouped-query attention is on whenever the query heads are a multiple of the key heads"),
    "device": ((), "the result is on the input's device; move it with ua.to(x, device=...)"),
    "initial": ((), "combine the result with the initial value yourself"),
    "where": ((), "mask the input first (ua.where)"),
    "order": ((), "the standard has no memory order (ua.ascontiguousarray) and sorts along axis="),
    "xp": ((), "unarray's functions find their library from the arrays"),
    "mode": ((), "indices must be in range"), "casting": ((), "ua.can_cast says whether a cast keeps the kind"),
}


def _close(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    import difflib  # only once a name or keyword is wrong

    # 0.75: a misspelling (matmull, conact) is found, an unrelated name sharing a few letters is not.
    return difflib.get_close_matches(name, list(names), n=n, cutoff=0.75)


def suggestion(name: str, names: list[str]) -> list[str]:
    """What to use instead of ``name``: the table's functions, else the closest of ``names`` (none: [])."""
    if name in FOREIGN:
        return list(FOREIGN[name])
    return _close(name, names)


@functools.lru_cache(maxsize=256)
def _message(name: str) -> str:
    if name in RECIPES:
        return f"the array API standard has no {name}; write {RECIPES[name]}"
    ua = sys.modules["unarray"]
    use = " or ".join(f"ua.{n}" for n in suggestion(name, [n for n in ua.__all__ if not n.startswith("_")]))
    if name not in FOREIGN:
        return "no such function or constant in unarray" + (f"; did you mean {use}?" if use else "")
    if all(n.startswith("nn.") for n in FOREIGN[name]):
        return f"the array API standard has no {name}; unarray's is {use}"
    return f"unarray follows the array API standard; use {use}"


def error(name: str) -> AttributeError:
    """The error of ``ua.<name>`` where the namespace has no such name."""
    if name.startswith("__") and name.endswith("__"):  # protocol probes (doctest, pickle, Sphinx): the builtin's
        return AttributeError(f"module 'unarray' has no attribute {name!r}", name=name)
    e = UnknownNameError(_message(name), op=name)
    e.name = name
    return e


def public_dir(names: Iterable[str], *extra: str) -> list[str]:
    """``dir()`` of a namespace: its public names (``__all__``) and the given public extras, sorted."""
    return sorted({*names, *extra})


_PARAMS: dict[Any, tuple[dict[str, Any], bool]] = {}


def _params(fn: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
    # fn's parameters by name, and whether it takes **kwargs; read once per function, after a failure.
    if fn not in _PARAMS:
        import inspect

        sig = inspect.signature(fn).parameters
        # (a **refused: Refused takes nothing: its keywords are the ones refused)
        _PARAMS[fn] = dict(sig), any(p.kind is p.VAR_KEYWORD and p.annotation != "Refused" for p in sig.values())
    return _PARAMS[fn]


def keyword_error(fn: Callable[..., Any], given: Iterable[str], first: object = None,
                  op: str | None = None) -> ArgumentTypeError | None:
    """The typed error of calling ``fn`` with the keywords ``given`` where one of them is not its keyword (a
    NumPy or torch habit, a misspelling), naming the standard's keyword; None where ``fn`` takes them all
    (the call's TypeError came from elsewhere). ``first``: the call's first argument, whose backend the
    message names; ``op``: the name the message uses (``fn``'s ``ua.`` name by default)."""
    params, takes_any = _params(fn)
    keywords = [n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    wrong = [k for k in given if k not in keywords]
    if not wrong or takes_any:
        return None
    if op is None:
        sub = (getattr(fn, "__module__", "") or "").rpartition(".")[2]
        op = f"{sub}.{fn.__name__}" if sub in ("nn", "linalg", "fft") else fn.__name__
    key = wrong[0]
    return ArgumentTypeError(_keyword_message(op, key, keywords, params), op=op, backend=_backend_name(first))


def refuse(fn: Callable[..., Any], refused: dict[str, Any], first: object = None, op: str | None = None) -> NoReturn:
    """Raise the typed error of calling ``fn`` with the keywords its ``**refused`` caught; ``first``: the call's
    first array (or the backend's name, for creation), whose backend the message names; ``op``: as keyword_error."""
    raise cast(ArgumentTypeError, keyword_error(fn, refused, first, op))  # (never None: fn takes none of them)


def _keyword_message(op: str, key: str, keywords: list[str], params: dict[str, Any]) -> str:
    standard, how = KEYWORDS.get(key, ((), ""))
    owners = [lib.name for lib in _backends.LIBRARIES.values() if key in lib.api_names]
    head = f"unexpected keyword {key}=" + (f" ({'/'.join(owners)}'s)" if owners else "")
    keywords = [k for k in keywords if not k.startswith("_")]  # (ua.to's _op= is internal)
    takes = ", ".join(f"{k}=" for k in keywords) or "no keywords"
    if key in params:  # a positional-only parameter given by name
        return f"{head}; pass {key} positionally"
    std = next((k for k in standard if k in keywords), None)
    if std is not None:
        return f"{head}; the array API standard calls it {std}=" + (f" ({how})" if how else "")
    if how and not standard:
        return f"{head}; {how} (ua.{op} takes {takes})"
    close = _close(key, keywords, n=2)
    if close:
        return f"{head}; did you mean {' or '.join(f'{c}=' for c in close)}?"
    return f"{head}; ua.{op} takes {takes}"


def _backend_name(x: object) -> str | None:
    if isinstance(x, str):  # creation's backend=
        return x
    if isinstance(x, (list, tuple)) and x:  # concat's and stack's arrays
        x = x[0]
    try:
        b = of_array(x)
    except Exception:  # not an array: the message names no backend
        return None
    return None if b is None else str(b.name)
