# The standard's special cases that some backends' kernels miss, written once over an array-API namespace
# ``xp`` (each backend passes its own) and applied only where the backend misses them. Every function takes
# the native result (or input) and returns the corrected array; integer inputs never reach them.
from __future__ import annotations

import math
from typing import Any


def remainder_zero_sign(xp: Any, r: Any, x2: Any) -> Any:
    # Note: a zero remainder takes the divisor's sign (-0 % 2 is +0, 0 % -2 is -0); torch, JAX and TF keep x1's.
    zero = xp.zeros_like(r)
    return xp.where(r == 0, xp.copysign(zero, xp.astype(x2, r.dtype) if hasattr(x2, "dtype") else
                                        xp.full_like(r, x2)), r)


def hypot(xp: Any, a: Any, b: Any) -> Any:
    # For a library without one: scaled so that large inputs do not overflow; inf wins over NaN as in C hypot.
    a, b = xp.abs(a), xp.abs(b)
    hi, lo = xp.maximum(a, b), xp.minimum(a, b)
    r = lo / xp.where(hi == 0, xp.ones_like(hi), hi)
    out = xp.where(hi == 0, xp.zeros_like(hi), hi * xp.sqrt(1 + r * r))
    return xp.where(xp.isinf(a) | xp.isinf(b), xp.full_like(out, math.inf), out)


def remainder_inf_divisor(xp: Any, r: Any, x1: Any, x2: Any) -> Any:
    # Note: finite % +-inf is x1 where the signs agree (or x1 is 0), else x2 (the standard; CuPy gives NaN).
    a = xp.astype(x1, r.dtype) if hasattr(x1, "dtype") else xp.full_like(r, x1)
    b = xp.astype(x2, r.dtype) if hasattr(x2, "dtype") else xp.full_like(r, x2)
    same = (xp.signbit(a) == xp.signbit(b)) | (a == 0)
    return xp.where(xp.isinf(b) & xp.isfinite(a), xp.where(same, a, b), r)


def floor_divide_zero_sign(xp: Any, r: Any, x1: Any, x2: Any) -> Any:
    # Note: a zero quotient is negative exactly where the operands' signs differ (-0 // 2 is -0, -2 // -inf is +0).
    one = xp.ones_like(r)
    a = xp.copysign(one, x1 if hasattr(x1, "dtype") else xp.full_like(r, x1))
    b = xp.copysign(one, x2 if hasattr(x2, "dtype") else xp.full_like(r, x2))
    return xp.where(r == 0, xp.copysign(xp.zeros_like(r), a * b), r)


def complex_sqrt(xp: Any, r: Any, z: Any, build: Any) -> Any:
    # Note: the principal root has a real part >= +0 and the imaginary sign of z (-0 included), and
    # sqrt(a + inf j) is inf + inf j even for a NaN; some kernels lose the sign or the infinity.
    b = xp.imag(z)
    re, im = xp.real(r), xp.imag(r)
    re, im = xp.abs(re), xp.copysign(xp.abs(im), b)
    binf = xp.isinf(b)
    re = xp.where(binf, xp.full_like(re, math.inf), re)
    im = xp.where(binf, b, im)
    return build(re, im)


def complex_abs(xp: Any, r: Any, z: Any) -> Any:
    # Note: |z| is +inf when either part is infinite, even when the other is NaN.
    a, b = xp.real(z), xp.imag(z)
    return xp.where(xp.isinf(a) | xp.isinf(b), xp.full_like(r, math.inf), r)


def complex_expm1(xp: Any, z: Any, build: Any) -> Any:
    # exp(a)cis(b) - 1, with the real part as expm1(a)cos(b) - 2sin(b/2)**2 (accurate near 0), and the
    # standard's cases: an imaginary zero stays (expm1(a) + bj), +-0 + +-0j is +0 +-0j (a zero real part's sign
    # is not kept, unlike real expm1(-0)), -inf + (inf|NaN)j is -1 + 0j, +inf + (inf|NaN)j is inf + NaN j.
    a, b = xp.real(z), xp.imag(z)
    s = xp.sin(b / 2)
    re = xp.expm1(a) * xp.cos(b) - 2 * s * s
    im = xp.exp(a) * xp.sin(b)
    bzero = b == 0
    re = xp.where(bzero, xp.where(a == 0, xp.zeros_like(a), xp.expm1(a)), re)
    im = xp.where(bzero, b, im)
    bad_b = ~xp.isfinite(b)
    re = xp.where(bad_b & (a == -math.inf), xp.full_like(re, -1.0), re)
    im = xp.where(bad_b & (a == -math.inf), xp.zeros_like(im), im)
    re = xp.where(bad_b & (a == math.inf), xp.full_like(re, math.inf), re)
    return build(re, im)


def complex_log1p(xp: Any, z: Any, build: Any) -> Any:
    # log|1+z| + arg(1+z) j: near 0 through log1p(2a + a**2 + b**2)/2 (no cancellation), else log(hypot(1+a, b)).
    a, b = xp.real(z), xp.imag(z)
    small = (xp.abs(a) + xp.abs(b)) < 0.5
    sa, sb = xp.where(small, a, xp.zeros_like(a)), xp.where(small, b, xp.zeros_like(b))
    near = xp.log1p(sa * (2 + sa) + sb * sb) / 2
    far = xp.log(xp.hypot(1 + a, b))
    return build(xp.where(small, near, far), xp.atan2(b, 1 + a))
