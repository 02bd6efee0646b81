"""The precision policy for matmul-like ops (matmul, tensordot, vecdot, attention).

``"highest"`` (the default) means float32 inputs are multiplied to float32
accuracy on every backend and device. JAX on GPU/TPU and TensorFlow on
Ampere+ GPUs would otherwise use TF32 or bf16 passes silently. The faster
policies are opt-in, per call (``precision=``) or per scope
(``with ua.precision("tf32"):``), and each backend maps them onto its own
switch for the duration of the call only.
"""

from __future__ import annotations

import contextvars
from typing import Literal

__all__ = ["POLICIES", "Policy", "current", "precision", "resolve"]

Policy = Literal["highest", "tf32", "bf16", "fastest"]
POLICIES: tuple[str, ...] = ("highest", "tf32", "bf16", "fastest")

_POLICY: contextvars.ContextVar[str] = contextvars.ContextVar("unarray_precision", default="highest")


def current() -> str:
    return _POLICY.get()


def resolve(per_call: str | None) -> str:
    """The policy in force for one call: the per-call value, else the scope's."""
    if per_call is None:
        return _POLICY.get()
    if per_call not in POLICIES:
        from unarray._errors import ArgumentError

        raise ArgumentError(f"unknown precision policy {per_call!r}; use one of {POLICIES}")
    return per_call


class precision:
    """Set the precision policy for a scope (also works as a plain setter).

    Args:
        policy: ``"highest"`` (float32-accurate, the default), ``"tf32"``
            (TensorFloat-32 tensor-core passes where the device has them),
            ``"bf16"`` (bfloat16 passes) or ``"fastest"`` (the backend's own
            fastest setting).

    Examples:
        >>> import unarray as ua
        >>> with ua.precision("tf32"):
        ...     ua.get_precision()
        'tf32'
        >>> ua.get_precision()
        'highest'
    """

    def __init__(self, policy: Policy):
        self._token = _POLICY.set(resolve(policy))

    def __enter__(self) -> precision:
        return self

    def __exit__(self, *exc: object) -> None:
        _POLICY.reset(self._token)
