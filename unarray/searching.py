"""Searching functions of the array API standard (front end)."""

from __future__ import annotations

from typing import Literal

from unarray import _axes, _hot
from unarray._dispatch import BY_TYPE as _BY_TYPE
from unarray._dispatch import fail as _fail
from unarray._dispatch import many as _many
from unarray._dispatch import one as _one
from unarray._names import refuse as _refuse
from unarray._typing import A, Array, Refused

__all__ = ["argmax", "argmin", "count_nonzero"]


def argmax(x: A, /, *, axis: int | None = None, keepdims: bool = False) -> A:
    """Index of the first maximum along ``axis`` (of the flattened array if ``None``).

        A NaN counts as the maximum: the index of the first NaN is returned.

        Parameters
        ----------
        x : array
            Input array, real-valued.
        axis : int, optional
            The axis to search along; ``None`` (the default) searches the flattened array.
        keepdims : bool
            Keep the reduced axis with length one. Default ``False``.

        Returns
        -------
        out : array
            The indices, in the default index dtype, of the input's library and device.

        Raises
        ------
        EmptyReductionError
            The reduction covers zero elements.
        UnknownArrayTypeError
            ``x`` is not an array of a supported library.
        AxisError
            ``axis`` is out of range for ``x``, or names an axis twice.
        DTypeError
            ``x`` is complex (the standard orders no complex numbers).

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.argmax(np.array([[1, 9, 9], [7, 2, 3]]), axis=1)
        array([1, 0])
        >>> int(ua.argmax(np.array([1.0, np.nan, 5.0])))
        1
    """
    b = _BY_TYPE.get(type(x)) or _one(x, "argmax")
    if axis is not None:
        axis = _axes.one("argmax", b, x, axis)
    try:  # frame("argmax"): its except clause is written by tools/gen_frontend.py
        return b.argmax(x, axis, keepdims)
    except Exception as e:
        raise _fail("argmax", b, e) from e


def argmin(x: A, /, *, axis: int | None = None, keepdims: bool = False) -> A:
    """Index of the first minimum along ``axis``; a NaN counts as the minimum.

        Parameters
        ----------
        x : array
            Input array, real-valued.
        axis : int, optional
            The axis to search along; ``None`` (the default) searches the flattened array.
        keepdims : bool
            Keep the reduced axis with length one. Default ``False``.

        Returns
        -------
        out : array
            The indices, in the default index dtype, of the input's library and device.

        Raises
        ------
        EmptyReductionError
            The reduction covers zero elements.
        UnknownArrayTypeError
            ``x`` is not an array of a supported library.
        AxisError
            ``axis`` is out of range for ``x``, or names an axis twice.
        DTypeError
            ``x`` is complex (the standard orders no complex numbers).

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.argmin(np.array([4, 1, 1, 5]))
        array(1)
    """
    b = _BY_TYPE.get(type(x)) or _one(x, "argmin")
    if axis is not None:
        axis = _axes.one("argmin", b, x, axis)
    try:  # frame("argmin"): its except clause is written by tools/gen_frontend.py
        return b.argmin(x, axis, keepdims)
    except Exception as e:
        raise _fail("argmin", b, e) from e


def count_nonzero(x: A, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                  **refused: Refused) -> A:
    """Number of non-zero elements along ``axis`` (axes as :func:`unarray.sum`).

        Parameters
        ----------
        x : array
            Input array; a complex element is non-zero if either part is, a bool one if it is ``True``.
        axis : int, tuple of int or None
            Axis or axes to count over; ``None`` (the default) counts the whole array.
        keepdims : bool
            Keep the reduced axes with length one. Default ``False``.

        Returns
        -------
        out : array
            The counts, in the default index dtype, of the input's library and device.

        Raises
        ------
        UnknownArrayTypeError
            ``x`` is not an array of a supported library.
        AxisError
            ``axis`` is out of range for ``x``, or names an axis twice.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.count_nonzero(np.array([[0, 1], [2, 3]]), axis=0)
        array([1, 2])
    """
    if refused:
        _refuse(count_nonzero, refused, x)
    b = _one(x, "count_nonzero")
    if axis is not None:
        axis = _axes.many("count_nonzero", b, x, axis)
    try:  # frame("count_nonzero"): its except clause is written by tools/gen_frontend.py
        return b.count_nonzero(x, axis=axis, keepdims=keepdims)
    except Exception as e:
        raise _fail("count_nonzero", b, e) from e

# The C hot path of each call above (unarray/_hot.py); the function stays its reference.
argmax = _hot.fast(argmax, params=("axis", "keepdims"), axis="axis")
argmin = _hot.fast(argmin, params=("axis", "keepdims"), axis="axis")


# --- generated by tools/gen_frontend.py: begin (do not edit by hand) ---


