"""Sorting functions of the array API standard (front end).

``axis`` is one int in ``[-ndim, ndim)`` (a 0-d array has none: :class:`AxisError`), the same on
every backend; complex arrays have no order in the standard and raise :class:`DTypeError` everywhere
(NumPy and JAX would sort them lexicographically, torch and TensorFlow refuse).

One order of real values on every backend, where the standard leaves NaN and signed zeros open: NaN sorts
after +inf (last ascending, first descending), -0.0 equals +0.0 (argsort keeps ties in input order), and
``ua.searchsorted`` searches the same order.
"""

from __future__ import annotations

from typing import Any

from unarray import _axes, _docs
from unarray._dispatch import call as _call
from unarray._dispatch import one as _one
from unarray._errors import DTypeError
from unarray._names import refuse as _refuse
from unarray._typing import A, Array, Refused

__all__ = ["argsort", "sort"]


def argsort(x: A, /, *, axis: int = -1, descending: bool = False, stable: bool = True, **refused: Refused) -> A:
    """Indices that sort ``x`` (real) along ``axis``; NaN sorts last (first when descending); ties keep their order.

        The order is the same on every backend: NaN after +inf, -0.0 equal to +0.0 (kept in input order).

        Parameters
        ----------
        {x_real}
        {axis_sort}
        descending : bool
            Sort in descending order (ties still keep their order when ``stable``). Default ``False``.
        {stable}

        Returns
        -------
        {out_indices}

        Raises
        ------
        {unknown_x}
        {axis_range}
        {complex_unordered}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.argsort(np.array([3.0, 1.0, 2.0]))
        array([1, 2, 0])
        >>> ua.argsort(np.array([3.0, 1.0, 3.0]), descending=True)
        array([0, 2, 1])
    """
    return _sort(argsort, x, axis, descending, stable, refused)


def sort(x: A, /, *, axis: int = -1, descending: bool = False, stable: bool = True, **refused: Refused) -> A:
    """Sorted copy of ``x`` (real) along ``axis``; NaN sorts last (first when descending).

        The order is the same on every backend: NaN after +inf, -0.0 equal to +0.0. Which of two equal zeros
        of different sign comes first in the sorted values is the backend's (a descending sort may flip them,
        a GPU radix sort orders them by the sign bit); ``argsort`` keeps ties in input order everywhere.

        Parameters
        ----------
        {x_real}
        {axis_sort}
        descending : bool
            Sort in descending order. Default ``False``.
        {stable}

        Returns
        -------
        out : array
            The sorted values, in the input's dtype, library and device.

        Raises
        ------
        {unknown_x}
        {axis_range}
        {complex_unordered}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.sort(np.array([[3, 1], [0, 2]]), axis=0)
        array([[0, 1],
               [3, 2]])
    """
    return _sort(sort, x, axis, descending, stable, refused)


def _sort(fn: Any, x: Array, axis: int, descending: bool, stable: bool, refused: dict[str, Any]) -> Any:
    if refused:
        _refuse(fn, refused, x)
    op = fn.__name__
    b = _one(x, op)
    axis = _axes.one(op, b, x, axis)
    name = b.dtype_name(x)
    if name.startswith("complex"):
        raise DTypeError(f"got a {name} array, but complex numbers have no order in the standard; sort the real "
                         "part or the magnitude instead (ua.real(x), ua.abs(x))", op=op, backend=b.name)
    return _call(op, b, getattr(b, op), x, axis=axis, descending=descending, stable=stable)

_docs.fill(globals())
