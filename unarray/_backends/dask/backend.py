# dask backend: dask.array.Array with NumPy chunks on the CPU or CuPy chunks on CUDA. The namespace is
# array_api_compat.dask.array; the hot ops build dask graphs of their own (chunked matmul contraction,
# a Chan combine for var/std, the blocked attention of attention_dask), linear algebra per matrix of a stack and
# the chunks' own backend's elementwise corrections per chunk (dask_chunks). Nothing here computes: every op
# returns a lazy dask array, and only ua.to(x, "numpy") (counted in ua.stats()["computes"]) or the
# caller's own compute() runs the graph. Imported only once dask is in use.
from __future__ import annotations

import functools
import math
import sys
from typing import TYPE_CHECKING, Any

import array_api_compat.dask.array as _compat_dask
import dask
import dask.array as _da
import numpy as np
from array_api_compat.common._linalg import EighResult, EigResult, QRResult, SlogdetResult, SVDResult

from unarray import _shapes
from unarray._backends import updates
from unarray._backends._base import Backend
from unarray._backends._contract import BackendContract
from unarray._backends._nn import Plan
from unarray._backends._xp_shared import UniqueAllResult, UniqueCountsResult, UniqueInverseResult
from unarray._backends.attention_masks import MaskSpec
from unarray._backends.dask import LIBRARY
from unarray._backends.dask import chunks as dask_chunks
from unarray._backends.dask.chunks import chunk_library, chunked_matmul, da, per_matrix, stable_var
from unarray._devices import Device, parse_device
from unarray._dtypes import DType, canonical_name
from unarray._errors import DeviceMismatchError, ShapeError, UnarrayError, UnsupportedError

compat_dask: Any = _compat_dask  # (array-api-compat's dask namespace ships no type hints, nor dask)
_CPU = Device("cpu")


def _no_identity(op: str) -> Any:
    reduce = getattr(Backend, op)

    def run(self: Backend, x: Any, axis: Any, keepdims: bool) -> Any:
        if not any(0 in c for c in x.chunks):
            return reduce(self, x, axis, keepdims)
        if 0 not in x.shape:
            x = x.rechunk(tuple(tuple(c for c in cs if c) for cs in x.chunks))
        r = reduce(self, x, axis, keepdims)  # (the base class refuses an empty reduction before this)
        return da.zeros_like(r) if 0 in r.shape else r

    run.__name__, run.__qualname__ = op, f"DaskBackend.{op}"  # (what ua.explain names)
    return run


