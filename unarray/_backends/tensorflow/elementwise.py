# The array-API namespace over TensorFlow, written here because TensorFlow has
# none (tf.experimental.numpy follows NumPy's value-based, float64-happy
# promotion). Functions take tf.Tensor or tf.Variable and return tf.Tensor.
# Every correction of TensorFlow's own behaviour carries a one-line reason.
# Imported only by the package unarray._backends.tensorflow, once TensorFlow is in use.
from __future__ import annotations

import builtins
import math
from collections import namedtuple
from typing import Any, cast

import numpy as np
import tensorflow as tf

from unarray._backends import _special
from unarray._dtypes import DTYPE_NAMES, promote_names
from unarray._errors import ArgumentError, DTypeError

__array_api_version__ = "2025.12"

_SCALARS = (bool, int, float, complex)
DT = {n: tf.as_dtype(n) for n in DTYPE_NAMES}
bool = DT["bool"]  # noqa: A001 - the standard's names
int8, int16, int32, int64 = DT["int8"], DT["int16"], DT["int32"], DT["int64"]
uint8, uint16, uint32, uint64 = DT["uint8"], DT["uint16"], DT["uint32"], DT["uint64"]
float16, bfloat16, float32, float64 = DT["float16"], DT["bfloat16"], DT["float32"], DT["float64"]
complex64, complex128 = DT["complex64"], DT["complex128"]
e, inf, nan, pi, newaxis = math.e, math.inf, math.nan, math.pi, None

DEFAULT_FLOAT = float32
DEFAULT_INT = int64
_UNSIGNED = frozenset({uint8, uint16, uint32, uint64})
_SMALL_INTS = frozenset({int8, int16, uint8, uint16, uint32})
_FLOATS = frozenset({float16, bfloat16, float32, float64})
_COMPLEX = frozenset({complex64, complex128})
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}
_REAL_OF = {complex64: float32, complex128: float64}
_SIGNED_OF = {uint8: int8, uint16: int16, uint32: int32, uint64: int64, float16: int16, bfloat16: int16,
              float32: int32, float64: int64}

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


# -- conversion and promotion -------------------------------------------------------------
def t(x: Any) -> Any:
    return x if isinstance(x, tf.Tensor) else tf.convert_to_tensor(x)


def const(v: Any, dtype: Any = None) -> Any:
    # Note: TF caches scalar constants by value, and -0.0 == 0.0: once tf.constant(-0.0) exists, tf.constant(0.0)
    # returns it (and the reverse). A zero goes through NumPy, which the cache does not see.
    if type(v) in (float, complex) and v == 0:
        return tf.constant(np.asarray(v, (dtype or (float32 if type(v) is float else complex64)).as_numpy_dtype))
    return tf.constant(v, dtype)


def is_float(d: Any) -> builtins.bool:
    return d in _FLOATS


def is_int(d: Any) -> builtins.bool:
    return cast(builtins.bool, d.is_integer)


def _cast(x: Any, d: Any) -> Any:
    return x if x.dtype == d else tf.cast(x, d)


def _scalar_dtype(v: Any, d: Any) -> Any:
    # Note: a Python scalar takes the array's dtype; it widens only the kind (bool -> int -> float -> complex).
    if isinstance(v, builtins.bool) or d in _COMPLEX:
        return d
    if isinstance(v, int):
        return DEFAULT_INT if d == bool else d
    if isinstance(v, float):
        return d if d in _FLOATS else DEFAULT_FLOAT
    return d if d in _COMPLEX else _COMPLEX_OF.get(d, complex64)


def promote(x1: Any, x2: Any) -> tuple[Any, Any]:
    if isinstance(x1, _SCALARS):
        x2 = t(x2)
        d = _scalar_dtype(x1, x2.dtype)
        return const(x1, d), _cast(x2, d)
    x1 = t(x1)
    if isinstance(x2, _SCALARS):
        d = _scalar_dtype(x2, x1.dtype)
        return _cast(x1, d), const(x2, d)
    x2 = t(x2)
    if x1.dtype == x2.dtype:
        return x1, x2
    d = result_type(x1.dtype, x2.dtype)
    return _cast(x1, d), _cast(x2, d)


