"""Linear algebra functions of the main namespace: ``matmul`` and
``matrix_transpose`` (hot ops), ``tensordot`` and ``vecdot``.

Float32 products follow the precision policy (``ua.precision``): under the
default ``"highest"`` they are float32-accurate on every backend and device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from unarray import _docs, _hot, _shapes
from unarray._dispatch import BY_TYPE as _BY_TYPE
from unarray._dispatch import call as _call
from unarray._dispatch import fail as _fail
from unarray._dispatch import one as _one
from unarray._dispatch import pair as _pair
from unarray._errors import ShapeError
from unarray._names import refuse as _refuse
from unarray._precision import POLICIES as _POLICIES
from unarray._precision import Policy
from unarray._precision import resolve as _resolve
from unarray._precision import scope as _scope
from unarray._typing import A, Array, Refused

__all__ = ["matmul", "matrix_transpose"]


def matmul(x1: A, x2: Array, /, *, precision: Policy | None = None) -> A:
    """Matrix product with the standard's broadcasting and promotion.

        Parameters
        ----------
        x1 : array
            ``(..., M, K)``, or ``(K,)`` (treated as ``(1, K)`` and the axis removed).
        x2 : array
            ``(..., K, N)``, or ``(K,)`` (treated as ``(K, 1)`` and the axis removed).
        precision : str, optional
            ``"highest"``, ``"tf32"``, ``"bf16"`` or ``"fastest"`` for this call; by default the scope's
            policy (:class:`unarray.precision`), ``"highest"``.

        Returns
        -------
        out : array
            ``(..., M, N)`` with the batch dimensions broadcast, in the promoted dtype of ``x1`` and ``x2``;
            the leading argument's library and device.

        Raises
        ------
        ShapeError
            The inner dimensions differ, an operand is 0-d, or batch dimensions do not broadcast; the
            message names both shapes, on every backend.
        DeviceMismatchError
            The operands live on different devices.
        UnknownArrayTypeError
            An operand is not an array of a supported library.
        ArgumentError
            ``precision`` is not a known policy.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> a = np.arange(6, dtype=np.int8).reshape(2, 3)
        >>> b = np.ones(3, dtype=np.int16)
        >>> ua.matmul(a, b)
        array([ 3, 12], dtype=int16)
    """
    b = _BY_TYPE.get(type(x1))
    if b is None or type(x2) is not type(x1) or x1.dtype is not x2.dtype or \
            (precision is not None and precision not in _POLICIES):
        return _matmul_general(x1, x2, precision)  # (two dtypes: _pair promotes them by unarray's rule)
    # the scope is read here, once, and the policy passed down
    try:  # frame("matmul"): its except clause is written by tools/gen_frontend.py
        return b.matmul(x1, x2, _scope() if precision is None else precision)
    except Exception as e:
        raise _fail("matmul", b, _matmul_refusal(b, x1, x2, e)) from e


def _matmul_refusal(b: Any, x1: Array, x2: Array, e: Exception) -> BaseException:
    # The shape rule's error where the shapes break it, else the native one: checked only once the backend
    # refused, so the common call pays nothing for it.
    s1, s2 = getattr(x1, "shape", None), getattr(x2, "shape", None)
    if s1 is not None and s2 is not None:
        try:
            _shapes.matmul("matmul", b.name, s1, s2)
        except ShapeError as shape_error:
            return shape_error
    return e


def _matmul_general(x1: A, x2: Array, precision: Policy | None) -> A:
    b, x1, x2 = _pair("matmul", x1, x2)
    try:  # frame("matmul"): its except clause is written by tools/gen_frontend.py
        return b.matmul(x1, x2, _resolve(precision))
    except Exception as e:
        raise _fail("matmul", b, _matmul_refusal(b, x1, x2, e)) from e


def matrix_transpose(x: A, /) -> A:
    """Transpose the last two axes: ``(..., M, N)`` to ``(..., N, M)``.

        Parameters
        ----------
        {x_matrix}

        Returns
        -------
        out : array
            ``x`` with its last two axes swapped (a view where the backend has views), of the input's library
            and device.

        Raises
        ------
        {unknown_x}
        {fewer_than_two_dims}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.matrix_transpose(np.zeros((5, 2, 3))).shape
        (5, 3, 2)
    """
    b = _BY_TYPE.get(type(x)) or _one(x, "matrix_transpose")
    try:  # frame("matrix_transpose"): its except clause is written by tools/gen_frontend.py
        return b.matrix_transpose(x)
    except Exception as e:
        raise _fail("matrix_transpose", b, e) from e


# The C hot path of each call above (unarray/_hot.py); the function stays its reference.
matmul = _hot.fast(matmul, arrays=2, policy=True)
matrix_transpose = _hot.fast(matrix_transpose)


# --- generated by tools/gen_frontend.py: begin (do not edit by hand) ---


def tensordot(x1: A, x2: Array, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2, **refused: Refused) -> A:
    """Returns a tensor contraction of ``x1`` and ``x2`` over specific axes.

    The array API standard's ``tensordot`` (2025.12), run by the backend of the array arguments: the result is
    that library's array, on their device.

    Parameters
    ----------
    x1 : array
        first input array. **Should** have a numeric data type.
    x2 : array
        second input array. **Should** have a numeric data type. Corresponding contracted axes of ``x1`` and
        ``x2`` **must** be equal.
    axes : Union[int, Tuple[Sequence[int], Sequence[int]]]
        number of axes to contract or explicit sequences of axis indices for ``x1`` and ``x2``,
        respectively.

    Returns
    -------
    out : array
        an array containing the tensor contraction.

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
    Contracted sizes that differ raise ``ShapeError`` naming both shapes, on every backend.

    Backend support (from the deviation table, ``unarray.conformance.deviations``): runs on NumPy, PyTorch, JAX,
    CuPy, TensorFlow, Dask and MLX arrays, each through its own library (Numba arrays take part in handoff
    only). Known deviations of this function: none. The table's rows for every function (a platform's or a
    library's missing dtypes) hold too.

    Examples
    --------
    >>> import numpy as np
    >>> import unarray as ua
    >>> ua.tensordot(np.ones((2, 3)), np.ones((3, 4)), axes=1)
    array([[3., 3., 3., 3.],
           [3., 3., 3., 3.]])
    """
    if refused:
        _refuse(tensordot, refused, x1)
    b, x1, x2 = _pair("tensordot", x1, x2)
    _shapes.tensordot("tensordot", b.name, x1.shape, x2.shape, axes)
    return _call("tensordot", b, b.tensordot, x1, x2, axes=axes, policy=_scope())


def vecdot(x1: A, x2: Array, /, *, axis: int = -1, **refused: Refused) -> A:
    """Computes the (vector) dot product of two arrays.

    The array API standard's ``vecdot`` (2025.12), run by the backend of the array arguments: the result is that
    library's array, on their device.

    Parameters
    ----------
    x1 : array
        first input array. **Should** have a floating-point data type.
    x2 : array
        second input array. **Must** be compatible with ``x1`` for all non-contracted axes (see
        broadcasting).
    axis : int
        axis of ``x1`` and ``x2`` containing the vectors for which to compute the dot product. Default:
        ``-1``.

    Returns
    -------
    out : array
        if ``x1`` and ``x2`` are both one-dimensional arrays, a zero-dimensional containing the dot product;
        otherwise, a non-zero-dimensional array containing the dot products and having ``N-1`` axes, where
        ``N`` is number of axes in the shape determined according to broadcasting along the non-contracted
        axes.

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
    Sizes along ``axis`` that differ raise ``ShapeError`` naming both shapes, on every backend.

    Backend support (from the deviation table, ``unarray.conformance.deviations``): runs on NumPy, PyTorch, JAX,
    CuPy, TensorFlow, Dask and MLX arrays, each through its own library (Numba arrays take part in handoff
    only). Known deviations of this function: none. The table's rows for every function (a platform's or a
    library's missing dtypes) hold too.

    Examples
    --------
    >>> import numpy as np
    >>> import unarray as ua
    >>> ua.vecdot(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), np.array([1.0, 0.0, -1.0]))
    array([-2., -2.])
    """
    if refused:
        _refuse(vecdot, refused, x1)
    b, x1, x2 = _pair("vecdot", x1, x2)
    _shapes.vecdot("vecdot", b.name, x1.shape, x2.shape, axis)
    return _call("vecdot", b, b.vecdot, x1, x2, axis=axis, policy=_scope())


__all__ += [
    "tensordot", "vecdot",
]
# --- generated by tools/gen_frontend.py: end ---

_docs.fill(globals())
