"""NumPy's side of a handoff: the host format every library reads (views, pointers, aligned copies),
its refusals and its signature for the weak cache. Imports NumPy on first use only."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

from unarray._backends._handoff import Handoff, LazyNumpy, ml_dtype_name
from unarray._errors import DTypeError

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyNumpy(globals())


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


_NP_KINDS = {"O": "Python objects", "S": "bytes", "U": "str", "M": "datetime64", "m": "timedelta64"}


def sig_numpy(x: Any) -> Any:
    # Note: shape, strides and dtype are assignable in place, and __setstate__ (pickle's) replaces the
    # buffer whoever holds a view: all are checked. A NumPy scalar is immutable: its pointer reads 0.
    return (np_ptr(x) if isinstance(x, np.ndarray) else 0, x.shape, x.strides, x.dtype)


class NumpyHandoff(Handoff):
    name = "numpy"
    noun = "NumPy arrays"
    signature = staticmethod(sig_numpy)
    signature_reads = (("data", None), ("shape", False), ("strides", False), ("dtype", False))
    imports_host = True
    lands_on_host = True

    def adopt(self, producer: Any) -> Any:
        return np.from_dlpack(producer)

    def export(self, x: Any) -> Any:
        return own_array(x)  # a scalar has no buffer of its own to export (nor __dlpack__)

    def check_source(self, x: Any, dst: str) -> None:
        dt = x.dtype
        what = _NP_KINDS.get(dt.kind)
        if what is None and dt.kind == "V" and ml_dtype_name(dt) is None:
            what = "a structured record" if dt.fields is not None else "raw bytes (void)"
        if what is not None:
            raise DTypeError(
                f"a NumPy array of dtype {dt} ({what}) has no counterpart in {dst}; convert it to a numeric dtype "
                "first (x.astype(...)), or pass one field of a structured array (x['name'])", backend=dst)

    def compact_copy(self, x: Any, backend: Any) -> Any:
        return aligned_copy(x)

    def data_ptr(self, x: Any) -> int | None:
        return int(x.__array_interface__["data"][0])

    def host(self, x: Any) -> Any:
        return x

    def adopt_host(self, y: Any) -> Any:
        return y


HANDOFF = NumpyHandoff()