def result_type(*args: Any) -> Any:
    out: str | None = None
    scalars = []
    for a in args:
        if isinstance(a, _SCALARS):
            scalars.append(a)
            continue
        name = (a.dtype if hasattr(a, "dtype") else tf.as_dtype(a)).name
        if out is None:
            out = name
        else:
            nxt = promote_names(out, name) or _cross_kind(out, name)
            if nxt is None:
                raise DTypeError(f"the standard defines no promotion of {out} with {name}; cast one explicitly")
            out = nxt
    if out is None:
        raise DTypeError("result_type needs at least one array or dtype")
    d = DT[out]
    for s in scalars:
        d = _scalar_dtype(s, d)
    return d


_RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2, "bfloat": 2, "complex": 3}


def _cross_kind(a: str, b: str) -> str | None:
    # Note: mixed kinds are left undefined by the standard; like torch and JAX, the higher kind's dtype wins.
    ka, kb = _RANK[a.rstrip("0123456789")], _RANK[b.rstrip("0123456789")]
    if ka == kb:
        return None
    return a if ka > kb else b


def _widened(fn: Any, *xs: Any) -> Any:
    # TensorFlow has no kernel for this dtype: compute in int64 (same bits mod 2**64) and cast back.
    d = xs[0].dtype
    w = [tf.bitcast(x, int64) if d == uint64 else tf.cast(x, int64) for x in xs]
    r = fn(*w)
    if r.dtype != int64:
        return r
    return tf.bitcast(r, uint64) if d == uint64 else tf.cast(r, d)


def _arith(fn: Any, *xs: Any, bad: frozenset[Any] = frozenset()) -> Any:
    d = xs[0].dtype
    if d in bad or d == bool:
        return _widened(fn, *[_cast(x, int8) if d == bool else x for x in xs])
    return fn(*xs)


# -- element-wise ---------------------------------------------------------------------------
def _unary_float(fn: Any) -> Any:
    def op(x: Any, /) -> Any:
        x = t(x)
        if not (x.dtype in _FLOATS or x.dtype in _COMPLEX):
            # Note: TensorFlow has no float kernels for integers; the standard's result is floating.
            x = tf.cast(x, float64 if x.dtype in (int32, int64, uint32, uint64) else DEFAULT_FLOAT)
        return fn(x)

    op.__name__ = getattr(fn, "__name__", "op")
    return op


acos, acosh, asin = _unary_float(tf.math.acos), _unary_float(tf.math.acosh), _unary_float(tf.math.asin)
asinh, atan, atanh = _unary_float(tf.math.asinh), _unary_float(tf.math.atan), _unary_float(tf.math.atanh)
cos, cosh, exp = _unary_float(tf.math.cos), _unary_float(tf.math.cosh), _unary_float(tf.math.exp)
log = _unary_float(tf.math.log)
sin, sinh = _unary_float(tf.math.sin), _unary_float(tf.math.sinh)
_expm1, _log1p, _sqrt = _unary_float(tf.math.expm1), _unary_float(tf.math.log1p), _unary_float(tf.math.sqrt)


def _xp() -> Any:
    from unarray._backends.tensorflow import XP

    return XP


# Note: TF's complex expm1, log1p and sqrt miss the standard's infinities, signed zeros and the branch cut's
# sign (expm1(inf + 0j), log1p(-1 + 0j), sqrt(inf - 1j)): corrected through _special.
def expm1(x: Any, /) -> Any:
    x = t(x)
    return _special.complex_expm1(_xp(), x, tf.complex) if x.dtype in _COMPLEX else _expm1(x)


