# The array-API namespace over TensorFlow, written here because TensorFlow has
# none (tf.experimental.numpy follows NumPy's value-based, float64-happy
# promotion). Functions take tf.Tensor or tf.Variable and return tf.Tensor.
# Every correction of TensorFlow's own behaviour carries a one-line reason.
# This module: the dtypes, conversion and promotion, and the data type functions.
from __future__ import annotations

import builtins
import math
import typing
from typing import Any

import numpy as np
import tensorflow as tf

from unarray._backends import _promote, _xp_shared
from unarray._dtypes import DTYPE_NAMES
from unarray._errors import DTypeError

__array_api_version__ = "2025.12"

SCALARS = _promote.SCALARS
DT = {n: tf.as_dtype(n) for n in DTYPE_NAMES}
bool = DT["bool"]  # noqa: A001 - the standard's names
int8, int16, int32, int64 = DT["int8"], DT["int16"], DT["int32"], DT["int64"]
uint8, uint16, uint32, uint64 = DT["uint8"], DT["uint16"], DT["uint32"], DT["uint64"]
float16, bfloat16, float32, float64 = DT["float16"], DT["bfloat16"], DT["float32"], DT["float64"]
complex64, complex128 = DT["complex64"], DT["complex128"]
e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None

DEFAULT_FLOAT = float32
DEFAULT_INT = int64
UNSIGNED = frozenset({uint8, uint16, uint32, uint64})
FLOATS = frozenset({float16, bfloat16, float32, float64})
COMPLEX = frozenset({complex64, complex128})
COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}
_REAL_OF = {complex64: float32, complex128: float64}
SIGNED_OF = {uint8: int8, uint16: int16, uint32: int32, uint64: int64, float16: int16, bfloat16: int16,
              float32: int32, float64: int64}
bool_ = tf.bool


# -- conversion and promotion -------------------------------------------------------------
def t(x: Any) -> Any:
    return x if isinstance(x, tf.Tensor) else tf.convert_to_tensor(x)


def const(v: Any, dtype: Any = None) -> Any:
    # Note: TF caches scalar constants by value, and -0.0 == 0.0: once tf.constant(-0.0) exists, tf.constant(0.0)
    # returns it (and the reverse). A zero goes through NumPy, which the cache does not see.
    if type(v) in (float, complex) and v == 0:
        return tf.constant(np.asarray(v, (dtype or (float32 if type(v) is float else complex64)).as_numpy_dtype))
    return tf.constant(v, dtype)


def cast(x: Any, d: Any) -> Any:
    return x if x.dtype == d else tf.cast(x, d)


# Note: tf.cast of a complex tensor to bool reads the real part only (-0.5j is False); the standard: nonzero.
def truth(x: Any) -> Any:
    return tf.not_equal(x, tf.zeros((), x.dtype)) if x.dtype in COMPLEX else cast(x, bool_)


def _scalar_dtype(v: Any, d: Any) -> Any:
    return _promote.scalar_dtype(v, d, default_int=DEFAULT_INT, default_float=DEFAULT_FLOAT, bool_=bool,
                                 floats=FLOATS, complexes=COMPLEX, complex_of=lambda r: COMPLEX_OF.get(r, complex64))


def _name_of(x: Any) -> str:
    return typing.cast(str, (x.dtype if hasattr(x, "dtype") else tf.as_dtype(x)).name)


_PROMOTION = _promote.Promotion(t, cast, const, _scalar_dtype, _name_of, DT.__getitem__)
promote = _PROMOTION.promote
result_type, isdtype, can_cast = _xp_shared.dtype_functions(__name__, _PROMOTION)


def widened(fn: Any, *xs: Any) -> Any:
    # TensorFlow has no kernel for this dtype: compute in int64 (same bits mod 2**64) and cast back.
    d = xs[0].dtype
    w = [tf.bitcast(x, int64) if d == uint64 else tf.cast(x, int64) for x in xs]
    r = fn(*w)
    if r.dtype != int64:
        return r
    return tf.bitcast(r, uint64) if d == uint64 else tf.cast(r, d)


def arith(fn: Any, *xs: Any, bad: frozenset[Any] = frozenset()) -> Any:
    d = xs[0].dtype
    if d in bad or d == bool:
        return widened(fn, *[cast(x, int8) if d == bool else x for x in xs])
    return fn(*xs)


# -- data types ---------------------------------------------------------------------------
def astype(x: Any, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Any:
    x = t(x)
    if device is not None:
        with tf.device(device):
            return tf.identity(tf.cast(x, dtype))
    if x.dtype == dtype:
        return tf.identity(x) if copy else x
    if dtype == bool_:
        return truth(x)
    _promote.refuse_complex_to_real(x.dtype in COMPLEX, dtype in COMPLEX)
    return tf.cast(x, dtype)


def finfo(type: Any, /) -> Any:  # noqa: A002
    d = type.dtype if hasattr(type, "dtype") else tf.as_dtype(type)
    d = _REAL_OF.get(d, d)
    if d not in FLOATS:
        raise DTypeError(f"finfo needs a floating dtype, got {d.name}")
    return _promote.Info(d, tf.experimental.numpy.finfo(d.as_numpy_dtype), True, d.name)


def iinfo(type: Any, /) -> Any:  # noqa: A002
    d = type.dtype if hasattr(type, "dtype") else tf.as_dtype(type)
    if not d.is_integer:
        raise DTypeError(f"iinfo needs an integer dtype, got {d.name}")
    return _promote.Info(d, np.iinfo(d.as_numpy_dtype), False, d.name)
