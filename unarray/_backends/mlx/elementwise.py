# The array-API namespace over MLX: the element-wise functions. MLX's kernels are called after the
# standard's promotion (dtypes.promote); where MLX's answer differs from the standard's, the correction
# carries its reason.
from __future__ import annotations

from typing import Any

import mlx.core as mx

from unarray._backends import _special, _xp_shared
from unarray._backends.mlx.dtypes import (
    FLOATS,
    SCALARS,
    UNSIGNED,
    a,
    bool,
    cast,
    complex64,
    float32,
    int8,
    int16,
    int32,
    int64,
    promote,
    uint8,
    uint16,
    uint32,
    uint64,
)
from unarray._errors import DTypeError

_SIGNED_OF = {uint8: int8, uint16: int16, uint32: int32, uint64: int64, mx.float16: int16, mx.bfloat16: int16,
              float32: int32, mx.float64: int64}


def _unary(fn: Any) -> Any:
    def op(x: Any, /) -> Any:
        return fn(a(x))

    op.__name__ = fn.__name__
    return op


def _binary(fn: Any) -> Any:
    def op(x1: Any, x2: Any, /) -> Any:
        return fn(*promote(x1, x2))

    op.__name__ = fn.__name__
    return op


def _exp64(x: Any) -> Any:
    ax = mx.abs(x)
    e = mx.cosh(ax) + mx.sinh(ax)
    return mx.where(x >= 0, e, 1 / e)


def _sin64(x: Any) -> Any:
    t = mx.tan(x / 2)
    return 2 * t / (1 + t * t)


def _cos64(x: Any) -> Any:
    t = mx.tan(x / 2)
    return (1 - t * t) / (1 + t * t)


def _sin32(x: Any) -> Any:
    # Note: MLX's sin of -0.0 is +0.0; the standard's keeps the zero's sign.
    return mx.where(x == 0, x, mx.sin(x)) if x.dtype in FLOATS else mx.sin(x)


def _f64(fn: Any, exact: Any) -> Any:
    # Note: MLX's float64 exp, sin and cos are float32 approximations (about 1e-7 relative error); float64 takes
    # them from the functions MLX computes to float64 accuracy (cosh + sinh, the tangent half-angle forms).
    def op(x: Any, /) -> Any:
        x = a(x)
        return exact(x) if x.dtype == mx.float64 else fn(x)

    op.__name__ = fn.__name__
    return op


acos, acosh, asin, asinh = _unary(mx.arccos), _unary(mx.arccosh), _unary(mx.arcsin), _unary(mx.arcsinh)
atan, atanh, cos, cosh = _unary(mx.arctan), _unary(mx.arctanh), _f64(mx.cos, _cos64), _unary(mx.cosh)
exp, log, log1p = _f64(mx.exp, _exp64), _unary(mx.log), _unary(mx.log1p)
log2, log10, sin, sinh = _unary(mx.log2), _unary(mx.log10), _f64(_sin32, _sin64), _unary(mx.sinh)
sqrt, tan, tanh, square = _unary(mx.sqrt), _unary(mx.tan), _unary(mx.tanh), _unary(mx.square)
conj, real, isnan, isinf = _unary(mx.conj), _unary(mx.real), _unary(mx.isnan), _unary(mx.isinf)
isfinite, logical_not = _unary(mx.isfinite), _unary(mx.logical_not)
maximum, minimum, logaddexp = _binary(mx.maximum), _binary(mx.minimum), _binary(mx.logaddexp)
equal, not_equal, less = _binary(mx.equal), _binary(mx.not_equal), _binary(mx.less)
less_equal, greater, greater_equal = _binary(mx.less_equal), _binary(mx.greater), _binary(mx.greater_equal)
logical_and, logical_or, logical_xor = _binary(mx.logical_and), _binary(mx.logical_or), _binary(mx.logical_xor)
bitwise_and, bitwise_or, bitwise_xor = _binary(mx.bitwise_and), _binary(mx.bitwise_or), _binary(mx.bitwise_xor)
atan2 = _binary(mx.arctan2)


def expm1(x: Any, /) -> Any:
    x = a(x)
    if x.dtype != complex64:
        return mx.expm1(x)
    # Note: MLX's expm1 has no complex kernel; the standard's, with its special cases, through _special.
    return _special.complex_expm1(mx, x, complex_of)


def complex_of(re: Any, im: Any) -> Any:
    # re + im*1j would turn an infinite part into NaN (0 * inf): the two float32 parts are viewed as one complex64.
    return mx.stack([re.astype(float32), im.astype(float32)], axis=-1).view(complex64)[..., 0]


def abs(x: Any, /) -> Any:  # noqa: A001
    x = a(x)
    return mx.array(x) if x.dtype in UNSIGNED or x.dtype == bool else mx.abs(x)


def negative(x: Any, /) -> Any:
    x = a(x)
    if x.dtype == bool:
        raise DTypeError("negative needs a numeric array, got bool")
    return mx.negative(x)


def positive(x: Any, /) -> Any:
    return mx.array(a(x))


def imag(x: Any, /) -> Any:
    x = a(x)
    return mx.imag(x) if x.dtype == complex64 else mx.zeros_like(x)


def sign(x: Any, /) -> Any:
    x = a(x)
    if x.dtype == complex64:
        # Note: the standard's complex sign is x/|x| (0 at 0).
        m = mx.abs(x)
        return mx.where(m == 0, mx.zeros_like(x), x / mx.where(m == 0, mx.ones_like(m), m))
    if x.dtype in UNSIGNED:
        return (x > 0).astype(x.dtype)
    if x.dtype in FLOATS:
        # Note: mx.sign gives 0 for NaN; the standard's sign of NaN is NaN.
        return mx.where(mx.isnan(x), x, mx.sign(x))
    return mx.sign(x)


