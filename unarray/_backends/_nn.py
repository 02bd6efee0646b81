"""The building blocks around attention (``ua.softmax`` ... ``ua.silu``): one definition in the array
API (``b.xp``), which is each function's semantics, and the kernels of torch, JAX and TensorFlow where
they compute the same thing (checked against a float64 reference in tests/test_nn.py). CuPy has no
fused kernels for these: it runs the array-API definition.

Semantics (the formulas below, in IEEE arithmetic, as torch and JAX compute them):

- ``softmax``: ``exp(x - m) / sum(exp(x - m))`` with ``m`` the slice's maximum, so a slice holding a
  NaN or ``+inf``, or only ``-inf``, is NaN throughout; ``-inf`` elsewhere gives 0.
- ``log_softmax``: ``(x - m) - log(sum(exp(x - m)))``, NaN in the same slices.
- ``logsumexp``: ``m + log(sum(exp(x - m)))`` with a non-finite ``m`` taken as 0: ``-inf`` for a
  slice of ``-inf`` (or an empty one), ``+inf`` where a ``+inf`` is present, NaN where a NaN is.
- ``layer_norm``: ``(x - mean) / sqrt(var + eps) * weight + bias`` over ``axis`` (biased variance).
- ``rms_norm``: ``x / sqrt(mean(x**2) + eps) * weight``; ``eps=None`` is the dtype's ``finfo.eps``.
- ``gelu``: ``x * (1 + erf(x / sqrt(2))) / 2``, or with ``approximate=True`` the tanh form
  ``x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3))) / 2``. ``silu``: ``x * sigmoid(x)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def softmax(b: Any, x: Any, axis: int) -> Any:
    return _normalized(b, x, axis, "softmax")


def log_softmax(b: Any, x: Any, axis: int) -> Any:
    return _normalized(b, x, axis, "log_softmax")


def _normalized(b: Any, x: Any, axis: int, name: str) -> Any:
    # softmax and log_softmax: the libraries' kernels share the name (torch.<name>, jax.nn.<name>,
    # tf.nn.<name>); the array-API form shares the shift by the slice's maximum.
    if b.name == "torch":
        return getattr(b.native, name)(x, axis)
    if b.name == "tensorflow" and name == "softmax":
        # Note: TF 2.21's float32 CPU softmax gives 0 (not NaN) beside a NaN or +inf in the slice (oneDNN's
        # kernel; float64 and log_softmax are right): the slices the semantics make NaN are set after it.
        tf = b.native
        nan = tf.reduce_any(tf.math.is_nan(x) | (x == float("inf")), axis=axis, keepdims=True)
        nan = nan | tf.reduce_all(x == float("-inf"), axis=axis, keepdims=True)
        return tf.where(nan, tf.constant(float("nan"), x.dtype), tf.nn.softmax(x, axis=axis))
    if b.name in ("jax", "tensorflow"):
        return getattr(b.native.nn, name)(x, axis=axis)
    xp = b.xp
    if x.shape[axis] == 0:
        return x
    s = x - xp.max(x, axis=axis, keepdims=True)
    if name == "log_softmax":
        return s - xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))
    e = xp.exp(s)
    return e / xp.sum(e, axis=axis, keepdims=True)


def logsumexp(b: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if b.name == "torch":
        return b.native.logsumexp(x, dim=axes, keepdim=keepdims)
    if b.name == "jax":
        return b.native.scipy.special.logsumexp(x, axis=axes, keepdims=keepdims)
    if b.name == "tensorflow":
        return b.native.reduce_logsumexp(x, axis=list(axes), keepdims=keepdims)
    xp = b.xp
    if any(x.shape[a] == 0 for a in axes):  # no maximum to shift by: the empty sum, log(0) = -inf
        return xp.log(xp.sum(xp.exp(x), axis=axes, keepdims=keepdims))
    m = xp.max(x, axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    out = m + xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True))
    return out if keepdims else xp.squeeze(out, axis=axes)


def _trailing(x: Any, axes: tuple[int, ...]) -> bool:
    return axes == tuple(range(x.ndim - len(axes), x.ndim))


def layer_norm(b: Any, x: Any, axes: tuple[int, ...], weight: Any, bias: Any, eps: float) -> Any:
    if b.name == "torch" and _trailing(x, axes):
        shape = tuple(x.shape[x.ndim - len(axes):])
        if all(w is None or (type(w) is type(x) and tuple(w.shape) == shape) for w in (weight, bias)):
            return b.native.nn.functional.layer_norm(x, shape, weight, bias, eps)
    xp = b.xp
    mean = xp.mean(x, axis=axes, keepdims=True)
    d = x - mean
    out = d / xp.sqrt(xp.mean(d * d, axis=axes, keepdims=True) + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def rms_norm(b: Any, x: Any, axes: tuple[int, ...], weight: Any, eps: float | None) -> Any:
    torch = b.native if b.name == "torch" else None
    if torch is not None and _trailing(x, axes) and hasattr(torch.nn.functional, "rms_norm"):
        shape = tuple(x.shape[x.ndim - len(axes):])
        if weight is None or (type(weight) is type(x) and tuple(weight.shape) == shape):
            return torch.nn.functional.rms_norm(x, shape, weight, eps)
    xp = b.xp
    e = float(xp.finfo(x.dtype).eps) if eps is None else eps
    out = x / xp.sqrt(xp.mean(x * x, axis=axes, keepdims=True) + e)
    return out if weight is None else out * weight


def gelu(b: Any, x: Any, approximate: bool) -> Any:
    if b.name == "torch":
        return b.native.nn.functional.gelu(x, approximate="tanh" if approximate else "none")
    if b.name == "jax":
        return b.native.nn.gelu(x, approximate=approximate)
    # Note: not tf.nn.gelu: in float64 both its forms are off by about 1e-9 (float32 constants).
    xp = b.xp
    if approximate:
        c = math.sqrt(2 / math.pi)
        return x * (1 + xp.tanh(c * (x + 0.044715 * x * x * x))) / 2
    return x * (1 + _erf(b, x / math.sqrt(2))) / 2


def silu(b: Any, x: Any) -> Any:
    if b.name == "torch":
        return b.native.nn.functional.silu(x)
    if b.name == "jax":
        return b.native.nn.silu(x)
    if b.name == "tensorflow":
        return b.native.nn.silu(x)
    xp = b.xp
    return x / (1 + xp.exp(-x))


def _erf(b: Any, x: Any) -> Any:
    # The array API has no erf: each library's own.
    if b.name == "tensorflow":
        return b.native.math.erf(x)
    if b.name == "cupy":
        from cupyx.scipy.special import erf

        return erf(x)
    try:
        from scipy.special import erf as scipy_erf
    except ImportError:  # NumPy without SciPy: math.erf per element (exact, slower)
        return np.vectorize(math.erf, otypes=[x.dtype])(x)
    return scipy_erf(x).astype(x.dtype, copy=False)
