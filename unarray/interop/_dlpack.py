"""``ua.from_dlpack``: an array of a backend from any DLPack producer.

Arrays of a library unarray knows take ``ua.to``'s route (the fastest pair path, the cache, the copy
counters); another library's producer enters through a zero-copy view in a library that does."""

from __future__ import annotations

import sys
from typing import Any

from unarray._errors import HandoffError, UnarrayError, UnknownArrayTypeError
from unarray._lookup import backend_named, default_backend, one
from unarray._typing import Array, DeviceLike
from unarray.interop._common import STATS, NeedsCopy, lock
from unarray.interop._cpu import capsule_to_tf
from unarray.interop._public import to
from unarray.interop._routes import with_op

__all__ = ["from_dlpack"]


def from_dlpack(x: Any, /, *, backend: Any = None, device: DeviceLike | None = None,
                copy: bool | None = None) -> Array:
    """An array of ``backend`` from any DLPack producer.

    Without ``backend``, an array of a supported library stays with its own
    library (moved to ``device`` and copied as asked, like the standard's
    ``xp.from_dlpack`` of the producer's namespace); another producer goes to
    the default backend (``ua.use``). Arrays of a supported library take the
    same path as :func:`to` (fastest pair path, cache, copy accounting); any
    other object with ``__dlpack__`` goes to the backend's own ``from_dlpack``.

    Parameters
    ----------
    x : object
        an array of a supported library, or any object with ``__dlpack__``
        and ``__dlpack_device__``.
    backend : str or module, optional
        the target library; if omitted, ``x``'s own library where it is an array
        of one, else the default backend (``ua.use``).
    device : device, optional
        the target device; by default ``x``'s own.
    copy : bool, optional
        as in :func:`to`.

    Returns
    -------
    out : array
        An array of ``backend`` (or of the library chosen as above).

    Raises
    ------
    BackendNotAvailableError
        ``backend`` is unknown or not installed.
    HandoffError
        ``copy=False`` but the target cannot alias ``x``.
    DTypeError
        A dtype the target has no counterpart for.
    DeviceNotAvailableError
        ``device`` names a device the target cannot reach here.

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> ua.from_dlpack(np.ones(2), backend="numpy").tolist()
    [1.0, 1.0]
    """
    if backend is None:
        try:
            backend = one(x, "from_dlpack").name  # an array of a known library: its own
        except UnknownArrayTypeError:
            backend = default_backend()[0]
    b = backend_named(backend, "from_dlpack")
    try:
        return to(x, b.name, device=device, copy=copy, _op="from_dlpack")
    except UnknownArrayTypeError:
        if not hasattr(x, "__dlpack__"):
            raise
    mid = _foreign_view(x, copy)
    if mid is not None:
        return to(mid, b.name, device=device, copy=copy, _op="from_dlpack")
    if b.name == "tensorflow" and copy is not True:
        out = _foreign_to_tf(x, copy)
    else:
        out = b.from_dlpack(x, device=None if device is None else _native(b, device), copy=copy)
        device = None
    with lock:
        STATS["copies" if copy else "zero_copy"] += 1
    return out if device is None else to(out, b.name, device=device, _op="from_dlpack")


from_dlpack.__module__ = "unarray.interop"  # its public home (help(), doctest, the docs)

_HOST = frozenset({1, 3})  # DLPack CPU and CUDA pinned host memory


def _foreign_view(x: Any, copy: bool | None) -> Any:
    # Note: another library's DLPack producer enters through an array of a library unarray knows, made
    # zero-copy (NumPy on the host; torch or CuPy, where loaded, on a GPU); ua.to's route then applies its
    # guards: TF's and JAX's alignment, torch's read-only copy, the counters. None: no such import.
    try:
        dev = int(x.__dlpack_device__()[0])
    except Exception as e:
        raise HandoffError(f"this DLPack producer's __dlpack_device__() failed ({type(e).__name__}: {e})",
                           op="from_dlpack") from None
    names = ("numpy",) if dev in _HOST else ("torch", "cupy")
    for name in names:
        lib = sys.modules.get(name)
        if lib is None:
            continue
        try:
            return lib.from_dlpack(x)
        except (BufferError, TypeError, ValueError, RuntimeError):
            continue
    return None


def _foreign_to_tf(x: Any, copy: bool | None) -> Any:
    # A producer no known library imports (a dtype NumPy lacks, a GPU without torch or CuPy): TF takes its
    # capsule where the buffer is aligned; an unaligned one has no library here to copy it.
    try:
        return capsule_to_tf(x.__dlpack__())
    except NeedsCopy as e:
        raise HandoffError(f"tensorflow cannot alias this buffer ({e}) and no library here can copy it; pass an "
                           "aligned buffer, or import it with NumPy, torch or CuPy first", op="from_dlpack",
                           backend="tensorflow") from None


def _native(b: Any, device: Any) -> Any:
    try:
        return b.native_device(device)
    except UnarrayError as e:
        raise with_op(e, "from_dlpack") from None
