"""NumPy's side of a handoff: its refusals and its signature for the weak cache (the host format every library
reads, views, pointers and aligned copies, is the contract's: _backends/_host.py). Imports NumPy on first use only."""

from __future__ import annotations

from typing import Any

from unarray._backends._handoff import Handoff, LazyNumpy, ml_dtype_name
from unarray._backends._host import aligned_copy, np_ptr, own_array
from unarray._errors import DTypeError

np = LazyNumpy(globals())


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
