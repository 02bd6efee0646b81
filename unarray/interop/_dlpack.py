"""``ua.from_dlpack``: an array of a backend from any DLPack producer.

Arrays of a library unarray knows take ``ua.to``'s route (the fastest pair path, the cache, the copy
counters); another library's producer enters through a zero-copy view in a library that does."""

from __future__ import annotations

import sys
from typing import Any

from unarray._backends import NAMES, handoff
from unarray._backends._handoff import STATS, NeedsCopy, lock
from unarray._errors import HandoffError, UnarrayError, UnknownArrayTypeError
from unarray._lookup import backend_named, default_backend, one
from unarray._typing import Array, DeviceLike
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
    out = _foreign_adopted(x, b.name) if copy is not True else None
    if out is None:
        try:
            native = None if device is None else b.native_device(device)
        except UnarrayError as e:
            raise with_op(e, "from_dlpack") from None
        out = b.from_dlpack(x, device=native, copy=copy)
        device = None
    with lock:
        STATS["copies" if copy else "zero_copy"] += 1
    return out if device is None else to(out, b.name, device=device, _op="from_dlpack")


from_dlpack.__module__ = "unarray.interop"  # its public home (help(), doctest, the docs)

_HOST = frozenset({1, 3})  # DLPack CPU and CUDA pinned host memory


def _foreign_view(x: Any, copy: bool | None) -> Any:
    # Note: another library's producer enters through a zero-copy array of a loaded library that imports it, so
    # that ua.to's route applies its guards (alignment, read-only copies, the counters). None: no such import.
    try:
        dev = int(x.__dlpack_device__()[0])
    except Exception as e:
        raise HandoffError(f"this DLPack producer's __dlpack_device__() failed ({type(e).__name__}: {e})",
                           op="from_dlpack") from None
    for name in NAMES:
        lib = sys.modules.get(name)
        if lib is None or not (handoff(name).imports_host if dev in _HOST else handoff(name).imports_device):
            continue
        try:
            return lib.from_dlpack(x)
        except (BufferError, TypeError, ValueError, RuntimeError):
            continue
    return None


def _foreign_adopted(x: Any, dst: str) -> Any:
    # A producer no known library imports: the target's own import where it declares one (None: its
    # from_dlpack); a buffer it cannot alias has no library here to copy it.
    try:
        return handoff(dst).adopt_foreign(x)
    except NeedsCopy as e:
        copiers = ", ".join(n for n in NAMES if handoff(n).imports_host or handoff(n).imports_device)
        raise HandoffError(f"{dst} cannot alias this buffer ({e}) and no library here can copy it; pass an "
                           f"aligned buffer, or import it with one of {copiers} first", op="from_dlpack",
                           backend=dst) from None