class DaskBackend(Backend):
    name = "dask"
    xp = compat_dask
    native = da
    # Note: a dask operand leads a mixed call whatever its position; eager operands join its graph.
    lazy = LIBRARY.lazy
    native_mixed_kinds = False  # NumPy's promotion widens int32 with float32 to float64

    def failure_hint(self, text: str) -> tuple[type[UnarrayError], str] | None:
        if "nan" in text:  # a size unknown until computed
            return ShapeError, ("an operand has unknown (NaN) sizes, from a data-dependent op (nonzero, boolean "
                                "indexing, unique_*), which this op needs known; compute the sizes first "
                                "(x.compute_chunk_sizes()) or the values (ua.to(x, 'numpy'))")
        return None

    def __getattr__(self, op: str) -> Any:
        # Note: an elementwise op that the chunks' backend corrects (NumPy's complex expm1, CuPy's remainder)
        # runs that backend's op per chunk: dask's own would map the uncorrected kernel. A dunder is no op (inspect
        # and doctest probe ``__wrapped__`` before the registry hands over the chunks).
        if not op.startswith("__") and op in self._chunk_fixes():
            fn = functools.partial(self._elementwise, op)
            setattr(self, op, fn)
            return fn
        return super().__getattr__(op)

    # The backends that run the chunks (NumPy's, CuPy's), by library name: handed over by the registry, which builds
    # each on first use.
    chunks: dict[str, Backend] = {}

    def _on_chunks(self, x: Any) -> Backend:
        """The backend that runs ``x``'s chunks: CuPy's for CuPy chunks, else NumPy's."""
        return self.chunks["cupy" if chunk_library(x) == "cupy" else "numpy"]

    def _chunk_fixes(self) -> frozenset[str]:
        # Each elementwise op the chunks' backend corrects, of NumPy and of CuPy where it is imported.
        fixes = self.chunks["numpy"].elementwise_fixes
        return fixes | self.chunks["cupy"].elementwise_fixes if "cupy" in sys.modules else fixes

    def _elementwise(self, op: str, *args: Any) -> Any:
        lead = next(a for a in args if isinstance(a, da.Array))
        return dask_chunks.elementwise(getattr(self._on_chunks(lead), op), *args)

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, da.Array)

    # Note: array-api-compat's dask namespace names the standard's dtypes only; dask runs float16 chunks.
    def dtype(self, d: Any) -> Any:
        if d is not None and (d.name if isinstance(d, DType) else canonical_name(d)) == "float16":
            return np.dtype(np.float16)
        return super().dtype(d)

    def version(self) -> str:
        return str(getattr(dask, "__version__", "?"))

    def device_of(self, x: Any) -> Device:
        lib = chunk_library(x)
        if lib == "cupy":
            return self.chunks[lib].device_of(x._meta)
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
            out += self.chunks["cupy"].devices()
        return out

    def creation_device(self, x: Any) -> dict[str, Any]:
        return {}

    def from_dlpack(self, x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
        return da.from_array(np.from_dlpack(x, copy=copy))

    def precision_used(self, policy: str, x: Any) -> str:
        if chunk_library(x) == "cupy":
            return self.chunks["cupy"].precision_used(policy, x._meta) + ", per chunk when the graph runs"
        return "float32 (NumPy chunks: the CPU runs no reduced-precision matmul passes)"

    def kernel_name(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        # The callable the call runs (the base class names it), and how it builds the graph.
        name = super().kernel_name(op, args, kwargs)
        if op in ("matmul", "linalg.matmul"):
            return f"{name} (chunked: dask.array.blockwise per block pair + tree sum over the contraction)"
        if op in ("var", "std"):
            return f"{name} (dask.array.reduction, Chan's pairwise (count, mean, M2) combine)"
        if op.startswith("linalg.") and op.replace(".", "_") in type(self).__dict__ and op != "linalg.matrix_norm":
            return (f"{name} (per matrix: dask.array.apply_gufunc, each matrix in one chunk, the stack "
                    "chunked as given; the chunks' NumPy or CuPy kernel per block)")
        if op in self._chunk_fixes():
            return f"{name} (per chunk: dask.array.elemwise over the chunks' backend's corrected {op})"
        if op == "take_along_axis":
            return f"{name} (dask.array.map_blocks; the axis in one chunk, the others aligned)"
        return name

    def handoff_path(self, src: Backend, x: Any) -> str:
        return f"dask.array.from_array (the {src.name} array wrapped lazily, chunked like the leader; no copy)"

    def wrap(self, arr: Any, chunks: Any) -> Any:  # ua.to(x, "dask"): unarray/interop/_dask.py
        """A NumPy or CuPy array as a dask array (no copy: the graph holds ``arr`` and reads views of it)."""
        return da.from_array(arr, chunks="auto" if chunks is None else chunks, asarray=False)

    # -- mixed calls: an eager array joins the graph as a dask array chunked like the leader -------------
    def join(self, op: str, lead_x: Any, x: Any, handoff: Any) -> Any:
        # handoff: ua.to (the caller's; a backend imports no handoff module)
        where = "cupy" if chunk_library(lead_x) == "cupy" else "numpy"
        arr = handoff(x, where, _op=op)
        return self.wrap(arr, matched_chunks(lead_x, tuple(arr.shape)))

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
    def matmul(self, x1: Any, x2: Any, policy: str) -> Any:
        # dask may refuse a mismatch only when computed (an inner size of 1 against another): checked here
        _shapes.matmul("matmul", self.name, x1.shape, x2.shape)
        return chunked_matmul(x1, x2, policy, self._on_chunks(x1))

    def matrix_transpose(self, x: Any) -> Any:
        if x.ndim < 2:
            return super().matrix_transpose(x)
        return da.swapaxes(x, -1, -2)

    def permute_dims(self, x: Any, axes: tuple[int, ...]) -> Any:
        return da.transpose(x, axes)

    def var(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        if x.dtype.kind != "f":
            return super().var(x, axis, correction, keepdims)
        return stable_var(x, axis, correction, keepdims)

    def std(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        if x.dtype.kind != "f":
            return super().std(x, axis, correction, keepdims)
        return stable_var(x, axis, correction, keepdims, root=True)

    # Note: dask reduces every chunk without an identity, so a zero-size chunk fails when the graph runs, even
    # where no element of the result is empty: such chunks are dropped first, and an empty result made directly.
    min, max, argmin, argmax = map(_no_identity, ("min", "max", "argmin", "argmax"))

    # Note: dask's tensordot sums int32 products into int64; the standard keeps the promoted input dtype.
    def tensordot(self, x1: Any, x2: Any, /, *, axes: Any = 2, policy: str) -> Any:
        dt = np.result_type(x1.dtype, x2.dtype)
        return da.tensordot(x1, x2, axes=axes).astype(dt, copy=False)

    # Note: dask repeats by an array of counts only after computing them (a data-dependent shape).
    def repeat(self, x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
        if isinstance(repeats, da.Array):
            raise UnsupportedError("repeats given as a dask array make the output shape depend on data that dask "
                                   "cannot know without computing; compute the counts first "
                                   "(ua.to(repeats, 'numpy')) or pass an int", op="repeat", backend=self.name)
        if axis is None:  # Note: dask's repeat needs an axis; the standard's None repeats the flattened array.
            x, axis = da.reshape(x, (-1,)), 0
        return compat_dask.repeat(x, repeats, axis=axis)

    # Note: dask's unique merges NaNs (and counts them 0, points the inverse at the wrong value, or fails in
    # unique_all); the standard keeps each NaN apart: the chunks' backend runs it on the array as one block.
    def unique_all(self, x: Any, /) -> Any:
        return UniqueAllResult(*dask_chunks.unique_all(x, self._on_chunks(x).unique_all))

    def unique_values(self, x: Any, /) -> Any:
        return self.unique_all(x).values

    def unique_counts(self, x: Any, /) -> Any:
        r = self.unique_all(x)
        return UniqueCountsResult(r.values, r.counts)

    def unique_inverse(self, x: Any, /) -> Any:
        r = self.unique_all(x)
        return UniqueInverseResult(r.values, r.inverse_indices)

    # Note: dask's mean sums float16 chunks in float16; NumPy (the reference) accumulates them in float32.
    def mean(self, x: Any, axis: Any, keepdims: bool) -> Any:
        if axis == ():
            return x.copy()
        if x.dtype == np.float16:
            return compat_dask.mean(x.astype(np.float32), axis=axis, keepdims=keepdims).astype(np.float16)
        return compat_dask.mean(x, axis=axis, keepdims=keepdims)

    # Note: dask's eye numbers its blocks by the row chunks (an empty eye divided by zero, a wide one lost blocks).
    def eye(self, n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
            device: Any = None) -> Any:
        self.native_device(device)
        return dask_chunks.eye(n_rows, n_rows if n_cols is None else n_cols, k, np.float64 if dtype is None else dtype)

    def take_along_axis(self, x: Any, indices: Any, /, *, axis: int = -1) -> Any:
        return dask_chunks.take_along_axis(x, indices, axis, self._on_chunks(x).take_along_axis)

    # Note: dask's searchsorted takes no sorter; x1 put in order by it (a lazy gather) is the same search.
    def searchsorted(self, x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
        if sorter is not None:
            x1 = self.take(x1, sorter, axis=0)
        if not isinstance(x2, da.Array):  # (dask's searchsorted reads x2's chunks: a Python scalar has none)
            x2 = da.from_array(np.asarray(x2, dtype=np.result_type(x1.dtype, x2)))
        if x2.ndim == 0:  # Note: dask's per-block search writes into its result, which a 0-d x2 makes a scalar.
            return da.reshape(compat_dask.searchsorted(x1, da.reshape(x2, (1,)), side=side), ())
        return compat_dask.searchsorted(x1, x2, side=side)

    # -- linalg: per matrix (the core axes in one chunk, the stack chunked as it is), through the chunks'
    # backend; dask.array.linalg factors one 2-D matrix only, by blocks, some without pivoting across them.
    def _per_matrix(self, op: str, signature: str, args: tuple[Any, ...], dtypes: Any, **kw: Any) -> Any:
        # The core shape the signature names, checked first; a new core dimension k is the matrices' smaller side.
        x, (ins, outs) = args[0], signature.split("->")
        square = ins.startswith("(m,m)")
        if (square or ins.startswith("(m,n)")) and (x.ndim < 2 or square and x.shape[-1] != x.shape[-2]):
            what = "square matrices (..., M, M)" if square else "matrices (..., M, N)"
            raise ShapeError(f"needs {what}, got shape {tuple(x.shape)}", op=op.replace("linalg_", "linalg."),
                             backend=self.name)
        sizes = {"k": min(x.shape[-2:])} if "k" in outs and "k" not in ins else None
        return per_matrix(getattr(self._on_chunks(x), op), signature, args, dtypes, sizes, **kw)

    def linalg_det(self, x: Any, /) -> Any:
        return self._per_matrix("linalg_det", "(m,m)->()", (x,), x.dtype)

    def linalg_slogdet(self, x: Any, /) -> Any:
        return SlogdetResult(*self._per_matrix("linalg_slogdet", "(m,m)->(),()", (x,), (x.dtype, _real(x.dtype))))

    def linalg_inv(self, x: Any, /) -> Any:
        return self._per_matrix("linalg_inv", "(m,m)->(m,m)", (x,), x.dtype)

    def linalg_matrix_power(self, x: Any, n: int, /, *, policy: str) -> Any:
        return self._per_matrix("linalg_matrix_power", "(m,m)->(m,m)", (x,), x.dtype, _after=(n,), policy=policy)

    def linalg_eigh(self, x: Any, /) -> Any:
        return EighResult(*self._per_matrix("linalg_eigh", "(m,m)->(m),(m,m)", (x,), (_real(x.dtype), x.dtype)))

    def linalg_eigvalsh(self, x: Any, /) -> Any:
        return self._per_matrix("linalg_eigvalsh", "(m,m)->(m)", (x,), _real(x.dtype))

    def linalg_cholesky(self, x: Any, /, *, upper: bool = False) -> Any:
        return self._per_matrix("linalg_cholesky", "(m,m)->(m,m)", (x,), x.dtype, upper=upper)

    def linalg_svd(self, x: Any, /, *, full_matrices: bool = True) -> Any:
        sig = "(m,n)->(m,m),(k),(n,n)" if full_matrices else "(m,n)->(m,k),(k),(k,n)"
        return SVDResult(*self._per_matrix("linalg_svd", sig, (x,), (x.dtype, _real(x.dtype), x.dtype),
                                           full_matrices=full_matrices))

    def linalg_svdvals(self, x: Any, /) -> Any:
        return self._per_matrix("linalg_svdvals", "(m,n)->(k)", (x,), _real(x.dtype))

    def linalg_pinv(self, x: Any, /, *, rtol: Any = None) -> Any:
        if hasattr(rtol, "shape"):  # a tolerance per matrix of the stack
            return self._per_matrix("linalg_pinv", "(m,n),()->(n,m)", (x, rtol), x.dtype, _as_kw=("rtol",))
        return self._per_matrix("linalg_pinv", "(m,n)->(n,m)", (x,), x.dtype, rtol=rtol)

    def linalg_matrix_rank(self, x: Any, /, *, rtol: Any = None) -> Any:
        if hasattr(rtol, "shape"):
            return self._per_matrix("linalg_matrix_rank", "(m,n),()->()", (x, rtol), np.int64, _as_kw=("rtol",))
        return self._per_matrix("linalg_matrix_rank", "(m,n)->()", (x,), np.int64, rtol=rtol)

    def linalg_qr(self, x: Any, /, *, mode: str = "reduced") -> Any:
        sig = "(m,n)->(m,k),(k,n)" if mode == "reduced" else "(m,n)->(m,m),(m,n)"
        return QRResult(*self._per_matrix("linalg_qr", sig, (x,), (x.dtype, x.dtype), mode=mode))

    def linalg_solve(self, x1: Any, x2: Any, /) -> Any:
        sig = "(m,m),(m)->(m)" if x2.ndim == 1 else "(m,m),(m,k)->(m,k)"
        return self._per_matrix("linalg_solve", sig, (x1, x2), np.result_type(x1.dtype, x2.dtype))

    def linalg_eig(self, x: Any, /) -> Any:
        dt = np.result_type(x.dtype, np.complex64)
        return EigResult(*self._per_matrix("linalg_eig", "(m,m)->(m),(m,m)", (x,), (dt, dt)))

    def linalg_eigvals(self, x: Any, /) -> Any:
        return self._per_matrix("linalg_eigvals", "(m,m)->(m)", (x,), np.result_type(x.dtype, np.complex64))

    # Note: dask's norms by singular values take one 2-D matrix only.
    def linalg_matrix_norm(self, x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
        if ord not in (2, -2, "nuc"):
            return compat_dask.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
        out = self._per_matrix("linalg_matrix_norm", "(m,n)->()", (x,), _real(x.dtype), ord=ord)
        return out[..., None, None] if keepdims else out

    def linalg_cross(self, x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
        if x1.shape[axis] != 3 or x2.shape[axis] != 3:
            raise ShapeError(f"needs vectors of 3 along axis {axis}, got shapes {tuple(x1.shape)} and "
                             f"{tuple(x2.shape)}", op="linalg.cross", backend=self.name)
        dt = np.result_type(x1.dtype, x2.dtype)
        return self._per_matrix("linalg_cross", "(i),(i)->(i)", (x1, x2), dt, axes=[(axis,), (axis,), (axis,)])

    # -- attention: a blocked online softmax over the key chunks, as a dask graph ----------------------
    borrows_attention = False  # its own fused kernels

    def attention_plan(self, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                       policy: str) -> Plan:
        if spec.structured:
            return super().attention_plan(q, k, v, mask, spec, scale, layout, policy)
        from unarray._backends.dask import attention as attention_dask

        return attention_dask.plan(q, k, v, mask, spec.causal, scale, layout, policy, self._on_chunks(q))


def _real(dt: Any) -> Any:
    return np.empty(0, dt).real.dtype


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


BACKEND = DaskBackend()

if TYPE_CHECKING:  # mypy checks the class against the contract, for its array type
    _contract: BackendContract[_da.Array] = BACKEND
