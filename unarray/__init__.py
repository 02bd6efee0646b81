"""unarray: one array-API front end over NumPy, PyTorch, CuPy, JAX and TensorFlow.

``import unarray as ua; ua.matmul(a, b)`` runs on whatever arrays the caller
brings and returns the caller's own array type on the same device. Importing
unarray imports no array framework.
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys
from functools import partial as _partial

from typing import TYPE_CHECKING

from unarray import _lookup
from unarray._devices import Device, MeshDevice, ShardedDevice
from unarray._dispatch import run_as_written as _run_as_written
from unarray._dispatch import use
from unarray._errors import (
    ArgumentError,
    ArgumentTypeError,
    ArraySizeError,
    AxisError,
    BackendNotAvailableError,
    CompileError,
    DeviceMismatchError,
    DeviceNotAvailableError,
    DTypeError,
    EmptyReductionError,
    HandoffError,
    ReadOnlyViolationError,
    ShapeError,
    TracerHandoffError,
    UnarrayError,
    UnknownArrayTypeError,
    UnknownNameError,
    UnsupportedError,
)
from unarray._names import public_dir as _public_dir
from unarray._precision import current as get_precision
from unarray._precision import precision
from unarray.constants import e, inf, nan, newaxis, pi
from unarray.creation import arange, asarray, empty, eye, full, linspace, ones, zeros
from unarray.creation_from_arrays import empty_like, full_like, meshgrid, ones_like, tril, triu, zeros_like
from unarray.datatypes import (
    astype, bfloat16, bool, can_cast, complex64, complex128, finfo, float16, float32, float64, iinfo, int8,
    int16, int32, int64, isdtype, result_type, uint8, uint16, uint32, uint64,
)
from unarray.elementwise import (
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert, bitwise_left_shift,
    bitwise_or, bitwise_right_shift, bitwise_xor, ceil, clip, conj, copysign, cos, cosh, divide, equal, exp,
    expm1, floor, floor_divide, greater, greater_equal, hypot, imag, isfinite, isinf, isnan, less, less_equal,
    log, log1p, log2, log10, logaddexp, logical_and, logical_not, logical_or, logical_xor, maximum, minimum,
    multiply, negative, nextafter, not_equal, positive, pow, real, reciprocal, remainder, round, sign, signbit,
    sin, sinh, sqrt, square, subtract, tan, tanh, trunc,
)
from unarray.indexing import take, take_along_axis
from unarray.layout import ascontiguousarray
from unarray.linear_algebra import matmul, matrix_transpose, tensordot, vecdot
from unarray.manipulation import (
    broadcast_arrays, broadcast_shapes, broadcast_to, concat, expand_dims, flip, moveaxis, permute_dims, repeat,
    reshape, roll, squeeze, stack, tile, unstack,
)
from unarray.searching import argmax, argmin, count_nonzero, nonzero, searchsorted, where
from unarray.sets import isin, unique_all, unique_counts, unique_inverse, unique_values
from unarray.sorting import argsort, sort
from unarray.statistical import cumulative_prod, cumulative_sum, max, mean, min, prod, std, sum, var
from unarray.utility import all, any, diff

if TYPE_CHECKING:  # imported on first use (_LAZY below); a type checker reads them here
    from unarray import fft, linalg, nn
    from unarray.bound import BoundNamespace, array_namespace, namespace
    from unarray._jit import JitFallbackWarning, JitGraphBreakWarning, JitStateWarning, jit
    from unarray.generic import apply_numpy, at
    from unarray.interop import checking_readonly, from_dlpack, stats, to, verify_readonly
    from unarray.introspection import BackendInfo, Explanation, backend_of, backends, device, explain
    from unarray.introspection import Info as _Info
    from unarray.nn import scaled_dot_product_attention

__version__ = "0.1.0"
__array_api_version__ = "2025.12"

__all__ = [
    # introspection, interop, policy
    "BackendInfo", "BoundNamespace", "Device", "MeshDevice", "ShardedDevice", "Explanation", "array_namespace",
    "backend_of", "backends", "device", "explain", "from_dlpack", "get_precision", "precision", "stats", "to", "use",
    "checking_readonly", "verify_readonly", "scaled_dot_product_attention", "jit", "JitFallbackWarning",
    "JitGraphBreakWarning", "JitStateWarning",
    # layout
    "ascontiguousarray",
    # generic code on immutable and lazy arrays
    "at", "apply_numpy",
    # errors
    "ArgumentError", "ArgumentTypeError", "ArraySizeError", "AxisError", "BackendNotAvailableError", "CompileError",
    "DTypeError", "DeviceMismatchError", "DeviceNotAvailableError", "EmptyReductionError", "HandoffError",
    "ReadOnlyViolationError", "ShapeError", "TracerHandoffError", "UnarrayError", "UnknownArrayTypeError",
    "UnknownNameError", "UnsupportedError",
    # extensions
    "fft", "linalg", "nn",
    # constants
    "e", "inf", "nan", "newaxis", "pi",
    # dtypes and data type functions
    "astype", "bfloat16", "bool", "can_cast", "complex64", "complex128", "finfo", "float16", "float32",
    "float64", "iinfo", "int8", "int16", "int32", "int64", "isdtype", "result_type", "uint8", "uint16",
    "uint32", "uint64",
    # creation
    "arange", "asarray", "empty", "empty_like", "eye", "full", "full_like", "linspace", "meshgrid", "ones",
    "ones_like", "tril", "triu", "zeros", "zeros_like",
    # element-wise
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
    "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "clip", "conj",
    "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater",
    "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p",
    "log2", "log10", "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
    "minimum", "multiply", "negative", "nextafter", "not_equal", "positive", "pow", "real", "reciprocal",
    "remainder", "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh",
    "trunc",
    # indexing, linear algebra, manipulation
    "take", "take_along_axis", "matmul", "matrix_transpose", "tensordot", "vecdot", "broadcast_arrays",
    "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
    "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    # searching, sets, sorting, statistical, utility
    "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where", "isin", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "argsort", "sort", "cumulative_prod", "cumulative_sum",
    "max", "mean", "min", "prod", "std", "sum", "var", "all", "any", "diff",
]


# Public names whose module is imported on their first use, not by ``import unarray``: what the common calls
# (the standard's functions, creation) do not need. name -> its module.
_LAZY: dict[str, str] = {
    **dict.fromkeys(("jit", "JitFallbackWarning", "JitGraphBreakWarning", "JitStateWarning"), "unarray._jit"),
    **dict.fromkeys(("checking_readonly", "from_dlpack", "stats", "to", "verify_readonly"), "unarray.interop"),
    **dict.fromkeys(("BoundNamespace", "array_namespace", "namespace"), "unarray.bound"),
    **dict.fromkeys(("BackendInfo", "Explanation", "backend_of", "backends", "device", "explain"),
                    "unarray.introspection"),
    **dict.fromkeys(("apply_numpy", "at"), "unarray.generic"),
    "scaled_dot_product_attention": "unarray.nn",
    "fft": "unarray.fft", "linalg": "unarray.linalg", "nn": "unarray.nn",
}

__dir__ = _partial(_public_dir, __all__, "__array_api_version__", "__array_namespace_info__", "__version__")


def __array_namespace_info__() -> _Info:
    """The inspection API of the default backend and device (``ua.use``), NumPy when nothing is set."""
    from unarray.introspection import array_namespace_info

    return array_namespace_info()


# tf.function runs unarray's functions as written (_dispatch.run_as_written); a module of _LAZY marks its own.
_run_as_written(_sys.modules[__name__])

# A library imported already has its array types registered now: a first lookup inside a user's trace would change
# the registry the trace guards on, compiling the function twice (tests/jit/test_compile_once.py).
_lookup.register_imported()


def _load(name: str) -> object:
    # Import the module of a lazy public name and bind all its public names here (later reads are plain lookups).
    module = _importlib.import_module(_LAZY[name])
    here = globals()
    for n, m in _LAZY.items():
        if m == module.__name__:
            here[n] = module if n in ("fft", "linalg", "nn") else getattr(module, n)
    _run_as_written(_sys.modules[__name__])  # (the names just bound)
    return here[name]


if not TYPE_CHECKING:  # a type checker reads no __getattr__, so ua.<typo> stays an error there

    def __getattr__(name: str) -> object:
        if name in _LAZY:
            return _load(name)
        # A name the namespace lacks: the standard's function for NumPy's or torch's name, else the closest names.
        from unarray._names import error

        raise error(name)

del TYPE_CHECKING
