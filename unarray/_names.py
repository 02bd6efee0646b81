"""The names a NumPy, torch or JAX user reaches for, mapped to the standard's function.

One table for ``ua.<name>`` (the module's ``__getattr__``) and ``xp.<name>`` (the bound namespace's
descriptors), both an :class:`UnknownNameError` naming the standard's function, and for
``ua.explain("<name>", ...)``'s "did you mean". A name with no entry gets difflib's closest names of the
namespace.
"""

from __future__ import annotations

import difflib
import functools
import sys

from unarray._errors import UnknownNameError

__all__ = ["FOREIGN", "error", "suggestion"]

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


def suggestion(name: str, names: list[str]) -> list[str]:
    """What to use instead of ``name``: the table's functions, else the closest of ``names`` (none: [])."""
    if name in FOREIGN:
        return list(FOREIGN[name])
    return difflib.get_close_matches(name, names, n=3)


@functools.lru_cache(maxsize=256)
def _message(name: str) -> str:
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
