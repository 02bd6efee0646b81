"""The error hierarchy.

Every error unarray raises is a :class:`UnarrayError` and also the builtin
exception a caller would catch for the same mistake (``TypeError``,
``ValueError``, ``BufferError``, ``NotImplementedError``), so existing
``except`` clauses keep working. Messages name the op, the backend, what was
received, and how to fix it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

__all__ = [
    "ArgumentError",
    "ArgumentTypeError",
    "ArraySizeError",
    "AxisError",
    "BackendNotAvailableError",
    "CompileError",
    "DeviceMismatchError",
    "DeviceNotAvailableError",
    "DTypeError",
    "EmptyReductionError",
    "HandoffError",
    "ShapeError",
    "TracerHandoffError",
    "UnarrayError",
    "UnknownArrayTypeError",
    "UnknownNameError",
    "UnsupportedError",
]


_E = TypeVar("_E", bound=BaseException)


class _Named(type):
    # Note: tf.function's AutoGraph re-raises an error as ``type(e)(message)`` only where its __init__ is
    # Exception's (else as StagingError): UnarrayError keeps Exception's __init__ and its keywords are taken
    # here, so an error raised inside tf.function stays the same typed error as eagerly.
    def __call__(cls: type[_E], message: str = "", *, op: str | None = None,  # type: ignore[misc]
                 backend: str | None = None) -> _E:
        where = "" if backend is None else f" [{backend}]"
        self = type.__call__(cls, (f"ua.{op}{where}: " if op is not None else "") + message)
        self.op = op
        self.backend = backend
        return cast(_E, self)


class UnarrayError(Exception, metaclass=_Named):
    """Base class of every error raised by unarray.

    Attributes:
        op: the ``ua`` function that failed (``"matmul"``), or ``None``.
        backend: the backend that was asked (``"torch"``), or ``None``.
    """

    if TYPE_CHECKING:  # the constructor as _Named.__call__ takes it (Exception.__init__ at runtime: see there)
        def __init__(self, message: str = "", *, op: str | None = None, backend: str | None = None) -> None: ...
    else:
        __init__ = Exception.__init__
    op: str | None = None
    backend: str | None = None


class ArgumentError(UnarrayError, ValueError):
    """An argument has a wrong value (an axis out of range, a bad keyword)."""


class ArgumentTypeError(UnarrayError, TypeError):
    """An argument has a wrong type."""


class AxisError(ArgumentError, IndexError):
    """An ``axis`` is out of range for the array's rank, or repeated (as NumPy's ``AxisError``,
    both a ``ValueError`` and an ``IndexError``)."""


class UnknownArrayTypeError(UnarrayError, TypeError):
    """An argument is not an array of any backend unarray knows."""


class UnknownNameError(UnarrayError, AttributeError):
    """``ua.<name>`` names nothing in the namespace: a NumPy or torch name (``ua.concatenate``), whose
    message names the standard's function to use (``ua.concat``), or a misspelling, with the closest
    names. ``op`` is the name asked for."""


class BackendNotAvailableError(UnarrayError, ImportError):
    """A backend was named that is not installed or cannot run here."""


class DTypeError(UnarrayError, TypeError):
    """A dtype is not allowed for the op, or not available on the backend."""


class ShapeError(UnarrayError, ValueError):
    """Shapes do not fit the op (for example ``matmul`` inner dimensions)."""


class ArraySizeError(ShapeError, MemoryError):
    """An array would hold more bytes than a 64-bit byte offset reaches (2**63 - 1): refused before any
    backend is asked, on every backend (also a ``MemoryError``)."""


class EmptyReductionError(UnarrayError, ValueError):
    """A reduction with no identity (``min``, ``max``, ``argmin``...) over zero elements."""


class DeviceMismatchError(UnarrayError, ValueError):
    """Arrays of one call live on different devices."""


class DeviceNotAvailableError(UnarrayError, ValueError):
    """A device was asked for that the library cannot reach here (``device="cuda"`` on a CPU-only
    build, a TPU that is absent); the message lists the devices that are available."""


class HandoffError(UnarrayError, BufferError):
    """Data cannot move between libraries as asked (for example ``copy=False`` but a copy is needed)."""


class ReadOnlyViolationError(HandoffError):
    """Memory handed over under ``ua.to(..., readonly=True)`` was written to: the promise was broken
    (raised where the read-only check is on: ``UNARRAY_CHECK_READONLY=1`` or ``ua.checking_readonly()``)."""


class TracerHandoffError(HandoffError, TypeError):
    """A traced value (``jax.jit``, ``tf.function``) cannot leave its framework."""


class UnsupportedError(UnarrayError, NotImplementedError):
    """The backend has no implementation of this op (an explicit, listed hole)."""


class CompileError(UnarrayError, RuntimeError):
    """A compiler (``jax.jit``, ``torch.compile``, ``tf.function``) could not compile a ``ua.jit`` function
    called with ``fullgraph=True``; ``__cause__`` is the compiler's own error."""
