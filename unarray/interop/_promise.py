"""The read-only promise of ``ua.to(..., readonly=True)``, checked in debug mode.

With the check on (``UNARRAY_CHECK_READONLY=1`` in the environment, or inside
``ua.checking_readonly()``), each promised handoff records a checksum of the source's memory; the next
promised handoff of the same source, ``ua.verify_readonly()`` and the end of ``checking_readonly`` compare
it again, and raise :class:`ReadOnlyViolationError` where the memory changed. Off (the default), a promise
costs nothing beyond its route: no checksum, no record."""

from __future__ import annotations

import os
import weakref
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from unarray._backends import handoff
from unarray._backends._handoff import LazyNumpy, lock
from unarray._errors import ReadOnlyViolationError

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyNumpy(globals())

__all__ = ["checking_readonly", "verify_readonly"]

# [on]: whether promised handoffs are checked (process-wide: a promise made in one thread may be broken in
# another). _public registers the checked route functions while it is on.
CHECKING = [os.environ.get("UNARRAY_CHECK_READONLY", "").strip().lower() not in ("", "0", "false", "no", "off")]
# id(source) -> (weakref to the source, its library, the target, checksum)
_RECORDS: dict[int, tuple[Any, str, str, int]] = {}
# Called when CHECKING changes (_public drops the promise routes it registered, to register them anew).
ON_SWITCH: list[Callable[[], None]] = []


def _checksum(src: str, x: Any) -> int:
    # The source's memory as NumPy reads it (zero-copy on the CPU; a GPU array is read back to the host).
    a: Any = np.ascontiguousarray(handoff(src).host(x)).reshape(-1).view(np.uint8)  # (the stubs: no Buffer)
    return zlib.crc32(a) if a.size else 0


def record(x: Any, src: str, dst: str, op: str) -> None:
    """Verify ``x``'s last promise (if any), then record this one."""
    entry = _RECORDS.get(id(x))
    if entry is not None and entry[0]() is x:
        _verify(x, entry, op)
    try:
        ref = weakref.ref(x)
    except TypeError:  # no weak references (a NumPy scalar: immutable anyway)
        return
    with lock:
        _RECORDS[id(x)] = (ref, src, dst, _checksum(src, x))


def _verify(x: Any, entry: tuple[Any, str, str, int], op: str) -> None:
    _, src, dst, want = entry
    if _checksum(src, x) != want:
        _RECORDS.pop(id(x), None)
        raise ReadOnlyViolationError(
            f"this {src} array was handed to {dst} with readonly=True, and its memory has changed since: something "
            f"wrote through the {dst} alias (or through another alias of the same memory); leave readonly out "
            "where the result is written to (the handoff then copies), or copy before writing "
            "(x.clone(), x.copy())", op=op, backend=dst)


def verify_readonly() -> int:
    """Check every live promise of ``ua.to(..., readonly=True)`` made while the read-only check was on.

    Returns
    -------
    out : int
        The number of sources checked (whose memory is unchanged).

    Raises
    ------
    ReadOnlyViolationError
        The memory of a source handed over with ``readonly=True`` changed after the handoff (its record is
        dropped, so the next call reports the others).

    Examples
    --------
    >>> import unarray as ua
    >>> ua.verify_readonly()
    0
    """
    with lock:
        entries = list(_RECORDS.items())
    n = 0
    for key, entry in entries:
        x = entry[0]()
        if x is None:
            _RECORDS.pop(key, None)
            continue
        _verify(x, entry, "verify_readonly")
        n += 1
    return n


@contextmanager
def checking_readonly() -> Iterator[None]:
    """Check the ``readonly=True`` promises of ``ua.to`` made inside the block (a debug mode).

    Each promised handoff inside records a checksum of the source's memory; the next promised handoff of
    the same source and the end of the block verify it, raising :class:`ReadOnlyViolationError` where the
    memory changed (a write through the zero-copy alias). The check is process-wide while the block runs,
    and on for the whole process with ``UNARRAY_CHECK_READONLY=1``. It costs a checksum of the array per
    promised handoff (cache hits included): for debugging, not for production.

    Returns
    -------
    out : context manager
        Turns the check on for the ``with`` block; yields nothing.

    Raises
    ------
    ReadOnlyViolationError
        At the end of the block, or at a promised handoff inside it: promised memory was written to.

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> with ua.checking_readonly():
    ...     y = ua.to(np.ones(3), "numpy", readonly=True)
    """
    before = CHECKING[0]
    _switch(True)
    try:
        yield
        verify_readonly()
    finally:
        _switch(before)
        if not before:
            with lock:
                _RECORDS.clear()


def _switch(on: bool) -> None:
    if CHECKING[0] != on:
        CHECKING[0] = on
        for f in ON_SWITCH:
            f()


# Their public home (help(), doctest, the docs).
verify_readonly.__module__ = checking_readonly.__module__ = "unarray.interop"
