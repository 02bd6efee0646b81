# NumPy backend. NumPy >= 2.1 follows the array API standard for the hot ops, so
# most of them are the NumPy functions themselves (no extra frame); the rest come from
# array_api_compat's NumPy namespace, resolved name by name (xp.py: importing it whole loads most
# of NumPy). Imported only once NumPy is in use.
from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from unarray._backends._base import Backend, dtype_named
from unarray._backends._contract import BackendContract
from unarray._backends.hot_calls import HotCall
from unarray._backends.numpy.xp import XP
from unarray._devices import Device
from unarray._errors import ArgumentTypeError, DeviceMismatchError
from unarray._kernels.layout_route import AS_IS, Route
from unarray._precision import ignoring_policy

_CPU = Device("cpu")
# Complex dtype classes: one type() and a set lookup, cheaper than dtype.kind on the hot reductions.
_COMPLEX: frozenset[type[Any]] = frozenset(
    {np.dtypes.Complex64DType, np.dtypes.Complex128DType, np.dtypes.CLongDoubleDType})
_add_reduce: Any = np.add.reduce
_mul_reduce: Any = np.multiply.reduce
_max_reduce: Any = np.maximum.reduce
_min_reduce: Any = np.minimum.reduce
_or_reduce: Any = np.logical_or.reduce
_and_reduce: Any = np.logical_and.reduce
_ndarray = np.ndarray
_asarray = np.asarray


def _array(r: Any) -> Any:
    # A full reduction's NumPy scalar as the 0-d array the standard (and every other backend) returns.
    return r if type(r) is _ndarray else _asarray(r)


def _mean(x: Any) -> Any:
    return _add_reduce(x, None) / x.size


# The full reductions' branches (every other parameter at its default) as the standard's 0-d array: mean's only where
# it is add.reduce over the count (float16's np.mean accumulates in float32), its NumPy scalar made the array; arg*'s
# for every ordered dtype, its dims kept, then squeezed (one array made, where a scalar made an array is two).
_WIDE = frozenset(map(np.dtype, "fdgFDG"))
_ORDERED = frozenset(map(np.dtype, "?" + np.typecodes["AllInteger"] + np.typecodes["Float"]))
_MEAN = HotCall("mean", _mean, _ndarray, dtypes=_WIDE, defaults=(None, False), then=np.generic.__array__)
_ARGMAX, _ARGMIN = (HotCall(f"arg{m}", getattr(_ndarray, f"arg{m}"), _ndarray, dtypes=_ORDERED, defaults=(None, False),
                            keywords={"keepdims": True}, then=_ndarray.squeeze) for m in ("max", "min"))


def _count(shape: tuple[int, ...], axis: int | tuple[int, ...]) -> int:
    n = 1
    for a in (axis,) if isinstance(axis, int) else axis:
        n *= shape[a]
    return n


# NumPy's arrays, and its scalars (np.generic), which the backend reads as 0-d arrays.
if TYPE_CHECKING:  # (numpy.typing is not imported at run time: the first NumPy call stays small)
    import numpy.typing as npt

    _NDArray = npt.NDArray[Any]
# ua.ascontiguousarray's copy where x is not C-contiguous (NumPy has no faster one to take).
_NATIVE_COPY = Route("native", "numpy.ascontiguousarray", np.ascontiguousarray)