def log1p(x: Any, /) -> Any:
    x = t(x)
    return _special.complex_log1p(_xp(), x, tf.complex) if x.dtype in _COMPLEX else _log1p(x)


def sqrt(x: Any, /) -> Any:
    x = t(x)
    r = _sqrt(x)
    return _special.complex_sqrt(_xp(), r, x, tf.complex) if x.dtype in _COMPLEX else r
tan, tanh = _unary_float(tf.math.tan), _unary_float(tf.math.tanh)
log2 = _unary_float(lambda x: tf.math.log(x) / tf.math.log(tf.constant(2, x.dtype)))
log10 = _unary_float(lambda x: tf.math.log(x) / tf.math.log(tf.constant(10, x.dtype)))


def abs(x: Any, /) -> Any:  # noqa: A001
    x = t(x)
    if x.dtype in _UNSIGNED or x.dtype == bool:
        return tf.identity(x)
    return tf.math.abs(x)


def negative(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in _UNSIGNED:
        # Note: no unsigned negation kernel; two's complement wraps the same way.
        return tf.bitwise.invert(x) + tf.constant(1, x.dtype)
    return tf.math.negative(x)


def positive(x: Any, /) -> Any:
    return tf.identity(t(x))


def sign(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in _UNSIGNED:
        return tf.cast(x > 0, x.dtype)
    if x.dtype in _COMPLEX:
        # Note: the standard's complex sign is x/|x| (0 at 0).
        a = tf.cast(tf.math.abs(x), x.dtype)
        return tf.where(tf.equal(a, 0), tf.zeros_like(x), x / tf.where(tf.equal(a, 0), tf.ones_like(a), a))
    return tf.math.sign(x)


def square(x: Any, /) -> Any:
    return _arith(tf.math.square, t(x))


def reciprocal(x: Any, /) -> Any:
    return divide(1.0, x) if not is_float(t(x).dtype) else tf.math.reciprocal(x)


def _rounding(fn: Any) -> Any:
    def op(x: Any, /) -> Any:
        x = t(x)
        if x.dtype.is_integer or x.dtype == bool:
            return tf.identity(x)
        if x.dtype in _COMPLEX:
            return tf.complex(fn(tf.math.real(x)), fn(tf.math.imag(x)))
        return fn(x)

    return op


ceil, floor = _rounding(tf.math.ceil), _rounding(tf.math.floor)
round = _rounding(tf.math.round)  # noqa: A001 - TF rounds half to even, as the standard asks
trunc = _rounding(lambda x: tf.where(x < 0, tf.math.ceil(x), tf.math.floor(x)))


def conj(x: Any, /) -> Any:
    return tf.math.conj(t(x))


def real(x: Any, /) -> Any:
    return tf.math.real(t(x))


def imag(x: Any, /) -> Any:
    x = t(x)
    return tf.math.imag(x) if x.dtype in _COMPLEX else tf.zeros_like(x)


def isnan(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in _COMPLEX:
        return tf.math.is_nan(tf.math.real(x)) | tf.math.is_nan(tf.math.imag(x))
    return tf.math.is_nan(x) if x.dtype in _FLOATS else tf.zeros(tf.shape(x), bool)


def isinf(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in _COMPLEX:
        return tf.math.is_inf(tf.math.real(x)) | tf.math.is_inf(tf.math.imag(x))
    return tf.math.is_inf(x) if x.dtype in _FLOATS else tf.zeros(tf.shape(x), bool)


def isfinite(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in _COMPLEX:
        return tf.math.is_finite(tf.math.real(x)) & tf.math.is_finite(tf.math.imag(x))
    return tf.math.is_finite(x) if x.dtype in _FLOATS else tf.ones(tf.shape(x), bool)


def signbit(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in _FLOATS:
        # Note: TF has no signbit; the sign bit of -0.0 and -NaN is read through a bitcast.
        return tf.bitcast(x, _SIGNED_OF[x.dtype]) < 0
    return x < 0 if not (x.dtype in _UNSIGNED or x.dtype == bool) else tf.zeros(tf.shape(x), bool)


def logical_not(x: Any, /) -> Any:
    return tf.math.logical_not(_cast(t(x), bool))


def bitwise_invert(x: Any, /) -> Any:
    x = t(x)
    return tf.math.logical_not(x) if x.dtype == bool else tf.bitwise.invert(x)


def _binary(fn: Any, bad: frozenset[Any] = frozenset()) -> Any:
    def op(x1: Any, x2: Any, /) -> Any:
        a, b = promote(x1, x2)
        return _arith(fn, a, b, bad=bad)

    return op


add = _binary(tf.math.add)
subtract = _binary(tf.math.subtract)
multiply = _binary(tf.math.multiply)
maximum = _binary(tf.math.maximum)
minimum = _binary(tf.math.minimum)


def _compare(fn: Any) -> Any:
    def op(x1: Any, x2: Any, /) -> Any:
        a, b = promote(x1, x2)
        if a.dtype == bool and fn not in (tf.math.equal, tf.math.not_equal):
            a, b = tf.cast(a, int8), tf.cast(b, int8)
        return fn(a, b)

    return op


equal, not_equal = _compare(tf.math.equal), _compare(tf.math.not_equal)
less, less_equal = _compare(tf.math.less), _compare(tf.math.less_equal)
greater, greater_equal = _compare(tf.math.greater), _compare(tf.math.greater_equal)


def _logical(fn: Any) -> Any:
    def op(x1: Any, x2: Any, /) -> Any:
        a, b = promote(x1, x2)
        return fn(_cast(a, bool), _cast(b, bool))

    return op


logical_and, logical_or = _logical(tf.math.logical_and), _logical(tf.math.logical_or)
logical_xor = _logical(tf.math.logical_xor)


def _bitwise(fn: Any, on_bool: Any) -> Any:
    def op(x1: Any, x2: Any, /) -> Any:
        a, b = promote(x1, x2)
        if a.dtype == bool:
            return on_bool(a, b)
        return fn(a, b)

    return op


bitwise_and = _bitwise(tf.bitwise.bitwise_and, tf.math.logical_and)
bitwise_or = _bitwise(tf.bitwise.bitwise_or, tf.math.logical_or)
bitwise_xor = _bitwise(tf.bitwise.bitwise_xor, tf.math.logical_xor)


def _out_of_range(b: Any, bits: int) -> Any:
    # Note: TF's shifts by a count outside [0, bits) are undefined; unarray (as NumPy) shifts every bit out.
    return (b >= bits) | (b < 0) if b.dtype not in _UNSIGNED else b >= bits


def bitwise_left_shift(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    bits = a.dtype.size * 8
    inside = tf.clip_by_value(b, tf.zeros_like(b), tf.fill(tf.shape(b), tf.constant(bits - 1, b.dtype)))
    return tf.where(_out_of_range(b, bits), tf.zeros_like(a), tf.bitwise.left_shift(a, inside))


def bitwise_right_shift(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    bits = a.dtype.size * 8
    fill = tf.where(a < 0, -tf.ones_like(a), tf.zeros_like(a)) if a.dtype not in _UNSIGNED else tf.zeros_like(a)
    inside = tf.clip_by_value(b, tf.zeros_like(b), tf.fill(tf.shape(b), tf.constant(bits - 1, b.dtype)))
    return tf.where(_out_of_range(b, bits), fill, tf.bitwise.right_shift(a, inside))


def divide(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    if not (a.dtype in _FLOATS or a.dtype in _COMPLEX):
        # Note: true division of integers is floating (float64, as NumPy), never TF's integer kernels.
        a, b = tf.cast(a, float64), tf.cast(b, float64)
    return tf.math.truediv(a, b)


def floor_divide(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    if a.dtype == bool:
        raise DTypeError("floor_divide needs numeric arrays, got bool")
    return tf.math.floordiv(a, b)


def remainder(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    if a.dtype == bool:
        raise DTypeError("remainder needs numeric arrays, got bool")
    r = tf.math.floormod(a, b)
    return _special.remainder_zero_sign(_xp(), r, b) if a.dtype in _FLOATS else r


def pow(x1: Any, x2: Any, /) -> Any:  # noqa: A001
    a, b = promote(x1, x2)
    return _arith(tf.math.pow, a, b, bad=_UNSIGNED)


def atan2(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    if a.dtype not in _FLOATS:
        a, b = tf.cast(a, DEFAULT_FLOAT), tf.cast(b, DEFAULT_FLOAT)
    return tf.math.atan2(a, b)


def copysign(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    return tf.where(signbit(b), -tf.math.abs(a), tf.math.abs(a))


def hypot(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    a, b = tf.math.abs(a), tf.math.abs(b)
    # Note: scaled so that large inputs do not overflow; inf wins over NaN as in C hypot.
    hi, lo = tf.maximum(a, b), tf.minimum(a, b)
    safe = tf.where(tf.equal(hi, 0), tf.ones_like(hi), hi)
    r = lo / safe
    out = tf.where(tf.equal(hi, 0), tf.zeros_like(hi), hi * tf.sqrt(1 + r * r))
    big = tf.fill(tf.shape(out), tf.constant(math.inf, out.dtype))
    return tf.where(tf.math.is_inf(a) | tf.math.is_inf(b), big, out)


def logaddexp(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    m = tf.maximum(a, b)
    out = m + tf.math.log1p(tf.exp(-tf.abs(a - b)))
    # Note: equal infinities give inf - inf = NaN in the formula; the answer is that infinity.
    return tf.where(tf.equal(a, b), a + tf.math.log(tf.constant(2, a.dtype)), out)


def nextafter(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    if a.dtype in (float16, bfloat16):
        # Note: TF's nextafter has float32/64 kernels only; step the bits of the half-width type directly.
        ia = tf.bitcast(a, int16)
        step = tf.where((a < b) == (a >= 0), tf.ones_like(ia), -tf.ones_like(ia))
        zero_step = tf.bitcast(tf.where(b > 0, tf.constant(1, int16), tf.constant(-32767, int16)), a.dtype)
        nxt = tf.bitcast(ia + step, a.dtype)
        nxt = tf.where(tf.equal(a, 0), tf.broadcast_to(zero_step, tf.shape(a)), nxt)
        return tf.where(tf.equal(a, b), b, tf.where(tf.math.is_nan(a) | tf.math.is_nan(b), a + b, nxt))
    return tf.math.nextafter(a, b)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    x = t(x)
    out = x
    if min is not None:
        lo = min if isinstance(min, _SCALARS) else _cast(t(min), x.dtype)
        out = tf.where(less(out, lo), tf.cast(lo, x.dtype), out)
    if max is not None:
        hi = max if isinstance(max, _SCALARS) else _cast(t(max), x.dtype)
        out = tf.where(greater(out, hi), tf.cast(hi, x.dtype), out)
    return tf.identity(out) if out is x else out


# -- data types ---------------------------------------------------------------------------
def astype(x: Any, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Any:
    x = t(x)
    if device is not None:
        with tf.device(device):
            return tf.identity(tf.cast(x, dtype))
    if x.dtype == dtype:
        return tf.identity(x) if copy else x
    if x.dtype in _COMPLEX and dtype not in _COMPLEX:
        raise DTypeError("the standard leaves complex -> real casts undefined; take ua.real or ua.abs first")
    return tf.cast(x, dtype)


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    from unarray._dtypes import isdtype as _isdtype

    return _isdtype(dtype, kind)


def can_cast(from_: Any, to: Any, /) -> builtins.bool:
    d = from_.dtype if hasattr(from_, "dtype") else tf.as_dtype(from_)
    return cast(builtins.bool, promote_names(d.name, tf.as_dtype(to).name) == tf.as_dtype(to).name)


class _Info:
    def __init__(self, dtype: Any, info: Any, floating: builtins.bool):
        self.dtype = dtype
        self.bits = int(info.bits)
        self.max = float(info.max) if floating else int(info.max)
        self.min = float(info.min) if floating else int(info.min)
        if floating:
            self.eps = float(info.eps)
            self.smallest_normal = float(info.smallest_normal)

    def __repr__(self) -> str:
        return f"{'finfo' if hasattr(self, 'eps') else 'iinfo'}({self.dtype.name})"


def finfo(type: Any, /) -> Any:  # noqa: A002
    d = type.dtype if hasattr(type, "dtype") else tf.as_dtype(type)
    d = _REAL_OF.get(d, d)
    if d not in _FLOATS:
        raise DTypeError(f"finfo needs a floating dtype, got {d.name}")
    return _Info(d, tf.experimental.numpy.finfo(d.as_numpy_dtype), True)


def iinfo(type: Any, /) -> Any:  # noqa: A002
    d = type.dtype if hasattr(type, "dtype") else tf.as_dtype(type)
    if not d.is_integer:
        raise DTypeError(f"iinfo needs an integer dtype, got {d.name}")
    return _Info(d, np.iinfo(d.as_numpy_dtype), False)


# -- creation -----------------------------------------------------------------------------
class _Place:
    def __init__(self, device: Any):
        self.ctx = tf.device(device) if device is not None else None

    def __enter__(self) -> None:
        if self.ctx is not None:
            self.ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.ctx is not None:
            self.ctx.__exit__(*exc)


def _shape(shape: Any) -> list[int]:
    return [shape] if isinstance(shape, int) else list(shape)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: builtins.bool | None = None) -> Any:
    if isinstance(obj, (tf.Tensor, tf.Variable)):
        x = t(obj)
        if dtype is not None and x.dtype != dtype:
            if copy is False:
                raise ValueError("asarray: changing the dtype needs a copy, but copy=False")
            x = tf.cast(x, dtype)
        elif copy:
            x = tf.raw_ops.DeepCopy(x=x)
        if device is not None:
            with tf.device(device):
                x = tf.identity(x)
        return x
    if copy is False:
        raise ValueError("TensorFlow cannot alias memory it does not own (copy=False); pass copy=None")
    if dtype is None:
        dtype = _infer_dtype(obj)
    with _Place(device):
        if isinstance(obj, np.ndarray) and dtype is not None and dtype != bfloat16:
            obj = obj.astype(dtype.as_numpy_dtype, copy=False)
        elif isinstance(obj, (list, tuple)) and dtype is not None:
            # Note: tf.constant refuses sequences of mixed Python types ([1, 2j, 3]); NumPy converts them.
            obj = np.asarray(obj, dtype=dtype.as_numpy_dtype)
        return const(obj, dtype)


def _infer_dtype(obj: Any) -> Any:
    # Note: tf.constant makes Python ints int32 and floats float32; the standard's defaults here are int64/float32.
    if isinstance(obj, np.ndarray | np.generic):
        return None
    flat = obj
    while isinstance(flat, (list, tuple)) and flat:
        flat = flat[0]
    if isinstance(obj, (list, tuple)):
        items = np.asarray(obj, dtype=object).ravel().tolist() if obj else []
    else:
        items = [obj]
    if items and builtins.all(isinstance(v, builtins.bool) for v in items):
        return bool
    if builtins.any(isinstance(v, complex) for v in items):
        return complex64
    if builtins.any(isinstance(v, float) for v in items):
        return DEFAULT_FLOAT
    if builtins.any(isinstance(v, int) for v in items):
        return DEFAULT_INT
    if not items:
        return DEFAULT_FLOAT
    return None


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    with _Place(device):
        return tf.zeros(_shape(shape), dtype or DEFAULT_FLOAT)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    with _Place(device):
        return tf.ones(_shape(shape), dtype or DEFAULT_FLOAT)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return zeros(shape, dtype=dtype, device=device)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    if dtype is None:
        dtype = _infer_dtype(fill_value) if isinstance(fill_value, _SCALARS) else t(fill_value).dtype
    with _Place(device):
        return tf.fill(_shape(shape), const(fill_value, dtype))


def _like(x: Any, dtype: Any, device: Any) -> tuple[Any, Any, Any]:
    x = t(x)
    return x, dtype or x.dtype, device if device is not None else (x.device or None)


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    x, d, dev = _like(x, dtype, device)
    with _Place(dev):
        return tf.zeros(tf.shape(x), d)


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    x, d, dev = _like(x, dtype, device)
    with _Place(dev):
        return tf.ones(tf.shape(x), d)


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    return zeros_like(x, dtype=dtype, device=device)


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    x, d, dev = _like(x, dtype, device)
    with _Place(dev):
        return tf.fill(tf.shape(x), const(fill_value, d))


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Any:
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = DEFAULT_FLOAT if builtins.any(isinstance(v, float) for v in (start, stop, step)) else DEFAULT_INT
    n = builtins.max(0, math.ceil((stop - start) / step))
    with _Place(device):
        # Note: start + i*step (as NumPy), not TF's repeated addition, and the standard's ceil length.
        return tf.cast(start + tf.range(n, dtype=float64 if dtype in _FLOATS else int64) * step, dtype)


def _exact(v: Any, dtype: Any) -> Any:
    return tf.cast(v, dtype) if isinstance(v, (tf.Tensor, tf.Variable)) else const(v, dtype)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: builtins.bool = True) -> Any:
    dtype = dtype or (complex64 if builtins.any(isinstance(v, complex) for v in (start, stop)) else DEFAULT_FLOAT)
    with _Place(device):
        if num == 0:
            return tf.zeros([0], dtype)
        div = (num - 1) if endpoint else num
        i = tf.range(num, dtype=float64)
        wide = complex128 if dtype in _COMPLEX else float64
        step = (stop - start) / div if div > 0 else 0
        # Note: tf.cast of a Python float goes through float32; _exact keeps float64 values exact.
        out = _exact(start, wide) + tf.cast(i, wide) * _exact(step, wide)
        if endpoint and num > 1:
            out = tf.concat([out[:-1], tf.reshape(_exact(stop, wide), [1])], 0)
        return tf.cast(out, dtype)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None) -> Any:
    n_cols = n_rows if n_cols is None else n_cols
    with _Place(device):
        r = tf.range(n_rows)[:, None]
        c = tf.range(n_cols)[None, :]
        return tf.cast(tf.equal(c - r, k), dtype or DEFAULT_FLOAT)


def _tri(x: Any, k: int, lower: builtins.bool) -> Any:
    x = t(x)
    m, n = tf.shape(x)[-2], tf.shape(x)[-1]
    d = tf.range(n)[None, :] - tf.range(m)[:, None]
    keep = d <= k if lower else d >= k
    return tf.where(keep, x, tf.zeros_like(x))


def tril(x: Any, /, *, k: int = 0) -> Any:
    return _tri(x, k, True)


def triu(x: Any, /, *, k: int = 0) -> Any:
    return _tri(x, k, False)


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Any]:
    if indexing not in ("xy", "ij"):
        raise ArgumentError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [t(a) for a in arrays]
    if len({a.dtype for a in xs}) > 1:
        d = result_type(*xs)
        xs = [_cast(a, d) for a in xs]
    return list(tf.meshgrid(*xs, indexing=indexing))


def from_dlpack(x: Any, /, *, device: Any = None, copy: builtins.bool | None = None) -> Any:
    cap = x.__dlpack__() if hasattr(x, "__dlpack__") else x
    out = tf.experimental.dlpack.from_dlpack(cap)
    return tf.raw_ops.DeepCopy(x=out) if copy else out


