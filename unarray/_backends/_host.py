"""Host memory as every library reads it: NumPy's ndarray, the one hard dependency and the host format of the
handoff contract (``_handoff.HOST``). Views that keep their owner alive, data pointers, 64-byte aligned copies
(what importers with alignment needs alias without a second copy), compact layouts read in another axis order.

Each library's handoff reads host buffers through these; none of them imports another library's package for them.
Imports NumPy on first use only."""

from __future__ import annotations

import ctypes
from typing import Any

from unarray._backends._handoff import LazyNumpy

np = LazyNumpy(globals())

__all__ = ["aligned_copy", "is_permutation", "np_ptr", "own_array", "writable_view"]


def own_array(x: Any) -> Any:
    """``x``, or for a NumPy scalar a 0-d array of its own: a scalar's data pointer (``__array_struct__``,
    ``__array_interface__``) is a temporary array's, freed at once, so an alias of it reads other memory."""
    return np.array(x) if isinstance(x, np.generic) else x


def writable_view(x: Any) -> Any:
    """``x`` itself, or where it is read-only a writable alias of the same memory (keeping ``x`` alive),
    for an importer that refuses read-only exports and never writes into an imported buffer."""
    x = own_array(x)
    if x.flags.writeable:
        return x
    # The bytes the view spans (a strided or reversed view reaches beyond its nbytes either side).
    ends = [st * (n - 1) for st, n in zip(x.strides, x.shape, strict=True)] if x.size else []
    low = sum(e for e in ends if e < 0)
    span = max(1, sum(e for e in ends if e > 0) - low + x.itemsize) if x.size else 1
    buf: Any = (ctypes.c_char * span).from_address(x.__array_interface__["data"][0] + low)
    buf._keep = x
    return np.ndarray(x.shape, x.dtype, buffer=buf, offset=-low, strides=x.strides)


class _ArrayStruct(ctypes.Structure):
    # NumPy's PyArrayInterface (the __array_struct__ capsule), up to the data pointer.
    _fields_ = [("two", ctypes.c_int), ("nd", ctypes.c_int), ("typekind", ctypes.c_char), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_int), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("data", ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_read_pointer = ctypes.c_void_p.from_address
_DATA_AT = _ArrayStruct.data.offset


def np_ptr(x: Any) -> int:
    # An ndarray's data pointer through __array_struct__: half the cost of __array_interface__ (a dict).
    return _read_pointer(_capsule_pointer(x.__array_struct__, None) + _DATA_AT).value or 0


def aligned_copy(x: Any) -> Any:
    """A C-contiguous copy on a 64-byte boundary (what importers with alignment needs alias without a
    second copy)."""
    nbytes = x.nbytes
    raw = np.empty(nbytes + 64, np.uint8)
    off = (-raw.__array_interface__["data"][0]) % 64
    out = raw[off:off + nbytes].view(x.dtype).reshape(x.shape)
    np.copyto(out, x)
    return out


def is_permutation(x: Any) -> bool:
    """Whether ``x`` is a compact buffer read in another axis order."""
    order = sorted(range(x.ndim), key=lambda i: x.strides[i], reverse=True)
    expect = x.itemsize
    for i in reversed(order):
        if x.shape[i] != 1 and x.strides[i] != expect:
            return False
        expect *= x.shape[i]
    return True
