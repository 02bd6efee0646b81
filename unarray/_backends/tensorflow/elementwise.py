# The array-API namespace over TensorFlow: the element-wise functions, with the
# standard's semantics where TensorFlow's differ (each with its reason).
from __future__ import annotations

import sys
from typing import Any

import tensorflow as tf

from unarray._backends import _special, _xp_shared
from unarray._backends.tensorflow.dtypes import (
    COMPLEX,
    DEFAULT_FLOAT,
    FLOATS,
    SCALARS,
    SIGNED_OF,
    UNSIGNED,
    arith,
    bfloat16,
    bool,
    cast,
    float16,
    float64,
    int8,
    int16,
    int32,
    int64,
    promote,
    t,
    truth,
    uint32,
    uint64,
)
from unarray._errors import DTypeError


def _unary_float(fn: Any) -> Any:
    def op(x: Any, /) -> Any:
        x = t(x)
        if not (x.dtype in FLOATS or x.dtype in COMPLEX):
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
    # The assembled namespace: xp.py imports this module, so it is read once assembled (loaded by then).
    return sys.modules[f"{__package__}.xp"].XP


# Note: TF's complex expm1, log1p and sqrt miss the standard's infinities, signed zeros and the branch cut's
# sign (expm1(inf + 0j), log1p(-1 + 0j), sqrt(inf - 1j)): corrected through _special.
def expm1(x: Any, /) -> Any:
    x = t(x)
    return _special.complex_expm1(_xp(), x, tf.complex) if x.dtype in COMPLEX else _expm1(x)


def log1p(x: Any, /) -> Any:
    x = t(x)
    return _special.complex_log1p(_xp(), x, tf.complex) if x.dtype in COMPLEX else _log1p(x)


def sqrt(x: Any, /) -> Any:
    x = t(x)
    r = _sqrt(x)
    return _special.complex_sqrt(_xp(), r, x, tf.complex) if x.dtype in COMPLEX else r
tan, tanh = _unary_float(tf.math.tan), _unary_float(tf.math.tanh)
log2 = _unary_float(lambda x: tf.math.log(x) / tf.math.log(tf.constant(2, x.dtype)))
log10 = _unary_float(lambda x: tf.math.log(x) / tf.math.log(tf.constant(10, x.dtype)))


def abs(x: Any, /) -> Any:  # noqa: A001
    x = t(x)
    if x.dtype in UNSIGNED or x.dtype == bool:
        return tf.identity(x)
    return tf.math.abs(x)


