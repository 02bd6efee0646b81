"""Manipulation functions: ``permute_dims`` (hot op) and the rest of the category."""

from __future__ import annotations

from unarray import _hot, _shapes
from unarray._dispatch import BY_TYPE as _BY_TYPE
from unarray._dispatch import fail as _fail
from unarray._dispatch import many as _many
from unarray._dispatch import one as _one
from unarray._names import refuse as _refuse
from unarray._typing import A, Array, Refused

__all__ = ["broadcast_shapes", "expand_dims", "permute_dims"]


def permute_dims(x: A, /, axes: tuple[int, ...]) -> A:
    """Permute the axes of ``x``: output axis ``i`` is input axis ``axes[i]`` (negative allowed).

        Returns a view where the backend has views (NumPy, torch, CuPy); JAX and
        TensorFlow return a new array.

        Parameters
        ----------
        x : array
            Input array.
        axes : tuple of int
            A permutation of ``range(x.ndim)``; negative entries count from the end.

        Returns
        -------
        out : array
            ``x`` with its axes reordered, of the input's library and device.

        Raises
        ------
        UnknownArrayTypeError
            ``x`` is not an array of a supported library.
        ArgumentError
            ``axes`` is not a permutation of the array's axes.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.permute_dims(np.zeros((2, 3, 4)), (2, 0, -2)).shape
        (4, 2, 3)
    """
    b = _BY_TYPE.get(type(x)) or _one(x, "permute_dims")
    try:  # frame("permute_dims"): its except clause is written by tools/gen_frontend.py
        return b.permute_dims(x, axes)
    except Exception as e:
        raise _fail("permute_dims", b, e) from e


# The C hot path of each call above (unarray/_hot.py); the function stays its reference.
permute_dims = _hot.fast(permute_dims, params=("axes",))


def expand_dims(x: A, /, axis: int | tuple[int, ...] = 0, **refused: Refused) -> A:
    """Insert axes of length one at ``axis`` (an int or a tuple, positions in the result).

        Every backend refuses an axis outside ``[-N, N)`` (``N`` the result's rank) and a repeated axis (-1 and
        N-1 name the same one) with :class:`AxisError`, before any backend runs.

        Parameters
        ----------
        x : array
            Input array.
        axis : int or tuple of int
            Position(s) of the new axes in the result. Default ``0``.

        Returns
        -------
        out : array
            ``x`` with ``len(axis)`` more axes, of the input's library and device.

        Raises
        ------
        UnknownArrayTypeError
            ``x`` is not an array of a supported library.
        AxisError
            An axis is outside ``[-N, N)`` or repeated.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.expand_dims(np.zeros((2, 3)), axis=(0, -1)).shape
        (1, 2, 3, 1)
    """
    if refused:
        _refuse(expand_dims, refused, x)
    b = _one(x, "expand_dims")
    _check_new_axes(b.name, len(x.shape), axis)
    try:  # frame("expand_dims"): its except clause is written by tools/gen_frontend.py
        return b.expand_dims(x, axis=axis)
    except Exception as e:
        raise _fail("expand_dims", b, e) from e


def _check_new_axes(backend: str, ndim: int, axis: int | tuple[int, ...]) -> None:
    from unarray._errors import AxisError

    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = ndim + len(axes)
    bad = [a for a in axes if not -n <= a < n]
    if bad:
        raise AxisError(f"axis {bad[0]} is out of range for a result of {n} dimensions; use -{n} to {n - 1}",
                        op="expand_dims", backend=backend)
    if len({a % n for a in axes}) != len(axes):
        raise AxisError(f"axis={axis!r} names one result axis twice (negative axes count from the end); "
                        "give each new axis once", op="expand_dims", backend=backend)


