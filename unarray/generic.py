"""What generic code needs on immutable and lazy arrays: ``ua.at`` (functional indexed updates) and
``ua.apply_numpy`` (a NumPy-only function applied to any library's arrays), native on every backend.

Code written once for every library cannot write ``x[idx] = v`` (JAX and TensorFlow arrays are
immutable, a dask array is a graph) nor call a NumPy-only routine on a traced or lazy array. These two
functions run each library's own way: JAX's ``.at[]`` and ``jax.pure_callback``, torch's
``index_put_``/``scatter_reduce_`` on a copy, TensorFlow's ``tensor_scatter_nd_*`` and
``tf.numpy_function``, NumPy's ``ufunc.at``, dask's ``where`` and ``delayed``.
"""

from __future__ import annotations

import sys as _sys
from collections.abc import Callable
from typing import Any, Generic, cast

from unarray._dispatch import many, one
from unarray._dispatch import run_as_written as _run_as_written
from unarray._dtypes import DTYPES, DType, canonical_name
from unarray._errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from unarray._lookup import SCALARS
from unarray._names import refuse as _refuse
from unarray._typing import A, Array, DTypeLike, Refused
from unarray.datatypes import astype
from unarray.interop import to

__all__ = ["apply_numpy", "at"]

_UNSET: Any = object()


class at(Generic[A]):  # noqa: N801 - read as a function, like jax's x.at and array-api-extra's at
    """Functional indexed updates: ``ua.at(x, idx).set(v)`` is ``x`` with ``x[idx]`` set to ``v``, as a new array.

        The same on every backend: JAX's ``x.at[idx].set(v)``, array-api-extra's ``at(x, idx).set(v)``, torch's
        ``x.clone().index_put_(...)``. ``ua.at(x)[idx]`` is the same as ``ua.at(x, idx)``.

        Rules:

        - The input is never written: the result is a new array, unless the caller passes ``copy=False``, which
          writes into ``x`` and returns it (only where ``x`` is writable: a NumPy, CuPy or torch array, not a
          read-only NumPy view; JAX, TensorFlow and dask arrays refuse it).
        - ``v`` (a Python scalar or an array broadcastable to ``x[idx]``'s shape) is cast to ``x``'s dtype; the
          result has ``x``'s shape, dtype, library and device.
        - ``idx`` is the standard's indexing (integers, slices, ``None``, ``...``, a boolean mask) plus integer
          arrays. Where an integer array repeats a position, ``add``, ``subtract``, ``multiply``, ``min`` and
          ``max`` apply every occurrence (as ``np.add.at`` and JAX's ``.at[]``); for ``set``, which one wins is
          unspecified.
        - Under ``jax.jit``, ``tf.function`` and on dask the update is traced or stays lazy. A boolean mask of
          ``x``'s shape with one value runs as ``where(mask, ...)`` (the one form a jit can trace, and chunk by
          chunk on dask); other indices on dask run as one NumPy task over the whole array (lazy, one chunk's
          memory). TensorFlow takes basic indexing, one boolean mask, or integer arrays for the leading axes.

        Parameters
        ----------
        x : array
            The array to update (any supported library).
        idx : index, optional
            Where to update; or give it as ``ua.at(x)[idx]``.

        Raises
        ------
        ArgumentError
            No index given, ``copy`` is not None/True/False, or ``copy=False`` on an array that cannot be written.
        UnsupportedError
            An index TensorFlow cannot scatter to.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> x = np.zeros(4)
        >>> ua.at(x, np.array([0, 0, 2])).add(1.0)
        array([2., 0., 1., 0.])
        >>> ua.at(x)[1:3].set(5.0), x
        (array([0., 5., 5., 0.]), array([0., 0., 0., 0.]))
        >>> ua.at(x, x == 0).max(-1.0)
        array([0., 0., 0., 0.])
    """

    def __init__(self, x: A, idx: Any = _UNSET, /) -> None:
        self._x, self._idx = x, idx

    def __getitem__(self, idx: Any) -> at[A]:
        return at(self._x, idx)

    def set(self, value: Any, /, *, copy: bool | None = None, **refused: Refused) -> A:
        """``x`` with ``x[idx] = value``."""
        return self._update("set", value, copy, refused)

    def add(self, value: Any, /, *, copy: bool | None = None, **refused: Refused) -> A:
        """``x`` with ``x[idx] += value`` (every occurrence of a repeated position adds)."""
        return self._update("add", value, copy, refused)

    def subtract(self, value: Any, /, *, copy: bool | None = None, **refused: Refused) -> A:
        """``x`` with ``x[idx] -= value`` (every occurrence of a repeated position subtracts)."""
        return self._update("subtract", value, copy, refused)

    def multiply(self, value: Any, /, *, copy: bool | None = None, **refused: Refused) -> A:
        """``x`` with ``x[idx] *= value`` (every occurrence of a repeated position multiplies)."""
        return self._update("multiply", value, copy, refused)

    def min(self, value: Any, /, *, copy: bool | None = None, **refused: Refused) -> A:
        """``x`` with ``x[idx] = minimum(x[idx], value)``."""
        return self._update("min", value, copy, refused)

    def max(self, value: Any, /, *, copy: bool | None = None, **refused: Refused) -> A:
        """``x`` with ``x[idx] = maximum(x[idx], value)``."""
        return self._update("max", value, copy, refused)

    def _update(self, op: str, value: Any, copy: bool | None, refused: dict[str, Any]) -> A:
        name = f"at.{op}"
        x, idx = self._x, self._idx
        if refused:  # array-api-extra's xp=, JAX's mode=
            _refuse(getattr(at, op), refused, x, op=name)
        if idx is _UNSET:
            raise ArgumentError("no index given; write ua.at(x, idx).set(v) or ua.at(x)[idx].set(v)", op=name)
        if copy not in (None, True, False):
            raise ArgumentError(f"copy must be None, True or False; got {copy!r}", op=name)
        b = one(x, name)
        if copy is False and not b.writable(x):
            raise ArgumentError(f"copy=False writes into x, but this {b.name} array cannot be written in place; "
                                "leave copy unset (the update returns a new array)", op=name, backend=b.name)
        idx = _native_index(b, x, idx, name)
        if type(value) not in SCALARS and one(value, name) is not b:
            value = _handed(b, x, value, name)
        return cast(A, b.at_update(x, idx, op, value, copy is False))