def reciprocal(x: Any, /) -> Any:
    x = a(x)
    return mx.reciprocal(x if x.dtype in FLOATS or x.dtype == complex64 else x.astype(float32))


def _rounding(fn: Any) -> Any:
    def op(x: Any, /) -> Any:
        x = a(x)
        if x.dtype not in FLOATS and x.dtype != complex64:
            return mx.array(x)
        if x.dtype == complex64:
            return fn(mx.real(x)) + 1j * fn(mx.imag(x))
        return fn(x)

    op.__name__ = fn.__name__
    return op


ceil, floor, round, trunc = _rounding(mx.ceil), _rounding(mx.floor), _rounding(mx.round), _rounding(mx.trunc)  # noqa: A001


def signbit(x: Any, /) -> Any:
    x = a(x)
    if x.dtype in FLOATS:
        # Note: MLX has no signbit; the sign bit of -0.0 and -NaN is read through a bit view.
        return x.view(_SIGNED_OF[x.dtype]) < 0
    return x < 0 if not (x.dtype in UNSIGNED or x.dtype == bool) else mx.zeros(x.shape, bool)


def bitwise_invert(x: Any, /) -> Any:
    x = a(x)
    return mx.logical_not(x) if x.dtype == bool else mx.bitwise_invert(x)


add = _xp_shared.bool_arith(promote, bool, mx.add, mx.logical_or, home=__name__)
subtract = _xp_shared.bool_arith(promote, bool, mx.subtract, None, home=__name__)
multiply = _xp_shared.bool_arith(promote, bool, mx.multiply, mx.logical_and, home=__name__)


def _shift(fn: Any, right: Any) -> Any:
    # Note: a shift by a count outside [0, bits) is undefined in MLX's kernels; unarray (as NumPy) shifts every
    # bit out (the sign bit fills a right shift of a negative number).
    def op(x1: Any, x2: Any, /) -> Any:
        p, q = promote(x1, x2)
        bits = p.dtype.size * 8
        out_of_range = (q >= bits) | (q < 0) if q.dtype not in UNSIGNED else q >= bits
        fill = mx.where(p < 0, -1, 0).astype(p.dtype) if right and p.dtype not in UNSIGNED else mx.zeros_like(p)
        return mx.where(out_of_range, fill, fn(p, mx.clip(q, 0, bits - 1).astype(q.dtype)))

    return op


bitwise_left_shift = _shift(mx.left_shift, False)
bitwise_right_shift = _shift(mx.right_shift, True)


def divide(x1: Any, x2: Any, /) -> Any:
    p, q = promote(x1, x2)
    if p.dtype not in FLOATS and p.dtype != complex64:
        p, q = p.astype(float32), q.astype(float32)  # Note: true division of integers gives the default float
    return mx.divide(p, q)


def _numeric(op: str, x1: Any, x2: Any) -> tuple[Any, Any]:
    p, q = promote(x1, x2)
    if p.dtype == bool:
        raise DTypeError(f"{op} needs numeric arrays, got bool")
    return p, q


def floor_divide(x1: Any, x2: Any, /) -> Any:
    p, q = _numeric("floor_divide", x1, x2)
    return mx.floor_divide(p, q)


def remainder(x1: Any, x2: Any, /) -> Any:
    p, q = _numeric("remainder", x1, x2)
    r = mx.remainder(p, q)
    if p.dtype in FLOATS:
        # Note: a zero remainder takes the divisor's sign (as NumPy's and C's fmod-based rule).
        r = mx.where(r == 0, mx.where(signbit(q), -mx.zeros_like(r), mx.zeros_like(r)), r)
    return r


def pow(x1: Any, x2: Any, /) -> Any:  # noqa: A001
    p, q = _numeric("pow", x1, x2)
    return mx.power(p, q)


def copysign(x1: Any, x2: Any, /) -> Any:
    p, q = promote(x1, x2)
    return mx.where(signbit(q), -mx.abs(p), mx.abs(p))


def hypot(x1: Any, x2: Any, /) -> Any:
    return _special.hypot(mx, *promote(x1, x2))  # (MLX has none)


def nextafter(x1: Any, x2: Any, /) -> Any:
    p, q = promote(x1, x2)
    if p.dtype not in FLOATS:
        raise DTypeError("nextafter needs floating arrays")
    # Note: MLX has no nextafter; the next representable value is one step of the bits, away from or towards 0.
    si = _SIGNED_OF[p.dtype]
    bits = p.view(si)
    step = mx.where((p < q) == (p >= 0), 1, -1).astype(si)
    nxt = (bits + step).view(p.dtype)
    tiny = mx.array(1, si).view(p.dtype)
    nxt = mx.where(p == 0, mx.where(q > 0, tiny, -tiny), nxt)
    return mx.where(p == q, q, mx.where(mx.isnan(p) | mx.isnan(q), p + q, nxt))


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    x = a(x)
    out = x
    # Note: a NaN bound makes the result NaN (the standard); a comparison with it alone is False everywhere.
    floating = x.dtype in FLOATS
    for bound, beyond in ((min, less), (max, greater)):
        if bound is not None:
            b = bound if isinstance(bound, SCALARS) else cast(a(bound), x.dtype)
            pick = beyond(out, b) | mx.isnan(mx.array(b)) if floating else beyond(out, b)
            out = mx.where(pick, b, out).astype(x.dtype)
    return mx.array(out) if out is x else out