def broadcast_shapes(*shapes: tuple[int, ...], **refused: Refused) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to (no arrays involved).

        Parameters
        ----------
        *shapes : tuple of int
            The shapes to broadcast against one another.

        Returns
        -------
        out : tuple of int
            The broadcast shape; ``()`` for no shapes.

        Raises
        ------
        ShapeError
            Two shapes have different sizes, neither 1, on one axis.

        Examples
        --------
        >>> import unarray as ua
        >>> ua.broadcast_shapes((2, 1, 4), (3, 1))
        (2, 3, 4)
    """
    if refused:
        _refuse(broadcast_shapes, refused, None)
    from unarray._errors import ShapeError

    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i and s[i] != 1}
        if len(sizes) > 1:
            raise ShapeError(f"shapes {shapes} do not broadcast (axis {i}: {sorted(sizes)})", op="broadcast_shapes")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


# --- generated by tools/gen_frontend.py: begin (do not edit by hand) ---


def broadcast_arrays(*arrays: A, **refused: Refused) -> tuple[A, ...]:
    """Broadcasts one or more arrays against one another.

    The array API standard's ``broadcast_arrays`` (2025.12), run by the backend of the array arguments: the
    result is that library's array, on their device.

    Parameters
    ----------
    arrays : array
        an arbitrary number of to-be broadcasted arrays.

    Returns
    -------
    out : Tuple[array, ...]
        tuple of broadcasted arrays.

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
    >>> a, b = ua.broadcast_arrays(np.array([1, 2, 3]), np.array([[10], [20]]))
    >>> a.shape, b.shape
    ((2, 3), (2, 3))
    """
    if refused:
        _refuse(broadcast_arrays, refused, arrays)
    b, xs = _many("broadcast_arrays", arrays)
    try:
        return tuple(b.broadcast_arrays(*xs))
    except Exception as e:
        raise _fail("broadcast_arrays", b, e) from e


def broadcast_to(x: A, /, shape: tuple[int, ...], **refused: Refused) -> A:
    """Broadcasts an array to a specified shape.

    The array API standard's ``broadcast_to`` (2025.12), run by the backend of the array arguments: the result
    is that library's array, on their device.

    Parameters
    ----------
    x : array
        array to broadcast.
    shape : Tuple[int, ...]
        array shape.

    Returns
    -------
    out : array
        an array having the specified shape.

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
    A shape of more bytes than a 64-bit offset reaches raises ``ArraySizeError`` before the backend is asked, on
    every backend.

    Backend support (from the deviation table, ``unarray.conformance.deviations``): runs on NumPy, PyTorch, JAX,
    CuPy, TensorFlow and Dask arrays, each through its own library (Numba arrays take part in handoff only).
    Known deviations of this function: none. The table's rows for every function (a platform's or a library's
    missing dtypes) hold too.

    Examples
    --------
    >>> import numpy as np
    >>> import unarray as ua
    >>> ua.broadcast_to(np.array([1, 2, 3]), (2, 3))
    array([[1, 2, 3],
           [1, 2, 3]])
    """
    if refused:
        _refuse(broadcast_to, refused, x)
    b = _one(x, "broadcast_to")
    _shapes.addressable("broadcast_to", b.name, shape, _shapes.itemsize(x.dtype))
    try:
        return b.broadcast_to(x, shape)
    except Exception as e:
        raise _fail("broadcast_to", b, e) from e


def concat(arrays: tuple[A, ...] | list[A], /, *, axis: int | None = 0, **refused: Refused) -> A:
    """Joins a sequence of arrays along an existing axis.

    The array API standard's ``concat`` (2025.12), run by the backend of the array arguments: the result is that
    library's array, on their device.

    Parameters
    ----------
    arrays : Union[Tuple[array, ...], List[array]]
        input arrays to join. The arrays **must** have the same shape, except in the dimension specified by
        ``axis``.
    axis : Optional[int]
        axis along which to join the arrays. If ``axis`` is ``None``, arrays **must** be flattened before
        concatenation. Default: ``0``.

    Returns
    -------
    out : array
        an output array containing the concatenated values.

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
    >>> ua.concat([np.array([[1, 2]]), np.array([[3, 4]])], axis=0)
    array([[1, 2],
           [3, 4]])
    """
    if refused:
        _refuse(concat, refused, arrays)
    b, arrays = _many("concat", arrays)
    try:
        return b.concat(arrays, axis=axis)
    except Exception as e:
        raise _fail("concat", b, e) from e


def flip(x: A, /, *, axis: int | tuple[int, ...] | None = None, **refused: Refused) -> A:
    """Reverses the order of elements in an array along the given axis.

    The array API standard's ``flip`` (2025.12), run by the backend of the array arguments: the result is that
    library's array, on their device.

    Parameters
    ----------
    x : array
        input array.
    axis : Optional[Union[int, Tuple[int, ...]]]
        axis (or axes) along which to reverse elements. If ``axis`` is ``None``, the function **must** flip
        all input array axes. Default: ``None``.

    Returns
    -------
    out : array
        an output array.

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
    >>> ua.flip(np.array([[1, 2, 3], [4, 5, 6]]), axis=1)
    array([[3, 2, 1],
           [6, 5, 4]])
    """
    if refused:
        _refuse(flip, refused, x)
    b = _one(x, "flip")
    try:
        return b.flip(x, axis=axis)
    except Exception as e:
        raise _fail("flip", b, e) from e


def moveaxis(x: A, source: int | tuple[int, ...], destination: int | tuple[int, ...], /, **refused: Refused) -> A:
    """Moves array axes to new positions, while leaving other axes in their original positions.

    The array API standard's ``moveaxis`` (2025.12), run by the backend of the array arguments: the result is
    that library's array, on their device.

    Parameters
    ----------
    x : array
        input array.
    source : Union[int, Tuple[int, ...]]
        axis (or axes) to move.
    destination : Union[int, Tuple[int, ...]]
        axis (or axes) defining the desired position(s) for each respective ``source`` axis index.

    Returns
    -------
    out : array
        an array containing reordered axes.

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
    >>> ua.moveaxis(np.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    if refused:
        _refuse(moveaxis, refused, x)
    b = _one(x, "moveaxis")
    try:
        return b.moveaxis(x, source, destination)
    except Exception as e:
        raise _fail("moveaxis", b, e) from e


def repeat(x: A, repeats: int | Array, /, *, axis: int | None = None, **refused: Refused) -> A:
    """Repeats each element of an array a specified number of times on a per-element basis.

    The array API standard's ``repeat`` (2025.12), run by the backend of the array arguments: the result is that
    library's array, on their device.

    Parameters
    ----------
    x : array
        input array containing elements to repeat.
    repeats : Union[int, array]
        the number of repetitions for each element.
    axis : Optional[int]
        the axis along which to repeat elements. Default: ``None``.

    Returns
    -------
    out : array
        an output array containing repeated elements.

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
    Known deviations of this function: Dask on every platform: dask repeats by an int only: counts given as an
    array make a data-dependent shape (UnsupportedError; compute the counts first). The table's rows for every
    function (a platform's or a library's missing dtypes) hold too.

    Examples
    --------
    >>> import numpy as np
    >>> import unarray as ua
    >>> ua.repeat(np.array([1, 2, 3]), 2)
    array([1, 1, 2, 2, 3, 3])
    """
    if refused:
        _refuse(repeat, refused, x)
    b, (x, repeats) = _many("repeat", (x, repeats), skip_none=True)
    try:
        return b.repeat(x, repeats, axis=axis)
    except Exception as e:
        raise _fail("repeat", b, e) from e


def reshape(x: A, /, shape: tuple[int, ...], *, copy: bool | None = None, **refused: Refused) -> A:
    """Reshapes an array without changing its data.

    The array API standard's ``reshape`` (2025.12), run by the backend of the array arguments: the result is
    that library's array, on their device.

    Parameters
    ----------
    x : array
        input array to reshape.
    shape : Tuple[int, ...]
        a new shape compatible with the original shape.
    copy : Optional[bool]
        whether or not to copy the input array. Default: ``None``.

    Returns
    -------
    out : array
        an output array.

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
    ``shape`` is checked once, before the backend is asked: a negative size other than one -1, more than one -1,
    -1 next to a zero size (any size would fit) and a product other than ``x``'s size raise ``ShapeError``
    naming both shapes, on every backend.

    Backend support (from the deviation table, ``unarray.conformance.deviations``): runs on NumPy, PyTorch, JAX,
    CuPy, TensorFlow and Dask arrays, each through its own library (Numba arrays take part in handoff only).
    Known deviations of this function: none. The table's rows for every function (a platform's or a library's
    missing dtypes) hold too.

    Examples
    --------
    >>> import numpy as np
    >>> import unarray as ua
    >>> ua.reshape(np.arange(6), (2, 3))
    array([[0, 1, 2],
           [3, 4, 5]])
    """
    if refused:
        _refuse(reshape, refused, x)
    b = _one(x, "reshape")
    _shapes.reshape("reshape", b.name, x.shape, shape)
    try:
        return b.reshape(x, shape, copy=copy)
    except Exception as e:
        raise _fail("reshape", b, e) from e


def roll(
    x: A,
    /,
    shift: int | tuple[int, ...],
    *,
    axis: int | tuple[int, ...] | None = None,
    **refused: Refused,
) -> A:
    """Rolls array elements along a specified axis.

    The array API standard's ``roll`` (2025.12), run by the backend of the array arguments: the result is that
    library's array, on their device.

    Parameters
    ----------
    x : array
        input array.
    shift : Union[int, Tuple[int, ...]]
        number of places by which the elements are shifted.
    axis : Optional[Union[int, Tuple[int, ...]]]
        axis (or axes) along which elements to shift. Default: ``None``.

    Returns
    -------
    out : array
        an output array.

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
    >>> ua.roll(np.array([1, 2, 3, 4]), 1)
    array([4, 1, 2, 3])
    """
    if refused:
        _refuse(roll, refused, x)
    b = _one(x, "roll")
    try:
        return b.roll(x, shift, axis=axis)
    except Exception as e:
        raise _fail("roll", b, e) from e


def squeeze(x: A, /, axis: int | tuple[int, ...], **refused: Refused) -> A:
    """Removes singleton axes from ``x``.

    The array API standard's ``squeeze`` (2025.12), run by the backend of the array arguments: the result is
    that library's array, on their device.

    Parameters
    ----------
    x : array
        input array.
    axis : Union[int, Tuple[int, ...]]
        axis (or axes) to squeeze.

    Returns
    -------
    out : array
        an output array.

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
    >>> ua.squeeze(np.ones((1, 3, 1)), axis=(0, 2)).shape
    (3,)
    """
    if refused:
        _refuse(squeeze, refused, x)
    b = _one(x, "squeeze")
    try:
        return b.squeeze(x, axis)
    except Exception as e:
        raise _fail("squeeze", b, e) from e


def stack(arrays: tuple[A, ...] | list[A], /, *, axis: int = 0, **refused: Refused) -> A:
    """Joins a sequence of arrays along a new axis.

    The array API standard's ``stack`` (2025.12), run by the backend of the array arguments: the result is that
    library's array, on their device.

    Parameters
    ----------
    arrays : Union[Tuple[array, ...], List[array]]
        input arrays to join. Each array **must** have the same shape.
    axis : int
        axis along which to join the arrays. Default: ``0``.

    Returns
    -------
    out : array
        an output array.

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
    >>> ua.stack([np.array([1, 2]), np.array([3, 4])], axis=1)
    array([[1, 3],
           [2, 4]])
    """
    if refused:
        _refuse(stack, refused, arrays)
    b, arrays = _many("stack", arrays)
    try:
        return b.stack(arrays, axis=axis)
    except Exception as e:
        raise _fail("stack", b, e) from e


def tile(x: A, repetitions: tuple[int, ...], /, **refused: Refused) -> A:
    """Constructs an array by tiling an input array.

    The array API standard's ``tile`` (2025.12), run by the backend of the array arguments: the result is that
    library's array, on their device.

    Parameters
    ----------
    x : array
        input array.
    repetitions : Tuple[int, ...]
        number of repetitions along each axis.

    Returns
    -------
    out : array
        a tiled output array.

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
    >>> ua.tile(np.array([1, 2]), (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    if refused:
        _refuse(tile, refused, x)
    b = _one(x, "tile")
    try:
        return b.tile(x, repetitions)
    except Exception as e:
        raise _fail("tile", b, e) from e


def unstack(x: A, /, *, axis: int = 0, **refused: Refused) -> tuple[A, ...]:
    """Splits an array into a sequence of arrays along the given axis.

    The array API standard's ``unstack`` (2025.12), run by the backend of the array arguments: the result is
    that library's array, on their device.

    Parameters
    ----------
    x : array
        input array.
    axis : int
        axis along which to split an array. Default: ``0``.

    Returns
    -------
    out : Tuple[array, ...]
        tuple of slices along the given dimension.

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
    >>> ua.unstack(np.array([[1, 2], [3, 4]]), axis=1)
    (array([1, 3]), array([2, 4]))
    """
    if refused:
        _refuse(unstack, refused, x)
    b = _one(x, "unstack")
    try:
        return b.unstack(x, axis=axis)
    except Exception as e:
        raise _fail("unstack", b, e) from e


__all__ += [
    "broadcast_arrays", "broadcast_to", "concat", "flip", "moveaxis", "repeat", "reshape", "roll", "squeeze",
    "stack", "tile", "unstack",
]
# --- generated by tools/gen_frontend.py: end ---
