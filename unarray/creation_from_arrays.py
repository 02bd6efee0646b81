"""Creation functions with an array argument: ``*_like``, ``tril``, ``triu``, ``meshgrid``.

They dispatch on that argument like every other op (the result is its library's array, on its
device unless ``device=`` is given); the creation functions without one are in unarray/creation.py.
"""

from __future__ import annotations

from typing import Any

from unarray import _docs, _shapes
from unarray._dispatch import call as _call
from unarray._dispatch import fail as _fail
from unarray._dispatch import many as _many
from unarray._dispatch import one as _one
from unarray._dtypes import check_int_scalar
from unarray._errors import ShapeError
from unarray._names import refuse as _refuse
from unarray._typing import A, Array, DeviceLike, DTypeLike, Refused

__all__ = ["empty_like", "full_like", "meshgrid", "ones_like", "tril", "triu", "zeros_like"]


def _matrices(op: str, x: Any) -> Any:
    if len(getattr(x, "shape", (0, 0))) < 2:
        raise ShapeError(f"{op} takes a stack of matrices (..., M, N); got shape {tuple(x.shape)}; "
                         f"reshape a vector first, e.g. x[None, :]", op=op, backend=_one(x, op).name)
    return x


def _like(fn: Any, refused: dict[str, Any], x: Array, dtype: Any, device: Any, call: Any) -> Array:
    if refused:
        _refuse(fn, refused, x)
    op = fn.__name__
    b = _one(x, op)
    _shapes.addressable(op, b.name, x.shape, _shapes.itemsize(dtype, _shapes.itemsize(x.dtype)))
    try:  # frame(op): its except clause is the template's (tools/gen_frontend.py)
        return call(b, b.dtype(dtype), None if device is None else b.native_device(device))
    except Exception as e:
        raise _fail(op, b, e) from e


def zeros_like(x: A, /, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None, **refused: Refused) -> A:
    """Zeros with the shape of ``x`` (and its dtype and device unless given).

        Parameters
        ----------
        {x_like}
        {dtype_like}
        {device_like}

        Returns
        -------
        {out_x_library}

        Raises
        ------
        {unknown_x}
        {dtype_unknown}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.zeros_like(np.ones((2, 2), dtype=np.int8))
        array([[0, 0],
               [0, 0]], dtype=int8)
    """
    return _like(zeros_like, refused, x, dtype, device, lambda b, dt, dev: b.zeros_like(x, dtype=dt, device=dev))


def ones_like(x: A, /, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None, **refused: Refused) -> A:
    """Ones with the shape of ``x`` (and its dtype and device unless given).

        Parameters
        ----------
        {x_like}
        {dtype_like}
        {device_like}

        Returns
        -------
        {out_x_library}

        Raises
        ------
        {unknown_x}
        {dtype_unknown}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.ones_like(np.zeros(2, dtype=np.float32))
        array([1., 1.], dtype=float32)
    """
    return _like(ones_like, refused, x, dtype, device, lambda b, dt, dev: b.ones_like(x, dtype=dt, device=dev))


def empty_like(x: A, /, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None, **refused: Refused) -> A:
    """An uninitialised array with the shape of ``x`` (and its dtype and device unless given).

        Parameters
        ----------
        {x_like}
        {dtype_like}
        {device_like}

        Returns
        -------
        out : array
            An array of ``x``'s library whose values are unspecified.

        Raises
        ------
        {unknown_x}
        {dtype_unknown}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.empty_like(np.ones((2, 3), dtype=np.int16)).shape
        (2, 3)
    """
    return _like(empty_like, refused, x, dtype, device, lambda b, dt, dev: b.empty_like(x, dtype=dt, device=dev))


def full_like(x: A, /, fill_value: bool | int | float | complex, *, dtype: DTypeLike | None = None,
              device: DeviceLike | None = None, **refused: Refused) -> A:
    """``fill_value`` with the shape of ``x`` (and its dtype and device unless given).

        Parameters
        ----------
        {x_like}
        {fill_value}
        {dtype_like}
        {device_like}

        Returns
        -------
        {out_x_library}

        Raises
        ------
        {unknown_x}
        {dtype_unknown}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.full_like(np.ones(2, dtype=np.int8), 3)
        array([3, 3], dtype=int8)
    """
    if refused:
        _refuse(full_like, refused, x)
    if type(fill_value) is int:
        check_int_scalar("full_like", None, fill_value, x.dtype if dtype is None else dtype)
    return _like(full_like, {}, x, dtype, device,
                 lambda b, dt, dev: b.full_like(x, fill_value, dtype=dt, device=dev))


def tril(x: A, /, *, k: int = 0, **refused: Refused) -> A:
    """Lower triangle of each matrix ``(..., M, N)``; elements above the ``k``-th diagonal zeroed.

        Parameters
        ----------
        {x_matrix}
        k : int
            The diagonal above which to zero: 0 the main one, positive above it, negative below. Default ``0``.

        Returns
        -------
        {out_like_x}

        Raises
        ------
        {unknown_x}
        {fewer_than_two_dims}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.tril(np.ones((3, 3)), k=-1)
        array([[0., 0., 0.],
               [1., 0., 0.],
               [1., 1., 0.]])
    """
    if refused:
        _refuse(tril, refused, x)
    return _like(tril, {}, _matrices("tril", x), None, None, lambda b, dt, dev: b.tril(x, k=k))


def triu(x: A, /, *, k: int = 0, **refused: Refused) -> A:
    """Upper triangle of each matrix ``(..., M, N)``; elements below the ``k``-th diagonal zeroed.

        Parameters
        ----------
        {x_matrix}
        k : int
            The diagonal below which to zero: 0 the main one, positive above it, negative below. Default ``0``.

        Returns
        -------
        {out_like_x}

        Raises
        ------
        {unknown_x}
        {fewer_than_two_dims}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.triu(np.ones((2, 3)), k=1)
        array([[0., 1., 1.],
               [0., 0., 1.]])
    """
    if refused:
        _refuse(triu, refused, x)
    return _like(triu, {}, _matrices("triu", x), None, None, lambda b, dt, dev: b.triu(x, k=k))


def meshgrid(*arrays: A, indexing: str = "xy", **refused: Refused) -> tuple[A, ...]:
    """Coordinate matrices from 1-D coordinate arrays, as a tuple (2025.12).

        Parameters
        ----------
        *arrays : array
            1-D coordinate arrays, of one library, dtype and device.
        indexing : str
            ``"xy"`` (the default: the first two outputs' axes swapped, Cartesian) or ``"ij"`` (matrix).

        Returns
        -------
        out : tuple of array
            One array per input, each of the broadcast grid's shape.

        Raises
        ------
        UnknownArrayTypeError
            An input is not an array of a supported library.
        ArgumentError
            ``indexing`` is neither ``"xy"`` nor ``"ij"``.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> xs, ys = ua.meshgrid(np.array([1, 2]), np.array([3, 4, 5]))
        >>> xs.shape, ys[:, 0]
        ((3, 2), array([3, 4, 5]))
    """
    if refused:
        _refuse(meshgrid, refused, arrays)
    b, xs = _many("meshgrid", arrays)
    return tuple(_call("meshgrid", b, b.meshgrid, *xs, indexing=indexing))

_docs.fill(globals())