def negative(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in UNSIGNED:
        # Note: no unsigned negation kernel; two's complement wraps the same way.
        return tf.bitwise.invert(x) + tf.constant(1, x.dtype)
    return tf.math.negative(x)


def positive(x: Any, /) -> Any:
    return tf.identity(t(x))


def sign(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in UNSIGNED:
        return tf.cast(x > 0, x.dtype)
    if x.dtype in COMPLEX:
        # Note: the standard's complex sign is x/|x| (0 at 0).
        a = tf.cast(tf.math.abs(x), x.dtype)
        return tf.where(tf.equal(a, 0), tf.zeros_like(x), x / tf.where(tf.equal(a, 0), tf.ones_like(a), a))
    return tf.math.sign(x)


def square(x: Any, /) -> Any:
    return arith(tf.math.square, t(x))


def reciprocal(x: Any, /) -> Any:
    return divide(1.0, x) if t(x).dtype not in FLOATS else tf.math.reciprocal(x)


def _rounding(fn: Any) -> Any:
    def op(x: Any, /) -> Any:
        x = t(x)
        if x.dtype.is_integer or x.dtype == bool:
            return tf.identity(x)
        if x.dtype in COMPLEX:
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
    return tf.math.imag(x) if x.dtype in COMPLEX else tf.zeros_like(x)


def _classify(fn: Any, either: bool) -> Any:
    # A complex number is NaN or infinite where either part is, finite where both are; an integer is finite.
    def op(x: Any, /) -> Any:
        x = t(x)
        if x.dtype in COMPLEX:
            re, im = fn(tf.math.real(x)), fn(tf.math.imag(x))
            return re | im if either else re & im
        return fn(x) if x.dtype in FLOATS else tf.fill(tf.shape(x), not either)

    return op


isnan, isinf = _classify(tf.math.is_nan, True), _classify(tf.math.is_inf, True)
isfinite = _classify(tf.math.is_finite, False)


def signbit(x: Any, /) -> Any:
    x = t(x)
    if x.dtype in FLOATS:
        # Note: TF has no signbit; the sign bit of -0.0 and -NaN is read through a bitcast.
        return tf.bitcast(x, SIGNED_OF[x.dtype]) < 0
    return x < 0 if not (x.dtype in UNSIGNED or x.dtype == bool) else tf.zeros(tf.shape(x), bool)


def logical_not(x: Any, /) -> Any:
    return tf.math.logical_not(truth(t(x)))


def bitwise_invert(x: Any, /) -> Any:
    x = t(x)
    return tf.math.logical_not(x) if x.dtype == bool else tf.bitwise.invert(x)


def _binary(fn: Any, bad: frozenset[Any] = frozenset()) -> Any:
    def op(x1: Any, x2: Any, /) -> Any:
        a, b = promote(x1, x2)
        return arith(fn, a, b, bad=bad)

    return op


def _bool_arith(fn: Any, on_bool: Any) -> Any:
    # Note: TF's bool arithmetic gives int8 (unarray's rule: bool).
    op = _xp_shared.bool_arith(promote, bool, fn, on_bool, arith)
    op.__wrapped__ = fn  # (ua.explain names the kernel it wraps)
    return op


add = _bool_arith(tf.math.add, tf.math.logical_or)
subtract = _bool_arith(tf.math.subtract, None)
multiply = _bool_arith(tf.math.multiply, tf.math.logical_and)
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
        return fn(truth(a), truth(b))

    return op


logical_and, logical_or = _logical(tf.math.logical_and), _logical(tf.math.logical_or)
logical_xor = _logical(tf.math.logical_xor)


bitwise_and = _xp_shared.bool_arith(promote, bool, tf.bitwise.bitwise_and, tf.math.logical_and, home=__name__)
bitwise_or = _xp_shared.bool_arith(promote, bool, tf.bitwise.bitwise_or, tf.math.logical_or, home=__name__)
bitwise_xor = _xp_shared.bool_arith(promote, bool, tf.bitwise.bitwise_xor, tf.math.logical_xor, home=__name__)


def _shift(fn: Any, right: bool) -> Any:
    # Note: TF's shifts by a count outside [0, bits) are undefined; unarray (as NumPy) shifts every bit out (the sign
    # bit fills a right shift of a negative number).
    def op(x1: Any, x2: Any, /) -> Any:
        a, b = promote(x1, x2)
        bits = a.dtype.size * 8
        out_of_range = (b >= bits) | (b < 0) if b.dtype not in UNSIGNED else b >= bits
        fill = tf.where(a < 0, -tf.ones_like(a), tf.zeros_like(a)) if right and a.dtype not in UNSIGNED else \
            tf.zeros_like(a)
        inside = tf.clip_by_value(b, tf.zeros_like(b), tf.fill(tf.shape(b), tf.constant(bits - 1, b.dtype)))
        return tf.where(out_of_range, fill, fn(a, inside))

    return op


bitwise_left_shift, bitwise_right_shift = _shift(tf.bitwise.left_shift, False), _shift(tf.bitwise.right_shift, True)


def divide(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    if not (a.dtype in FLOATS or a.dtype in COMPLEX):
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
    return _special.remainder_zero_sign(_xp(), r, b) if a.dtype in FLOATS else r


def pow(x1: Any, x2: Any, /) -> Any:  # noqa: A001
    a, b = promote(x1, x2)
    return arith(tf.math.pow, a, b, bad=UNSIGNED)


def atan2(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    if a.dtype not in FLOATS:
        a, b = tf.cast(a, DEFAULT_FLOAT), tf.cast(b, DEFAULT_FLOAT)
    return tf.math.atan2(a, b)


def copysign(x1: Any, x2: Any, /) -> Any:
    a, b = promote(x1, x2)
    return tf.where(signbit(b), -tf.math.abs(a), tf.math.abs(a))


def hypot(x1: Any, x2: Any, /) -> Any:
    return _special.hypot(_xp(), *promote(x1, x2))


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
    # Note: a NaN bound makes the result NaN (the standard); a comparison with it alone is False everywhere.
    nan = tf.math.is_nan if x.dtype in FLOATS else None
    for bound, beyond in ((min, less), (max, greater)):
        if bound is not None:
            b = tf.cast(bound if isinstance(bound, SCALARS) else cast(t(bound), x.dtype), x.dtype)
            out = tf.where(beyond(out, b) | nan(b) if nan else beyond(out, b), b, out)
    return tf.identity(out) if out is x else out
