# JAX's fused ua.nn kernels (the generic definitions: unarray/_backends/_nn.py): jax.nn's, which compute in
# their input's dtype, so float16 and bfloat16 run on float32 and are rounded once. layer_norm and rms_norm
# have no jax.nn kernel: the generic definitions run.
from __future__ import annotations

from typing import Any

import jax
import jax.scipy.special

from unarray._backends._nn import NNOps, Plan, widened


def softmax(b: Any, x: Any, axis: int) -> Plan:
    return widened(b, x, jax.nn.softmax, lambda k, v: k(v, axis=axis))


def log_softmax(b: Any, x: Any, axis: int) -> Plan:
    return widened(b, x, jax.nn.log_softmax, lambda k, v: k(v, axis=axis))


def logsumexp(b: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Plan:
    if not axes:  # JAX takes axis=() as "all axes": the formula serves ()
        return NNOps.nn_logsumexp(b, x, axes, keepdims)
    return widened(b, x, jax.scipy.special.logsumexp, lambda k, v: k(v, axis=axes, keepdims=keepdims))


def gelu(b: Any, x: Any, approximate: bool) -> Plan:
    return widened(b, x, jax.nn.gelu, lambda k, v: k(v, approximate=approximate))


def silu(b: Any, x: Any) -> Plan:
    return widened(b, x, jax.nn.silu, lambda k, v: k(v))
