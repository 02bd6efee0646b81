# dask backend: dask.array.Array with NumPy chunks on the CPU or CuPy chunks on CUDA. The namespace is
# array_api_compat.dask.array; the hot ops build dask graphs of their own (chunked matmul contraction,
# a Chan combine for var/std, the blocked attention of attention_dask). Nothing here computes: every op
# returns a lazy dask array, and only ua.to(x, "numpy") (counted in ua.stats()["computes"]) or the
# caller's own compute() runs the graph. Imported only once dask is in use.
from __future__ import annotations

import math
import sys
from typing import Any

import array_api_compat.dask.array as _compat_dask
import dask
import dask.array as _da
import numpy as np

from unarray import _precision
from unarray._backends import updates
from unarray._backends._base import Backend
from unarray._backends.dask_chunks import chunk_library, chunked_matmul, stable_var
from unarray._devices import Device, parse_device
from unarray._errors import DeviceMismatchError, UnsupportedError

# (dask and array-api-compat's dask namespace ship no type hints)
da: Any = _da
compat_dask: Any = _compat_dask
_CPU = Device("cpu")
_REAL = frozenset("f")


class DaskBackend(Backend):
    name = "dask"
    holes = {"take_along_axis": "dask.array has no take_along_axis (its indices are data the graph cannot slice "
                                "by without computing them); compute first with ua.to(x, 'numpy')"}
    xp = compat_dask
    native = da
    kernel_namespace = "dask.array"
    # Note: a dask operand leads a mixed call whatever its position; eager operands join its graph.
    lazy = True

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, da.Array)

    def version(self) -> str:
        return str(getattr(dask, "__version__", "?"))

    def device_of(self, x: Any) -> Device:
        lib = chunk_library(x)
        if lib == "cupy":
            from unarray._backends.cupy import device_from_id

            return device_from_id(int(x._meta.device.id))
        if lib in ("numpy", "scipy", "sparse"):
            return _CPU
        raise DeviceMismatchError(f"this dask array's chunks are {type(x._meta).__qualname__} ({lib}); unarray "
                                  "runs dask arrays of NumPy chunks (CPU) or CuPy chunks (CUDA); "
                                  "map them with x.map_blocks(numpy.asarray) first", backend=self.name)

    def native_device(self, device: Any) -> Any:
        d = device if isinstance(device, Device) or device is None else parse_device(device)
        if d is None or d.kind == "cpu":
            return "cpu"
        raise DeviceMismatchError(f"dask arrays are created with NumPy chunks on the CPU; got device {device!r}: "
                                  "make CuPy chunks with ua.to(cupy_array, 'dask', chunks=...)", backend=self.name)

    def devices(self) -> list[Device]:
        out = [_CPU]
        if "cupy" in sys.modules:
            from unarray._backends import cupy as cupy_backend

            out += cupy_backend.BACKEND.devices()
        return out

    def creation_device(self, x: Any) -> dict[str, Any]:
        return {}

    def data_ptr(self, x: Any) -> int:
        raise UnsupportedError("a dask array is a graph, with no buffer until computed; ua.to(x, 'numpy') "
                               "computes it", op="data_ptr", backend=self.name)

    def from_dlpack(self, x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
        return da.from_array(np.from_dlpack(x, copy=copy))

    def precision_used(self, policy: str, x: Any) -> str:
        if chunk_library(x) == "cupy":
            from unarray._backends import cupy as cupy_backend

            return cupy_backend.BACKEND.precision_used(policy, x._meta) + ", per chunk when the graph runs"
        return "float32 (NumPy chunks: the CPU runs no reduced-precision matmul passes)"

    def kernel_name(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        if op == "matmul":
            return "unarray chunked matmul (dask.array.blockwise per block pair + tree sum over the contraction)"
        if op in ("var", "std"):
            return f"unarray {op} (dask.array.reduction, Chan's pairwise (count, mean, M2) combine)"
        return super().kernel_name(op, args, kwargs)

    def handoff_path(self, src: Backend, x: Any) -> str:
        return f"dask.array.from_array (the {src.name} array wrapped lazily, chunked like the leader; no copy)"

    def wrap(self, arr: Any, chunks: Any) -> Any:  # ua.to(x, "dask"): unarray/interop/_dask.py
        return wrap(arr, chunks)

    # -- mixed calls: an eager array joins the graph as a dask array chunked like the leader -------------
    def join(self, op: str, lead_x: Any, x: Any, handoff: Any) -> Any:
        # handoff: ua.to (the caller's; a backend imports no handoff module)
        where = "cupy" if chunk_library(lead_x) == "cupy" else "numpy"
        arr = handoff(x, where, _op=op)
        return wrap(arr, matched_chunks(lead_x, tuple(arr.shape)))

    # -- ua.at: a mask with one value stays chunked (where); any other index is one NumPy task over the array ----
    def at_update(self, x: Any, idx: Any, op: str, v: Any, in_place: bool) -> Any:
        mask = updates.mask_of(idx, x.ndim)
        if mask is not None and np.ndim(v) == 0:
            v = v.astype(x.dtype) if isinstance(v, da.Array) else np.asarray(v, dtype=x.dtype)
            return da.where(mask, v if op == "set" else updates.apply(da, op, x, v), x).astype(x.dtype, copy=False)
        parts = idx if isinstance(idx, tuple) else (idx,)
        found = [p for p in parts if hasattr(p, "shape")]

        def run(xn: Any, vn: Any, *arrays: Any) -> Any:
            it = iter(arrays)
            ix = tuple(next(it) if hasattr(p, "shape") else p for p in parts)
            return updates.numpy_update(np.array(xn), ix if isinstance(idx, tuple) else ix[0], op,
                                        np.asarray(vn, dtype=xn.dtype))

        return self.apply_numpy(run, [x, v, *found], tuple(x.shape), x.dtype).rechunk(x.chunks)

    def apply_numpy(self, call: Any, arrays: list[Any], shape: tuple[int, ...], dtype: Any) -> Any:
        return da.from_delayed(dask.delayed(call, pure=False)(*arrays), shape, dtype=dtype)  # type: ignore[attr-defined]

    # -- hot ops ---------------------------------------------------------------------------------------
    def matmul(self, x1: Any, x2: Any) -> Any:
        return chunked_matmul(x1, x2, _precision.current())

    def matrix_transpose(self, x: Any) -> Any:
        if x.ndim < 2:
            return super().matrix_transpose(x)
        return da.swapaxes(x, -1, -2)

    def permute_dims(self, x: Any, axes: tuple[int, ...]) -> Any:
        return da.transpose(x, axes)

    def mean(self, x: Any, axis: Any, keepdims: bool) -> Any:
        if axis == ():
            return x.copy()
        return compat_dask.mean(x, axis=axis, keepdims=keepdims)

    def var(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        if x.dtype.kind not in _REAL:
            return super().var(x, axis, correction, keepdims)
        return stable_var(x, axis, correction, keepdims)

    def std(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        if x.dtype.kind not in _REAL:
            return super().std(x, axis, correction, keepdims)
        return stable_var(x, axis, correction, keepdims, root=True)

    # Note: dask's tensordot sums int32 products into int64; the standard keeps the promoted input dtype.
    def tensordot(self, x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
        dt = np.result_type(x1.dtype, x2.dtype)
        return da.tensordot(x1, x2, axes=axes).astype(dt, copy=False)

    # Note: dask's cholesky gives the upper factor by default; the standard's default is the lower one.
    def linalg_cholesky(self, x: Any, /, *, upper: bool = False) -> Any:
        return da.linalg.cholesky(x, lower=not upper)

    # Note: dask repeats by an array of counts only after computing them (a data-dependent shape).
    def repeat(self, x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
        if isinstance(repeats, da.Array):
            raise UnsupportedError("repeats given as a dask array make the output shape depend on data that dask "
                                   "cannot know without computing; compute the counts first "
                                   "(ua.to(repeats, 'numpy')) or pass an int", op="repeat", backend=self.name)
        return compat_dask.repeat(x, repeats, axis=axis)

    # -- attention: a blocked online softmax over the key chunks, as a dask graph ----------------------
    def scaled_dot_product_attention(self, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float,
                                     layout: str, precision: str | None) -> Any:
        from unarray._backends import attention_dask

        return attention_dask.attention(q, k, v, mask, is_causal, scale, layout, precision)

    def attention_kernel(self, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, layout: str) -> str:
        from unarray._backends import attention_dask

        return attention_dask.label(q, k, v, layout)


def matched_chunks(lead: Any, shape: tuple[int, ...]) -> Any:
    """Chunks for an array of ``shape`` joining ``lead``: the leader's where a trailing dimension matches
    (so blockwise ops need no rechunk), one chunk along the others."""
    out = []
    off = lead.ndim - len(shape)
    for i, n in enumerate(shape):
        j = i + off
        c = lead.chunks[j] if 0 <= j < lead.ndim else None
        out.append(c if c is not None and sum(c) == n and not any(math.isnan(e) for e in c) else (n,))
    return tuple(out)


def wrap(arr: Any, chunks: Any) -> Any:
    """A NumPy or CuPy array as a dask array (no copy: the graph holds ``arr`` and reads views of it)."""
    return da.from_array(arr, chunks="auto" if chunks is None else chunks, asarray=False)


BACKEND = DaskBackend()
