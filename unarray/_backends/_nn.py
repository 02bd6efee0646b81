"""The building blocks around attention (``ua.softmax`` ... ``ua.silu``): one definition in the array
API (the ``*_formula`` functions below, run on ``b.xp``), which is each function's semantics, and the
kernels of torch, JAX and TensorFlow where they compute the same thing (checked against a float64
reference in tests/test_nn.py and tests/test_nn_trust.py). NumPy, dask and CuPy run the formulas.

Each function here returns a :class:`Plan`: the kernel the call enters, named as ``ua.explain`` prints it,
and the call itself. The front end runs the plan; ``ua.explain`` prints the same plan's name, so what is
reported is what was chosen, by the one branch that chose it.

Semantics (the formulas below, in IEEE arithmetic, as torch and JAX compute them):

- ``softmax``: ``exp(x - m) / sum(exp(x - m))`` with ``m`` the slice's maximum, so a slice holding a
  NaN or ``+inf``, or only ``-inf``, is NaN throughout; ``-inf`` elsewhere gives 0.
- ``log_softmax``: ``(x - m) - log(sum(exp(x - m)))``, NaN in the same slices.
- ``logsumexp``: ``m + log(sum(exp(x - m)))`` with a non-finite ``m`` taken as 0: ``-inf`` for a
  slice of ``-inf`` (or an empty one), ``+inf`` where a ``+inf`` is present, NaN where a NaN is.
- ``layer_norm``: ``(x - mean) / sqrt(var + eps) * weight + bias`` over ``axis`` (biased variance).
- ``rms_norm``: ``x / sqrt(mean(x**2) + eps) * weight``; ``eps=None`` is the ``finfo(x.dtype).eps``.
- ``gelu``: ``x * (1 + erf(x / sqrt(2))) / 2``, or with ``approximate=True`` the tanh form
  ``x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3))) / 2``. ``silu``: ``x * sigmoid(x)``.
- ``axis=()`` reduces over no axis: every element is a slice of its own.
- float16 and bfloat16 are computed in float32 (the statistics accumulate there, as torch's kernels do)
  and the result is rounded once to the result dtype; torch's own kernels do this themselves.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

HALF = ("float16", "bfloat16")
# finfo(dtype).eps by name: NumPy's finfo takes no bfloat16 and TensorFlow's dtypes are not NumPy's.
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


class Plan(NamedTuple):
    """What one ``ua.nn`` call runs: ``kernel`` names the function entered (``ua.explain`` prints it)."""

    kernel: str
    run: Callable[[], Any]


# -- the array-API definitions (the semantics; axes == () reduces over nothing) ---------------------------
def _max(xp: Any, v: Any, axes: tuple[int, ...]) -> Any:
    return xp.max(v, axis=axes, keepdims=True) if axes else v


def _sum(xp: Any, v: Any, axes: tuple[int, ...]) -> Any:
    return xp.sum(v, axis=axes, keepdims=True) if axes else v


def _mean(xp: Any, v: Any, axes: tuple[int, ...]) -> Any:
    return xp.mean(v, axis=axes, keepdims=True) if axes else v


def softmax_formula(xp: Any, x: Any, axis: int, log: bool) -> Any:
    if x.shape[axis] == 0:
        return x
    s = x - xp.max(x, axis=axis, keepdims=True)
    if log:
        return s - xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))
    e = xp.exp(s)
    return e / xp.sum(e, axis=axis, keepdims=True)


def logsumexp_formula(xp: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if any(x.shape[a] == 0 for a in axes):  # no maximum to shift by: the empty sum, log(0) = -inf
        return xp.log(xp.sum(xp.exp(x), axis=axes, keepdims=keepdims))
    m = _max(xp, x, axes)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    out = m + xp.log(_sum(xp, xp.exp(x - m), axes))
    return out if keepdims or not axes else xp.squeeze(out, axis=axes)


def layer_norm_formula(xp: Any, x: Any, axes: tuple[int, ...], weight: Any, bias: Any, eps: float) -> Any:
    d = x - _mean(xp, x, axes)
    out = d / xp.sqrt(_mean(xp, d * d, axes) + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def rms_norm_formula(xp: Any, x: Any, axes: tuple[int, ...], weight: Any, eps: float) -> Any:
    out = x / xp.sqrt(_mean(xp, x * x, axes) + eps)
    return out if weight is None else out * weight


def gelu_formula(xp: Any, x: Any, approximate: bool, erf: Callable[[Any], Any]) -> Any:
    if approximate:
        c = math.sqrt(2 / math.pi)
        return x * (1 + xp.tanh(c * (x + 0.044715 * x * x * x))) / 2
    return x * (1 + erf(x / math.sqrt(2))) / 2


def silu_formula(xp: Any, x: Any) -> Any:
    return x / (1 + xp.exp(-x))


# -- the plans ---------------------------------------------------------------------------------------
def _native(b: Any, path: str) -> tuple[str, Any]:
    # One dotted path names the kernel and finds it (torch.nn.functional.layer_norm, jax.nn.softmax).
    fn = b.native
    for part in path.split("."):
        fn = getattr(fn, part)
    return f"{b.native.__name__}.{path}", fn


def _own(fn: Any, b: Any) -> str:
    return f"{fn.__module__}.{fn.__qualname__} (array API on {b.name})"


def _dtype(b: Any, name: str, arrays: tuple[Any, ...]) -> Any:
    # The native dtype called ``name``: an operand's where one has it (NumPy's bfloat16 is ml_dtypes').
    for a in arrays:
        if a is not None and hasattr(a, "dtype") and b.dtype_name(a) == name:
            return a.dtype
    return b.xp.float32 if name == "float32" else b.dtype(name)


def _cast(xp: Any, v: Any, dtype: Any) -> Any:
    return v if v is None or not hasattr(v, "dtype") or v.dtype == dtype else xp.astype(v, dtype)


def _widened(b: Any, x: Any, kernel: str, body: Callable[[Any], Any]) -> Plan:
    # Half precision runs the kernel on float32 and rounds once (the kernels named here compute in their
    # input's dtype); other dtypes run as they are.
    name = b.dtype_name(x)
    if name not in HALF:
        return Plan(kernel, lambda: body(x))
    xp, dt = b.xp, x.dtype
    return Plan(f"{kernel} (in float32, rounded to {name})",
                lambda: xp.astype(body(xp.astype(x, xp.float32)), dt))


def softmax(b: Any, x: Any, axis: int) -> Plan:
    return _normalized(b, x, axis, "softmax")


def log_softmax(b: Any, x: Any, axis: int) -> Plan:
    return _normalized(b, x, axis, "log_softmax")


def _normalized(b: Any, x: Any, axis: int, name: str) -> Plan:
    # softmax and log_softmax: the libraries' kernels share the name (torch.<name>, jax.nn.<name>,
    # tf.nn.<name>); the array-API form shares the shift by the slice's maximum.
    if b.name == "torch":  # accumulates float16/bfloat16 in float32 itself
        kernel, fn = _native(b, name)
        return Plan(kernel, lambda: fn(x, axis))
    if b.name == "tensorflow" and name == "softmax":
        # Note: TF 2.21's float32 CPU softmax gives 0 (not NaN) beside a NaN or +inf in the slice (oneDNN's
        # kernel; float64 and log_softmax are right): the slices the semantics make NaN are set after it.
        kernel, fn = _native(b, "nn.softmax")
        return _widened(b, x, f"{kernel} (NaN set in the slices the semantics make NaN)",
                        lambda v: _tf_softmax(b.native, fn, v, axis))
    if b.name in ("jax", "tensorflow"):
        kernel, fn = _native(b, f"nn.{name}")
        return _widened(b, x, kernel, lambda v: fn(v, axis=axis))
    f, xp, log = softmax_formula, b.xp, name == "log_softmax"
    return _widened(b, x, _own(f, b), lambda v: f(xp, v, axis, log))


def _tf_softmax(tf: Any, fn: Any, x: Any, axis: int) -> Any:
    nan = tf.reduce_any(tf.math.is_nan(x) | (x == float("inf")), axis=axis, keepdims=True)
    nan = nan | tf.reduce_all(x == float("-inf"), axis=axis, keepdims=True)
    return tf.where(nan, tf.constant(float("nan"), x.dtype), fn(x, axis=axis))


def logsumexp(b: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Plan:
    if axes:  # the libraries' kernels take axis=() as "all axes" or refuse it: the formula serves ()
        if b.name == "torch":  # sums float16/bfloat16 in float32 itself
            kernel, fn = _native(b, "logsumexp")
            return Plan(kernel, lambda: fn(x, dim=axes, keepdim=keepdims))
        if b.name == "jax":
            kernel, fn = _native(b, "scipy.special.logsumexp")
            return _widened(b, x, kernel, lambda v: fn(v, axis=axes, keepdims=keepdims))
        if b.name == "tensorflow":
            kernel, fn = _native(b, "math.reduce_logsumexp")
            return _widened(b, x, kernel, lambda v: fn(v, axis=list(axes), keepdims=keepdims))
    f, xp = logsumexp_formula, b.xp
    return _widened(b, x, _own(f, b), lambda v: f(xp, v, axes, keepdims))


def _trailing_shape(x: Any, axes: tuple[int, ...], *params: Any) -> tuple[int, ...] | None:
    # torch's fused norms take the trailing axes, with weight and bias of exactly their shape.
    if not axes or axes != tuple(range(x.ndim - len(axes), x.ndim)):
        return None
    shape = tuple(x.shape[x.ndim - len(axes):])
    fits = all(p is None or (type(p) is type(x) and tuple(p.shape) == shape) for p in params)
    return shape if fits else None


def _precisions(b: Any, x: Any, out: str, ops: tuple[Any, ...]) -> tuple[Any, Any, str]:
    # The dtype the statistics run in (float32 for half dtypes), the result's, and how explain says so.
    name = "float32" if out in HALF else out
    note = f" (in {name}, rounded to {out})" if name != out else "" if out == b.dtype_name(x) else f" (in {out})"
    return _dtype(b, name, ops), _dtype(b, out, ops), note


def layer_norm(b: Any, x: Any, axes: tuple[int, ...], weight: Any, bias: Any, eps: float, out: str) -> Plan:
    # ``out``: the promoted dtype of x, weight and bias.
    xp, ops = b.xp, (x, weight, bias)
    compute, result, note = _precisions(b, x, out, ops)
    shape = _trailing_shape(x, axes, weight, bias) if b.name == "torch" else None
    if shape is not None:
        kernel, fn = _native(b, "nn.functional.layer_norm")
        # Note: torch's CPU kernel for float16/bfloat16 folds the mean into a float32 bias (x * rstd - mean *
        # rstd), which leaves about 0.08 where a constant row of -1e4 is 0: it runs on float32 there.
        if all(p is None or p.dtype == x.dtype for p in ops) and (out not in HALF or x.device.type != "cpu"):
            return Plan(kernel, lambda: fn(x, shape, weight, bias, eps))
        return Plan(kernel + note, lambda: _cast(xp, fn(
            _cast(xp, x, compute), shape, _cast(xp, weight, compute), _cast(xp, bias, compute), eps), result))
    f = layer_norm_formula
    return Plan(_own(f, b) + note, lambda: _cast(xp, f(
        xp, _cast(xp, x, compute), axes, _cast(xp, weight, compute), _cast(xp, bias, compute), eps), result))


def rms_norm(b: Any, x: Any, axes: tuple[int, ...], weight: Any, eps: float | None, out: str) -> Plan:
    xp, ops = b.xp, (x, weight)
    e = EPS[b.dtype_name(x)] if eps is None else eps
    compute, result, note = _precisions(b, x, out, ops)
    fused = b.name == "torch" and hasattr(b.native.nn.functional, "rms_norm")
    shape = _trailing_shape(x, axes, weight) if fused else None
    if shape is not None:
        kernel, fn = _native(b, "nn.functional.rms_norm")
        if weight is None or weight.dtype == x.dtype:  # torch's kernel accumulates half dtypes in float32
            return Plan(kernel, lambda: fn(x, shape, weight, e))
        return Plan(f"{kernel} (in {out})", lambda: fn(_cast(xp, x, result), shape, _cast(xp, weight, result), e))
    f = rms_norm_formula
    return Plan(_own(f, b) + note, lambda: _cast(xp, f(xp, _cast(xp, x, compute), axes, _cast(xp, weight, compute),
                                                      e), result))


def gelu(b: Any, x: Any, approximate: bool) -> Plan:
    if b.name == "torch":  # computes float16/bfloat16 in float32 itself
        kernel, fn = _native(b, "nn.functional.gelu")
        form = "tanh" if approximate else "none"
        if approximate or x.device.type != "cpu":
            return Plan(kernel, lambda: fn(x, approximate=form))
        # Note: torch's vectorised CPU erf makes the exact form NaN at +inf (the scalar tail and the
        # compiled kernel give +inf): +inf is put back.
        torch = b.native
        return Plan(f"{kernel} (+inf kept where torch's CPU kernel gives NaN)",
                    lambda: torch.where(x == float("inf"), x, fn(x, approximate=form)))
    if b.name == "jax":
        kernel, fn = _native(b, "nn.gelu")
        return _widened(b, x, kernel, lambda v: fn(v, approximate=approximate))
    # Note: not tf.nn.gelu: in float64 both its forms are off by about 1e-9 (float32 constants).
    f, xp, erf = gelu_formula, b.xp, _erf(b)
    return _widened(b, x, _own(f, b), lambda v: f(xp, v, approximate, erf))


def silu(b: Any, x: Any) -> Plan:
    if b.name == "torch":
        kernel, fn = _native(b, "nn.functional.silu")
        return Plan(kernel, lambda: fn(x))
    if b.name in ("jax", "tensorflow"):
        kernel, fn = _native(b, "nn.silu")
        return _widened(b, x, kernel, lambda v: fn(v))
    f, xp = silu_formula, b.xp
    return _widened(b, x, _own(f, b), lambda v: f(xp, v))


def _erf(b: Any) -> Callable[[Any], Any]:
    # The array API has no erf: each library's own (a backend's erf where it defines one).
    own = getattr(type(b), "erf", None)
    if own is not None:
        return lambda v: own(b, v)
    if b.name == "tensorflow":
        tf = b.native
        # Note: tf.math.erf is NaN at +-inf in float64; erf(+-6) is +-1 to float64's precision.
        return lambda v: tf.math.erf(tf.clip_by_value(v, -6.0, 6.0))
    if b.name == "cupy":
        from cupyx.scipy.special import erf

        return erf  # type: ignore[no-any-return]
    try:
        from scipy.special import erf as scipy_erf
    except ImportError:  # NumPy without SciPy: math.erf per element (exact, slower)
        return lambda v: np.vectorize(math.erf, otypes=[v.dtype])(v)
    return lambda v: scipy_erf(v).astype(v.dtype, copy=False)
