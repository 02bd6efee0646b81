"""Statistical functions (hot ops owned by unarray): sum, prod, mean, var, std,
min, max, cumulative_sum, cumulative_prod.

Each is the same function on every backend: ``axis`` is an int, a tuple
(``()`` reduces nothing) or ``None`` (everything); negative axes count from
the end; ``keepdims`` keeps reduced axes with length one. Integer sums and
products accumulate in the default integer dtype unless ``dtype`` says
otherwise; float sums keep the input's dtype. Over zero elements ``sum`` is
0, ``prod`` 1, ``mean``/``var``/``std`` NaN, and ``min``/``max`` raise
``EmptyReductionError`` on every backend. NaN propagates through every
reduction here. ``var``/``std`` are NaN where ``N - correction <= 0``.

The same refusals on every backend: an axis outside ``[-ndim, ndim)`` (any
axis of a 0-d array) or named twice raises ``AxisError``, a bool or float
axis ``ArgumentTypeError``, and ``min``/``max`` of a complex array
``DTypeError`` (the standard orders no complex numbers). Inside
``tf.function``, where a reduced dimension is unknown at trace time, the
empty check of ``min``/``max`` runs in the graph: the call raises TensorFlow's
``InvalidArgumentError`` carrying the ``EmptyReductionError`` message.
"""

from __future__ import annotations

from unarray import _axes, _docs, _hot
from unarray._dispatch import BY_TYPE as _BY_TYPE
from unarray._dispatch import call as _call
from unarray._dispatch import one as _one
from unarray._names import refuse as _refuse
from unarray._typing import A, DTypeLike, Refused

__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]

Axis = int | tuple[int, ...] | None


def sum(x: A, /, *, axis: Axis = None, dtype: DTypeLike | None = None, keepdims: bool = False) -> A:
    """Sum of the elements of ``x`` over ``axis``.

        Parameters
        ----------
        {x_numeric}
        {axis_reduce}
        dtype : dtype, optional
            Accumulation and result dtype; by default the input's for floats and the default integer dtype
            for (unsigned) integers and bool.
        {keepdims_broadcast}

        Returns
        -------
        out : array
            The sums (0 over zero elements), of the input's library and device.

        Raises
        ------
        {unknown_x}
        {axes_range}
        {axis_type}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> x = np.arange(6, dtype=np.int32).reshape(2, 3)
        >>> ua.sum(x, axis=-1)
        array([ 3, 12])
        >>> ua.sum(x, axis=(0, 1), keepdims=True).shape
        (1, 1)
        >>> ua.sum(x, axis=()).shape
        (2, 3)
    """
    return _axes.reduce("sum", x, axis, dtype, keepdims)


def prod(x: A, /, *, axis: Axis = None, dtype: DTypeLike | None = None, keepdims: bool = False) -> A:
    """Product of the elements of ``x`` over ``axis`` (dtype rules as :func:`sum`).

        Parameters
        ----------
        {x_numeric}
        {axis_reduce}
        dtype : dtype, optional
            Accumulation and result dtype; by default as :func:`sum`.
        {keepdims_broadcast}

        Returns
        -------
        out : array
            The products (1 over zero elements), of the input's library and device.

        Raises
        ------
        {unknown_x}
        {axes_range}
        {axis_type}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.prod(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=(0, 1))
        array(24.)
        >>> ua.prod(np.array([1, 2, 3], dtype=np.int8)).dtype
        dtype('int64')
    """
    return _axes.reduce("prod", x, axis, dtype, keepdims)


def mean(x: A, /, *, axis: Axis = None, keepdims: bool = False) -> A:
    """Arithmetic mean of ``x`` (real or complex floating) over ``axis``; NaN over zero elements.

        Parameters
        ----------
        x : array
            Input array, real or complex floating-point; integer or bool input (which the standard leaves
            unspecified) is read in the backend's default floating dtype, on every backend, as NumPy does: the
            answer a user expects, where a refusal would make ``ua.mean(counts)`` fail on torch only.
        {axis_reduce}
        {keepdims_broadcast}

        Returns
        -------
        out : array
            The means, in the input's floating dtype (the default floating dtype for integer or bool input:
            float64 on NumPy and dask, float32 on torch, TensorFlow and JAX without x64), library and device.

        Raises
        ------
        {unknown_x}
        {axes_range}
        {axis_type}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.mean(np.array([[1.0, 2.0], [3.0, 5.0]]), axis=0)
        array([2. , 3.5])
    """
    return _axes.reduce("mean", x, axis, keepdims)


def var(x: A, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False) -> A:
    """Variance of ``x`` over ``axis``, dividing by ``N - correction``.

        Parameters
        ----------
        {x_real_float_read}
        {axis_reduce}
        correction : int or float
            Degrees of freedom subtracted from ``N``: 0 (the default) gives the population variance, 1 the
            unbiased sample variance. The result is NaN where ``N - correction <= 0``.
        {keepdims_broadcast}

        Returns
        -------
        out : array
            The variances, in the input's dtype, library and device.

        Raises
        ------
        {unknown_x}
        {axes_range}
        {axis_type}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.var(np.array([1.0, 2.0, 3.0, 4.0]), correction=1)
        array(1.66666667)
    """
    return _axes.reduce("var", x, axis, correction, keepdims, attr="var_corrected")