def nonzero(x: A, /, **refused: Refused) -> tuple[A, ...]:
    """Returns the indices of the array elements which are non-zero.

    The array API standard's ``nonzero`` (2024.12), run by the backend of the array arguments: the result is
    that library's array, on their device.

    Parameters
    ----------
    x : array
        input array. Must have a positive rank.

    Returns
    -------
    out : Tuple[array, ...]
        a tuple of ``k`` arrays, one for each dimension of ``x`` and each of size ``n`` (where ``n`` is the
        total number of non-zero elements), containing the indices of the non-zero elements in that
        dimension.

    Raises
    ------
    UnknownArrayTypeError
        If an argument is not an array of a supported library.
    ArgumentTypeError
        If an argument has a wrong type (for example only Python scalars).
    DTypeError
        If the backend has no kernel for the dtype (for example float64 on a TPU).
    ShapeError
        If the shapes do not fit the function.
    ArgumentError
        If the backend rejects an argument's value.

    Notes
    -----
    Backend support (from the deviation table, ``unarray.conformance.deviations``): runs on NumPy, PyTorch, JAX,
    CuPy, TensorFlow and Dask arrays, each through its own library (Numba arrays take part in handoff only).
    Known deviations of this function: mlx on every platform: MLX has no data-dependent output shapes: computed
    on the host through NumPy eagerly, refused inside mx.compile (UnsupportedError). The table's rows for every
    function (a platform's or a library's missing dtypes) hold too.

    Examples
    --------
    >>> import numpy as np
    >>> import unarray as ua
    >>> ua.nonzero(np.array([[0, 3], [4, 0]]))
    (array([0, 1]), array([1, 0]))
    """
    if refused:
        _refuse(nonzero, refused, x)
    b = _one(x, "nonzero")
    try:
        return b.nonzero(x)
    except Exception as e:
        raise _fail("nonzero", b, e) from e


def searchsorted(
    x1: A,
    x2: Array | int | float,
    /,
    *,
    side: Literal["left", "right"] = 'left',
    sorter: Array | None = None,
    **refused: Refused,
) -> A:
    """Finds the indices into ``x1`` such that, if the corresponding elements in ``x2`` were inserted before the
    indices, the order of ``x1``, when sorted in ascending order, would be preserved.

    The array API standard's ``searchsorted`` (2024.12), run by the backend of the array arguments: the result
    is that library's array, on their device.

    Parameters
    ----------
    x1 : array
        input array. Must be a one-dimensional array.
    x2 : array
        array containing search values. Should have a real-valued data type.
    side : Literal['left', 'right']
        argument controlling which index is returned if a value lands exactly on an edge. Default:
        ``'left'``.
    sorter : Optional[array]
        array of indices that sort ``x1`` in ascending order. Default: ``None``.

    Returns
    -------
    out : array
        an array of indices with the same shape as ``x2``.

    Raises
    ------
    UnknownArrayTypeError
        If an argument is not an array of a supported library.
    ArgumentTypeError
        If an argument has a wrong type (for example only Python scalars).
    DTypeError
        If the backend has no kernel for the dtype (for example float64 on a TPU).
    ShapeError
        If the shapes do not fit the function.
    ArgumentError
        If the backend rejects an argument's value.

    Notes
    -----
    One order on every backend, the one ``ua.sort`` gives: NaN sorts after +inf (a NaN in ``x2`` goes after
    every non-NaN value of ``x1``, or after all of ``x1`` with ``side='right'``), -0.0 equals +0.0.

    Backend support (from the deviation table, ``unarray.conformance.deviations``): runs on NumPy, PyTorch, JAX,
    CuPy, TensorFlow and Dask arrays, each through its own library (Numba arrays take part in handoff only).
    Known deviations of this function: none. The table's rows for every function (a platform's or a library's
    missing dtypes) hold too.

    Examples
    --------
    >>> import numpy as np
    >>> import unarray as ua
    >>> ua.searchsorted(np.array([1.0, 2.0, 4.0]), np.array([0.5, 2.0, 5.0]))
    array([0, 1, 3])
    """
    if refused:
        _refuse(searchsorted, refused, x1)
    b, (x1, x2, sorter) = _many("searchsorted", (x1, x2, sorter), skip_none=True)
    try:
        return b.searchsorted(x1, x2, side=side, sorter=sorter)
    except Exception as e:
        raise _fail("searchsorted", b, e) from e


def where(condition: A, x1: Array | complex, x2: Array | complex, /, **refused: Refused) -> A:
    """Returns elements chosen from ``x1`` or ``x2`` depending on ``condition``.

    The array API standard's ``where`` (2024.12), run by the backend of the array arguments: the result is that
    library's array, on their device.

    Parameters
    ----------
    condition : array
        when ``True``, yield ``x1_i``; otherwise, yield ``x2_i``.
    x1 : Union[array, int, float, complex, bool]
        first input array. Must be compatible with ``condition`` and ``x2`` (see broadcasting).
    x2 : Union[array, int, float, complex, bool]
        second input array. Must be compatible with ``condition`` and ``x1`` (see broadcasting).

    Returns
    -------
    out : array
        an array with elements from ``x1`` where ``condition`` is ``True``, and elements from ``x2``
        elsewhere.

    Raises
    ------
    UnknownArrayTypeError
        If an argument is not an array of a supported library.
    ArgumentTypeError
        If an argument has a wrong type (for example only Python scalars).
    DTypeError
        If the backend has no kernel for the dtype (for example float64 on a TPU).
    ShapeError
        If the shapes do not fit the function.
    ArgumentError
        If the backend rejects an argument's value.

    Notes
    -----
    Backend support (from the deviation table, ``unarray.conformance.deviations``): runs on NumPy, PyTorch, JAX,
    CuPy, TensorFlow and Dask arrays, each through its own library (Numba arrays take part in handoff only).
    Known deviations of this function: none. The table's rows for every function (a platform's or a library's
    missing dtypes) hold too.

    Examples
    --------
    >>> import numpy as np
    >>> import unarray as ua
    >>> ua.where(np.array([True, False, True]), np.array([1.0, 2.0, 3.0]), -1.0)
    array([ 1., -1.,  3.])
    """
    if refused:
        _refuse(where, refused, condition)
    b, (condition, x1, x2) = _many("where", (condition, x1, x2), skip_none=True)
    try:
        return b.where(condition, x1, x2)
    except Exception as e:
        raise _fail("where", b, e) from e


__all__ += [
    "nonzero", "searchsorted", "where",
]
# --- generated by tools/gen_frontend.py: end ---