class NumpyBackend(Backend):
    name = "numpy"
    native = np
    elementwise_fixes = frozenset({"expm1", "nextafter"})
    native_mixed_kinds = False  # NumPy's promotion widens int32 with float32 to float64
    quiet = staticmethod(functools.partial(np.errstate, all="ignore"))  # NumPy warns where it makes NaN or inf

    @property
    def xp(self) -> Any:
        return XP

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, (np.ndarray, np.generic))

    # Note: a masked array's mask is invisible to every op (sums, maxima and handoffs would read the
    # masked-out values), so it is refused; np.matrix keeps every result 2-D, so ops see its plain view.
    def plain_view(self, t: type, op: str | None) -> Any:
        ma = sys.modules.get("numpy.ma")
        if ma is not None and issubclass(t, ma.MaskedArray):
            raise ArgumentTypeError(
                f"got a NumPy masked array ({t.__module__}.{t.__qualname__}), whose mask no backend would "
                "honour; pass x.filled(value) (masked entries replaced by value, e.g. 0 for a sum) or x.data "
                "(the raw values, mask ignored)", op=op, backend=self.name)
        return np.asarray if issubclass(t, np.matrix) else None

    def device_of(self, x: _NDArray) -> Device:
        return _CPU

    def native_device(self, device: Any) -> Any:
        if device is None or device == "cpu" or device == _CPU:
            return "cpu"
        raise DeviceMismatchError(f"NumPy arrays live on the CPU only; got device {device!r}", backend=self.name)

    def dtype(self, d: Any) -> Any:
        if d is None:
            return None
        # Note: the dtypes are NumPy's own in array_api_compat too: read here without importing it.
        return getattr(np, dtype_named(d, self.name))

    def layout_route(self, x: Any) -> Route:
        return AS_IS if x.flags.c_contiguous else _NATIVE_COPY

    # Hot ops: NumPy 2 conforms, so these are the native callables.
    # The ufunc itself: no Python frame between the front end and the kernel.
    matmul = staticmethod(ignoring_policy(np.matmul))

    def matrix_transpose(self, x: _NDArray) -> Any:
        return np.matrix_transpose(x)

    def permute_dims(self, x: _NDArray, axes: tuple[int, ...]) -> Any:
        return x.transpose(axes)

    # Note: NumPy orders complex numbers lexicographically; the standard has no complex order, so
    # max/min/argmax/argmin refuse them, as on every backend.
    # Note: the ufunc reductions are np.sum/np.prod/np.max/... without their Python
    # wrappers (same results, dtypes and errors; checked in tests/ops/test_hot_ops.py); out=... makes a full
    # reduction's result the standard's 0-d array, not a NumPy scalar (tests/ops/test_zero_d_results.py).
    def sum(self, x: _NDArray, axis: Any, dtype: Any, keepdims: bool) -> Any:
        return _add_reduce(x, axis, None if dtype is None else self.dtype(dtype), keepdims=keepdims, out=...)

    def prod(self, x: _NDArray, axis: Any, dtype: Any, keepdims: bool) -> Any:
        return _mul_reduce(x, axis, None if dtype is None else self.dtype(dtype), keepdims=keepdims, out=...)

    @_MEAN.bind
    def mean(self, x: _NDArray, axis: Any, keepdims: bool) -> Any:
        dt = x.dtype
        if dt.kind in "fc" and dt.itemsize >= 4:  # np.mean accumulates float16 in float32: keep its path
            n = x.size if axis is None else _count(x.shape, axis)
            return _array(_add_reduce(x, axis, None, None, keepdims) / n)
        return _array(np.mean(x, axis=axis, keepdims=keepdims))

    def var(self, x: _NDArray, axis: Any, correction: float, keepdims: bool) -> Any:
        return _array(np.var(x, axis=axis, correction=correction, keepdims=keepdims))

    def std(self, x: _NDArray, axis: Any, correction: float, keepdims: bool) -> Any:
        return _array(np.std(x, axis=axis, correction=correction, keepdims=keepdims))

    # (the base's NaN for too few elements multiplies a 0-d array by NaN: NumPy makes that a scalar)
    def var_corrected(self, x: _NDArray, axis: Any, correction: float, keepdims: bool) -> Any:
        return _array(Backend.var_corrected(self, x, axis, correction, keepdims))

    def std_corrected(self, x: _NDArray, axis: Any, correction: float, keepdims: bool) -> Any:
        return _array(Backend.std_corrected(self, x, axis, correction, keepdims))

    def min(self, x: _NDArray, axis: Any, keepdims: bool) -> Any:
        if type(x.dtype) in _COMPLEX:
            raise self._unordered("min", x)
        try:
            return _min_reduce(x, axis, None, keepdims=keepdims, out=...)
        except ValueError:
            self._check_nonempty("min", x, axis)
            raise

    def max(self, x: _NDArray, axis: Any, keepdims: bool) -> Any:
        if type(x.dtype) in _COMPLEX:
            raise self._unordered("max", x)
        try:
            return _max_reduce(x, axis, None, keepdims=keepdims, out=...)
        except ValueError:
            self._check_nonempty("max", x, axis)
            raise

    @_ARGMIN.bind
    def argmin(self, x: Any, axis: int | None, keepdims: bool) -> Any:
        if type(x.dtype) in _COMPLEX:
            raise self._unordered("argmin", x)
        try:
            return _array(x.argmin(axis=axis, keepdims=keepdims))
        except ValueError:
            self._check_nonempty("argmin", x, axis)
            raise

    @_ARGMAX.bind
    def argmax(self, x: Any, axis: int | None, keepdims: bool) -> Any:
        if type(x.dtype) in _COMPLEX:
            raise self._unordered("argmax", x)
        try:
            return _array(x.argmax(axis=axis, keepdims=keepdims))
        except ValueError:
            self._check_nonempty("argmax", x, axis)
            raise

    def any(self, x: _NDArray, axis: Any, keepdims: bool) -> Any:
        return _or_reduce(x, axis, None, keepdims=keepdims, out=...)

    def all(self, x: _NDArray, axis: Any, keepdims: bool) -> Any:
        return _and_reduce(x, axis, None, keepdims=keepdims, out=...)

    def count_nonzero(self, x: _NDArray, /, **kw: Any) -> Any:
        return _array(self.xp.count_nonzero(x, **kw))  # (a scalar where its axes are all of x's)

    # The linear-algebra reductions: NumPy's return a scalar where the result has no dimension left.
    def vecdot(self, x1: Any, x2: Any, /, *, axis: int = -1, policy: str) -> Any:
        return _array(self.xp.vecdot(x1, x2, axis=axis))

    def linalg_det(self, x: _NDArray, /) -> Any:
        return _array(self.xp.linalg.det(x))

    def linalg_matrix_norm(self, x: _NDArray, /, **kw: Any) -> Any:
        return _array(self.xp.linalg.matrix_norm(x, **kw))

    def linalg_vector_norm(self, x: _NDArray, /, **kw: Any) -> Any:
        return _array(self.xp.linalg.vector_norm(x, **kw))

    # Note: np.linalg.matrix_rank of an empty matrix fails (the maximum of no singular values); its rank is 0.
    def linalg_matrix_rank(self, x: _NDArray, /, **kw: Any) -> Any:
        if x.ndim >= 2 and 0 in x.shape[-2:]:
            return np.zeros(x.shape[:-2], np.int64)
        return _array(self.xp.linalg.matrix_rank(x, **kw))

    def linalg_slogdet(self, x: _NDArray, /) -> Any:
        r = self.xp.linalg.slogdet(x)
        return type(r)(*(_array(v) for v in r))

    def cumulative_sum(self, x: _NDArray, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return np.cumulative_sum(x, axis=axis, dtype=self.dtype(dtype), include_initial=include_initial)

    def cumulative_prod(self, x: _NDArray, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return np.cumulative_prod(x, axis=axis, dtype=self.dtype(dtype), include_initial=include_initial)

    # Note: np.expm1 of a complex number is exp(z) - 1 (inf + 0j gives inf + NaN j; the standard: inf + 0j).
    def expm1(self, x: _NDArray, /) -> Any:
        if x.dtype.kind != "c":
            return np.expm1(x)
        from unarray._backends import _special  # (not on the first call's path: complex expm1 only)

        with np.errstate(all="ignore"):
            return _special.complex_expm1(XP, x, _complex)

    # Note: NumPy's float16 nextafter(-0.0, +0.0) gives -0.0; the standard: x2 where x1 == x2.
    def nextafter(self, x1: Any, x2: Any, /) -> Any:
        r = np.nextafter(x1, x2)
        if r.dtype != np.float16:
            return r
        return np.where(np.equal(x1, x2), np.asarray(x2, r.dtype), r)


def _complex(re: Any, im: Any) -> Any:
    # re + im * 1j would turn an infinite part into NaN: the parts are written directly.
    out = np.empty(np.shape(re), np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


BACKEND = NumpyBackend()

if TYPE_CHECKING:  # mypy checks the class against the contract, for its array type
    _contract: BackendContract[_NDArray] = BACKEND