def std(x: A, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False) -> A:
    """Standard deviation of ``x`` over ``axis`` (``sqrt`` of :func:`var`).

        Parameters
        ----------
        {x_real_float_read}
        {axis_reduce}
        correction : int or float
            Degrees of freedom subtracted from ``N`` (as :func:`var`). Default 0.
        {keepdims_broadcast}

        Returns
        -------
        out : array
            The standard deviations, in the input's dtype, library and device.

        Raises
        ------
        {unknown_x}
        {axes_range}
        {axis_type}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.std(np.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]))
        array(2.)
    """
    return _axes.reduce("std", x, axis, correction, keepdims, attr="std_corrected")


def min(x: A, /, *, axis: Axis = None, keepdims: bool = False) -> A:
    """Minimum of ``x`` over ``axis``; NaN if any reduced element is NaN.

        Parameters
        ----------
        {x_real}
        {axis_reduce}
        {keepdims_broadcast}

        Returns
        -------
        out : array
            The minima, in the input's dtype, library and device.

        Raises
        ------
        {empty_reduction}
        {complex_unordered}
        {unknown_x}
        {axes_range}
        {axis_type}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.min(np.array([[3, 1], [2, 5]]), axis=1)
        array([1, 2])
    """
    return _axes.reduce("min", x, axis, keepdims)


def max(x: A, /, *, axis: Axis = None, keepdims: bool = False) -> A:
    """Maximum of ``x`` over ``axis``; NaN if any reduced element is NaN.

        Parameters
        ----------
        {x_real}
        {axis_reduce}
        {keepdims_broadcast}

        Returns
        -------
        out : array
            The maxima, in the input's dtype, library and device.

        Raises
        ------
        {empty_reduction}
        {complex_unordered}
        {unknown_x}
        {axes_range}
        {axis_type}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.max(np.array([[3, 1], [2, 5]]), axis=0, keepdims=True)
        array([[3, 5]])
    """
    return _axes.reduce("max", x, axis, keepdims)


def cumulative_sum(
    x: A, /, *, axis: int | None = None, dtype: DTypeLike | None = None, include_initial: bool = False
, **refused: Refused) -> A:
    """Running sum along ``axis`` (required unless ``x`` is 1-D).

        Parameters
        ----------
        {x_numeric}
        {axis_accumulate}
        {dtype_as_sum}
        include_initial : bool
            Start with the additive identity, so the result is one longer along ``axis``. Default ``False``.

        Returns
        -------
        out : array
            The running sums, of the input's library and device.

        Raises
        ------
        {unknown_x}
        {axis_out_of_range}
        {axis_omitted}
        {axis_not_int}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.cumulative_sum(np.array([1, 2, 3]), include_initial=True)
        array([0, 1, 3, 6])
    """
    if refused:
        _refuse(cumulative_sum, refused, x)
    b = _BY_TYPE.get(type(x)) or _one(x, "cumulative_sum")
    axis = _axes.single("cumulative_sum", b, x, axis)
    return _call("cumulative_sum", b, b.cumulative_sum, x, axis, dtype, include_initial)


def cumulative_prod(
    x: A, /, *, axis: int | None = None, dtype: DTypeLike | None = None, include_initial: bool = False
, **refused: Refused) -> A:
    """Running product along ``axis`` (as :func:`cumulative_sum`, identity 1).

        Parameters
        ----------
        {x_numeric}
        {axis_accumulate}
        {dtype_as_sum}
        include_initial : bool
            Start with the multiplicative identity, so the result is one longer along ``axis``.
            Default ``False``.

        Returns
        -------
        out : array
            The running products, of the input's library and device.

        Raises
        ------
        {unknown_x}
        {axis_out_of_range}
        {axis_omitted}
        {axis_not_int}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.cumulative_prod(np.array([[1, 2], [3, 4]]), axis=1)
        array([[ 1,  2],
               [ 3, 12]])
    """
    if refused:
        _refuse(cumulative_prod, refused, x)
    b = _BY_TYPE.get(type(x)) or _one(x, "cumulative_prod")
    axis = _axes.single("cumulative_prod", b, x, axis)
    return _call("cumulative_prod", b, b.cumulative_prod, x, axis, dtype, include_initial)


# The C hot path of each call above (unarray/_hot.py); the function stays its reference.
sum = _hot.fast(sum, params=("axis", "dtype", "keepdims"), axis="axis")
prod = _hot.fast(prod, params=("axis", "dtype", "keepdims"), axis="axis")
mean = _hot.fast(mean, params=("axis", "keepdims"), axis="axis")
min = _hot.fast(min, params=("axis", "keepdims"), axis="axis")
max = _hot.fast(max, params=("axis", "keepdims"), axis="axis")
var = _hot.fast(var, params=("axis", "correction", "keepdims"), axis="axis", name="var_corrected")
std = _hot.fast(std, params=("axis", "correction", "keepdims"), axis="axis", name="std_corrected")

_docs.fill(globals())
