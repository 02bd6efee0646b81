# TensorFlow's fused ua.nn kernels (the generic definitions: unarray/_backends/_nn.py): tf.nn's, which compute
# in their input's dtype, so float16 and bfloat16 run on float32 and are rounded once. gelu keeps the generic
# definition: tf.nn.gelu's forms are off by about 1e-9 in float64 (float32 constants).
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from unarray._backends._nn import NNOps, Plan, widened


def softmax(b: Any, x: Any, axis: int) -> Plan:
    # Note: TF 2.21's float32 CPU softmax gives 0 (not NaN) beside a NaN or +inf in the slice (oneDNN's kernel;
    # float64 and log_softmax are right): the slices the semantics make NaN are set after it.
    return widened(b, x, tf.nn.softmax, lambda k, v: _nan_slices(k, v, axis),
                   "(NaN set in the slices the semantics make NaN)")


def _nan_slices(kernel: Any, x: Any, axis: int) -> Any:
    nan = tf.reduce_any(tf.math.is_nan(x) | (x == float("inf")), axis=axis, keepdims=True)
    nan = nan | tf.reduce_all(x == float("-inf"), axis=axis, keepdims=True)
    return tf.where(nan, tf.constant(float("nan"), x.dtype), kernel(x, axis=axis))


def log_softmax(b: Any, x: Any, axis: int) -> Plan:
    return widened(b, x, tf.nn.log_softmax, lambda k, v: k(v, axis=axis))


def logsumexp(b: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Plan:
    if not axes:  # TensorFlow takes axis=() as "all axes": the formula serves ()
        return NNOps.nn_logsumexp(b, x, axes, keepdims)
    return widened(b, x, tf.math.reduce_logsumexp, lambda k, v: k(v, axis=list(axes), keepdims=keepdims))


def silu(b: Any, x: Any) -> Plan:
    return widened(b, x, tf.nn.silu, lambda k, v: k(v))


def erf(b: Any) -> Callable[[Any], Any]:
    # Note: tf.math.erf is NaN at +-inf in float64; erf(+-6) is +-1 to float64's precision.
    return lambda v: tf.math.erf(tf.clip_by_value(v, -6.0, 6.0))
