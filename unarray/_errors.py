"""The error hierarchy.

Every error unarray raises is a :class:`UnarrayError` and also the builtin
exception a caller would catch for the same mistake (``TypeError``,
``ValueError``, ``BufferError``, ``NotImplementedError``), so existing
``except`` clauses keep working. Messages name the op, the backend, what was
received, and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "ArgumentError",
    "ArgumentTypeError",
    "BackendNotAvailableError",
    "DeviceMismatchError",
    "DeviceNotAvailableError",
    "DTypeError",
    "EmptyReductionError",
    "HandoffError",
    "ShapeError",
    "TracerHandoffError",
    "UnarrayError",
    "UnknownArrayTypeError",
    "UnsupportedError",
]


class UnarrayError(Exception):
    """Base class of every error raised by unarray.

    Attributes:
        op: the ``ua`` function that failed (``"matmul"``), or ``None``.
        backend: the backend that was asked (``"torch"``), or ``None``.
    """

    def __init__(self, message: str, *, op: str | None = None, backend: str | None = None):
        prefix = ""
        if op is not None:
            prefix = f"ua.{op}"
            if backend is not None:
                prefix += f" [{backend}]"
            prefix += ": "
        super().__init__(prefix + message)
        self.op = op
        self.backend = backend


class ArgumentError(UnarrayError, ValueError):
    """An argument has a wrong value (an axis out of range, a bad keyword)."""


class ArgumentTypeError(UnarrayError, TypeError):
    """An argument has a wrong type."""


class UnknownArrayTypeError(UnarrayError, TypeError):
    """An argument is not an array of any backend unarray knows."""


class BackendNotAvailableError(UnarrayError, ImportError):
    """A backend was named that is not installed or cannot run here."""


class DTypeError(UnarrayError, TypeError):
    """A dtype is not allowed for the op, or not available on the backend."""


class ShapeError(UnarrayError, ValueError):
    """Shapes do not fit the op (for example ``matmul`` inner dimensions)."""


class EmptyReductionError(UnarrayError, ValueError):
    """A reduction with no identity (``min``, ``max``, ``argmin``...) over zero elements."""


class DeviceMismatchError(UnarrayError, ValueError):
    """Arrays of one call live on different devices."""


class DeviceNotAvailableError(UnarrayError, ValueError):
    """A device was asked for that the library cannot reach here (``device="cuda"`` on a CPU-only
    build, a TPU that is absent); the message lists the devices that are available."""


class HandoffError(UnarrayError, BufferError):
    """Data cannot move between libraries as asked (for example ``copy=False`` but a copy is needed)."""


class TracerHandoffError(HandoffError, TypeError):
    """A traced value (``jax.jit``, ``tf.function``) cannot leave its framework."""


class UnsupportedError(UnarrayError, NotImplementedError):
    """The backend has no implementation of this op (an explicit, listed hole)."""