def _native_index(b: Any, x: Any, idx: Any, op: str) -> Any:
    # Arrays in the index (NumPy masks for a torch tensor...) are handed to x's library.
    if isinstance(idx, tuple):
        return tuple(_native_index(b, x, p, op) for p in idx)
    if isinstance(idx, (*SCALARS, slice, type(None), type(Ellipsis))):
        return idx
    if isinstance(idx, list):
        raise ArgumentTypeError("an index may not be a list; pass an integer array (ua.asarray([...]))", op=op)
    if one(idx, op) is b:
        return idx
    try:
        return _handed(b, x, idx, op)
    except DTypeError:  # int64 positions for a library without it (JAX without x64): its own index dtype
        return _handed(b, x, astype(idx, DTYPES[b.default_dtype_names(b.device_of(idx))["indexing"]]), op)


def _handed(b: Any, x: Any, a: Any, op: str) -> Any:
    # Note: host data (a NumPy index or value) goes to x's device, one copy, as x's library's own indexing copies
    # it (CuPy, JAX); an array on an accelerator is only handed over (another device is the caller's to move).
    src = one(a, op)
    here = src.device_of(a)
    want = b.device_of(x) if here.kind == "cpu" and not src.is_tracer(a) else here
    return to(a, b.name, device=None if want == here else want, _op=op)


def apply_numpy(fn: Callable[..., Any], *arrays: Array, shape: tuple[int, ...], dtype: DTypeLike,
                **kwargs: Any) -> Array:
    """Apply ``fn``, a function of NumPy arrays, to arrays of any library: the result is of their library.

        Like array-api-extra's ``lazy_apply``: ``fn`` receives NumPy arrays (read-only: it must not write
        them) and returns one NumPy array of ``shape`` and ``dtype``, stated ahead because a trace or a lazy
        graph needs them before ``fn`` runs. NumPy arrays are passed as they are; torch, CuPy and eager
        TensorFlow arrays are read to the host and the result put back on the first array's device; under
        ``jax.jit`` (and eagerly) it runs through ``jax.pure_callback``, under ``tf.function`` through
        ``tf.numpy_function``, and on dask as one ``dask.delayed`` task (the result stays lazy). No gradient
        flows through ``fn``.

        Parameters
        ----------
        fn : callable
            ``fn(*numpy_arrays, **kwargs) -> numpy array``.
        *arrays : array
            Its array arguments; the first leads (others are handed to its library, as in any call).
        shape : tuple of int
            The shape of ``fn``'s result.
        dtype : dtype
            The dtype of ``fn``'s result (``ua.float32``, or a library's own).
        **kwargs : object
            Passed to ``fn`` unchanged (not arrays).

        Returns
        -------
        out : array
            ``fn``'s result, as an array of the leading array's library.

        Raises
        ------
        ShapeError, DTypeError
            ``fn`` returned another shape or dtype than stated (raised when ``fn`` runs: at once, or when a lazy
            or traced result is computed).
        DTypeError
            ``dtype`` is not one the library holds (float64 in JAX without x64).

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.apply_numpy(np.sort, np.array([3.0, 1.0, 2.0]), shape=(3,), dtype=ua.float64)
        array([1., 2., 3.])
    """
    import numpy as np  # Note: here, not at the top: importing unarray imports no array library

    if not arrays:
        raise ArgumentTypeError("needs at least one array argument", op="apply_numpy")
    b, xs = many("apply_numpy", arrays)
    b.dtype(dtype)  # the library must hold it (its refusal is the typed one)
    name = dtype.name if isinstance(dtype, DType) else canonical_name(dtype)
    if name is None:
        raise DTypeError(f"{dtype!r} is not a dtype", op="apply_numpy", backend=b.name)
    want_shape, want_dtype = tuple(int(n) for n in shape), np.dtype(name)
    label = getattr(fn, "__name__", repr(fn))

    def call(*numpy_arrays: Any) -> Any:
        out = np.asarray(fn(*[read_only(a) for a in numpy_arrays], **kwargs))
        if out.shape != want_shape:
            raise ShapeError(f"{label} returned shape {out.shape}, but shape={want_shape} was stated",
                             op="apply_numpy", backend=b.name)
        if out.dtype != want_dtype:
            raise DTypeError(f"{label} returned dtype {out.dtype}, but dtype={name} was stated; cast inside fn",
                             op="apply_numpy", backend=b.name)
        return out

    return b.apply_numpy(call, xs, want_shape, want_dtype)


def read_only(a: Any) -> Any:
    # What fn receives: a write raises in fn instead of reaching the caller's data.
    import numpy as np

    a = np.asarray(a)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a

# tf.function runs this module's functions as written, however it was imported (_dispatch.run_as_written).
_run_as_written(_sys.modules[__name__])
