"""Creation functions without an array argument (those with one: unarray/creation_from_arrays.py).

Functions with an array argument (``zeros_like``, ``tril``, ``meshgrid``, ...) dispatch on it like every other op.
These have nothing to dispatch on: they take ``backend=`` (``"torch"``, a module, or a namespace) and ``device=``
(``"cuda:0"``, a ``ua.Device`` or the library's own device object); without them, a library's own dtype object
(``torch.float32``, not NumPy's, which other libraries' arrays carry too) picks that library; else they use the
default set by :func:`unarray.use`, and NumPy on the CPU when nothing is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from unarray import _docs, _shapes
from unarray._devices import Device as _Device
from unarray._dispatch import backend_named as _backend_named
from unarray._dispatch import default_backend as _default_backend
from unarray._dispatch import fail as _fail
from unarray._dtypes import check_int_scalar
from unarray._errors import ArgumentTypeError, DTypeError
from unarray._lookup import ROOTS
from unarray._lookup import SCALARS as _SCALARS
from unarray._lookup import dtype_library as _dtype_library
from unarray._lookup import of_array as _of_array
from unarray._names import refuse as _refuse
from unarray._typing import Array, DeviceLike, DTypeLike, Refused

if TYPE_CHECKING:
    from unarray._backends._base import Backend

__all__ = ["arange", "asarray", "empty", "eye", "full", "linspace", "ones", "zeros"]

Shape = int | tuple[int, ...]


def _creation_backend(op: str, backend: Any, device: Any, dtype: Any = None) -> tuple[Backend, Any]:
    if backend is None and device is not None and not isinstance(device, str):
        # Note: a device names its library (ua.device(t).library, torch.device): creation on it stays there.
        root = device.library if isinstance(device, _Device) else ROOTS.get(type(device).__module__.partition(".")[0])
        if root is not None:
            backend = root
    if backend is None and dtype is not None:
        # Note: so does a library's own dtype object (torch.float32): what the caller means is that library's array.
        backend = _dtype_library(dtype)
    if backend is None:
        backend, default_device = _default_backend()
        if device is None:
            device = default_device
    b = _backend_named(backend, op)
    try:  # frame(op): its except clause is the template's (tools/gen_frontend.py)
        return b, b.native_device(device)
    except Exception as e:
        raise _fail(op, b, e) from e


def _make(fn: Any, refused: dict[str, Any], backend: Any, device: Any, dtype: Any, call: Any, shape: Any = None,
          width: int = 8) -> Array:
    if refused:
        _refuse(fn, refused, backend)
    op = fn.__name__
    b, dev = _creation_backend(op, backend, device, dtype)
    try:  # frame(op): its except clause is the template's (tools/gen_frontend.py)
        dt = b.dtype(dtype)
        if shape is not None:  # (a dtype left to the backend: its widest default, ``width`` bytes)
            _shapes.addressable(op, b.name, shape, _shapes.itemsize(dt, width))
        return call(b, dt, dev)
    except Exception as e:
        raise _fail(op, b, e) from e


def zeros(shape: Shape, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
          backend: Any = None, **refused: Refused) -> Array:
    """An array of zeros of ``shape``.

        Parameters
        ----------
        {create_params}

        Returns
        -------
        {out_backend_array}

        Raises
        ------
        {create_raises}
        {shape_negative}

        Examples
        --------
        >>> import unarray as ua
        >>> ua.zeros((2, 3), dtype=ua.int16)
        array([[0, 0, 0],
               [0, 0, 0]], dtype=int16)
    """
    return _make(zeros, refused, backend, device, dtype, lambda b, dt, dev: b.zeros(shape, dtype=dt, device=dev), shape)


def ones(shape: Shape, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
         backend: Any = None, **refused: Refused) -> Array:
    """An array of ones of ``shape`` (arguments as :func:`zeros`).

        Parameters
        ----------
        {create_params}

        Returns
        -------
        {out_backend_array}

        Raises
        ------
        {create_raises}
        {shape_negative}

        Examples
        --------
        >>> import unarray as ua
        >>> ua.ones(2, dtype=ua.bool)
        array([ True,  True])
    """
    return _make(ones, refused, backend, device, dtype, lambda b, dt, dev: b.ones(shape, dtype=dt, device=dev), shape)


def empty(shape: Shape, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
          backend: Any = None, **refused: Refused) -> Array:
    """An uninitialised array of ``shape`` (arguments as :func:`zeros`).

        Parameters
        ----------
        {create_params}

        Returns
        -------
        out : array
            An array of ``backend``'s library whose values are unspecified.

        Raises
        ------
        {create_raises}
        {shape_negative}

        Examples
        --------
        >>> import unarray as ua
        >>> ua.empty((2, 0))
        array([], shape=(2, 0), dtype=float64)
    """
    return _make(empty, refused, backend, device, dtype, lambda b, dt, dev: b.empty(shape, dtype=dt, device=dev), shape)


def full(shape: Shape, fill_value: bool | int | float | complex, *, dtype: DTypeLike | None = None,
         device: DeviceLike | None = None, backend: Any = None, **refused: Refused) -> Array:
    """An array of ``shape`` filled with ``fill_value`` (dtype inferred from it by default).

        Parameters
        ----------
        {shape}
        {fill_value}
        dtype : dtype, optional
            The dtype; by default the backend's default dtype of ``fill_value``'s kind.
        {device_create}
        {backend_create}

        Returns
        -------
        {out_backend_array}

        Raises
        ------
        {array_size}
        ArgumentTypeError
            ``fill_value`` is not a number.
        {backend_unknown}
        {dtype_unknown}
        {device_unknown}
        {shape_negative}

        Examples
        --------
        >>> import unarray as ua
        >>> ua.full(2, 7)
        array([7, 7])
        >>> ua.full((1, 2), 0.5, dtype=ua.float32)
        array([[0.5, 0.5]], dtype=float32)
    """
    if refused:
        _refuse(full, refused, backend)
    import numbers  # (here: `import unarray` does not need it; every array library has it loaded)
    if not isinstance(fill_value, numbers.Number) and not hasattr(fill_value, "dtype"):
        raise ArgumentTypeError(f"fill_value must be a bool, int, float or complex; got {type(fill_value).__name__}",
                                op="full", backend=backend if isinstance(backend, str) else None)
    if type(fill_value) is int and dtype is not None:
        check_int_scalar("full", backend if isinstance(backend, str) else None, fill_value, dtype)
    return _make(full, {}, backend, device, dtype,
                 lambda b, dt, dev: b.full(shape, fill_value, dtype=dt, device=dev), shape,
                 16 if isinstance(fill_value, complex) else 8)


def arange(start: int | float, /, stop: int | float | None = None, step: int | float = 1, *,
           dtype: DTypeLike | None = None, device: DeviceLike | None = None, backend: Any = None,
           **refused: Refused) -> Array:
    """Evenly spaced values in ``[start, stop)``.

        Parameters
        ----------
        start : int or float
            The first value; with ``stop`` omitted, the end (and the start is 0).
        stop : int or float, optional
            The end, excluded.
        step : int or float
            The spacing. Default ``1``.
        dtype : dtype, optional
            The dtype; by default the default integer dtype for int arguments, else the default floating one.
        {device_create}
        {backend_create}

        Returns
        -------
        out : array
            A 1-D array of ``backend``'s library.

        Raises
        ------
        {create_raises}
        ArgumentError
            ``step`` is zero.

        Examples
        --------
        >>> import unarray as ua
        >>> ua.arange(1, 7, 2)
        array([1, 3, 5])
    """
    return _make(arange, refused, backend, device, dtype,
                 lambda b, dt, dev: b.arange(start, stop, step, dtype=dt, device=dev),
                 (_shapes.arange_length(start, stop, step),))


def linspace(start: int | float | complex, stop: int | float | complex, /, num: int, *,
             dtype: DTypeLike | None = None, device: DeviceLike | None = None, endpoint: bool = True,
             backend: Any = None, **refused: Refused) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop``.

        Parameters
        ----------
        start : int, float or complex
            The first value.
        stop : int, float or complex
            The last value (excluded when ``endpoint`` is false).
        num : int
            How many values.
        dtype : dtype, optional
            The dtype; by default the default floating dtype (complex for complex bounds).
        {device_create}
        endpoint : bool
            Include ``stop``. Default ``True``.
        {backend_create}

        Returns
        -------
        out : array
            A 1-D array of ``num`` values, of ``backend``'s library.

        Raises
        ------
        {create_raises}
        ArgumentError
            ``num`` is negative.

        Examples
        --------
        >>> import unarray as ua
        >>> ua.linspace(0, 1, 5)
        array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    return _make(linspace, refused, backend, device, dtype,
                 lambda b, dt, dev: b.linspace(start, stop, num, dtype=dt, device=dev, endpoint=endpoint), (num,),
                 16 if isinstance(start, complex) or isinstance(stop, complex) else 8)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: DTypeLike | None = None,
        device: DeviceLike | None = None, backend: Any = None, **refused: Refused) -> Array:
    """A 2-D array with ones on the ``k``-th diagonal.

        Parameters
        ----------
        n_rows : int
            Number of rows.
        n_cols : int, optional
            Number of columns; ``n_rows`` by default.
        k : int
            The diagonal: 0 the main one, positive above it, negative below. Default ``0``.
        {dtype_create}
        {device_create}
        {backend_create}

        Returns
        -------
        out : array
            An ``(n_rows, n_cols)`` array of ``backend``'s library.

        Raises
        ------
        {create_raises}

        Examples
        --------
        >>> import unarray as ua
        >>> ua.eye(2, 3, k=1, dtype=ua.int8)
        array([[0, 1, 0],
               [0, 0, 1]], dtype=int8)
    """
    return _make(eye, refused, backend, device, dtype,
                 lambda b, dt, dev: b.eye(n_rows, n_cols, k=k, dtype=dt, device=dev),
                 (n_rows, n_rows if n_cols is None else n_cols))


def asarray(obj: Any, /, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
            copy: bool | None = None, backend: Any = None, **refused: Refused) -> Array:
    """Convert ``obj`` (an array of any library, a scalar, a nested sequence, a buffer) to an array.

        The rule for the library of the result, the same whatever unarray has seen before:

        - an array (of any supported library, a JAX tracer or a dask array included) stays with its own
          library unless ``backend=`` names another; then it moves through :func:`unarray.to` (zero-copy
          where possible) and keeps its device, unless ``device=`` names another or the target cannot hold
          arrays there (a NumPy array for CuPy, whose arrays live on GPUs only): then it goes there, or to the
          target's default device, one counted copy. A tracer is returned as it is, never converted.
        - a list or tuple whose first element is an array (``[t1, t2]``, nested or not) makes that array's
          library's array, on its device, unless ``backend=`` or ``device=`` says otherwise.
        - anything else (Python scalars, nested sequences, buffers) goes to ``backend=``, else to the library of
          ``device=`` where that names one (``ua.device(t)``, ``torch.device``), else to the library whose own
          dtype object ``dtype=`` is (``torch.float32``), else to the default set by :class:`unarray.use` (NumPy
          unless set).

        Parameters
        ----------
        obj : array, scalar, nested sequence or buffer
            What to convert.
        dtype : dtype, optional
            The dtype; by default inferred from ``obj``.
        device : device, optional
            Where the result lives; by default ``obj``'s device (an array) or the backend's default.
        copy : bool, optional
            ``True`` always copies, ``False`` never does (and raises where it would have to), ``None`` (the
            default) copies only when needed.
        backend : str or module, optional
            The target library; by default ``obj``'s own (an array) or the one set by :class:`unarray.use`.

        Returns
        -------
        out : array
            An array of the target library.

        Raises
        ------
        {backend_unknown}
        DTypeError
            ``dtype`` is not a dtype, or not one the backend has; or ``obj`` holds data of no standard
            dtype (objects, strings, dates).
        {device_unknown}
        HandoffError
            ``copy=False`` but a copy is needed.

        Examples
        --------
        >>> import unarray as ua
        >>> ua.asarray([[1, 2], [3, 4]], dtype=ua.float32)
        array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    if refused:
        _refuse(asarray, refused, obj)
    src = None if isinstance(obj, (*_SCALARS, list, tuple)) else _of_array(obj)
    if backend is None and src is None and type(obj) in (list, tuple):
        backend, device = _sequence_library(obj, device)
    if backend is None and src is not None:
        backend = src.name
    elif backend is not None and src is not None:
        target = _backend_named(backend, "asarray")
        if src.name != target.name:
            from unarray.interop import to

            where = device if device is not None else _target_device(src, obj, target)
            obj = to(obj, target.name, device=where, copy=copy, _op="asarray")
    if type(obj) is int and dtype is not None:
        check_int_scalar("asarray", None, obj, dtype)
    b, dev = _creation_backend("asarray", backend, device, dtype)
    try:  # frame("asarray"): its except clause is the template's (tools/gen_frontend.py)
        out = b.asarray(obj, dtype=b.dtype(dtype), device=dev, copy=copy)
    except Exception as e:
        raise _fail("asarray", b, e) from e
    if getattr(out.dtype, "kind", "f") in _OUTSIDE:
        raise DTypeError(f"got {type(obj).__name__} data of dtype {out.dtype}, which the array API standard does "
                         f"not have; pass numbers (bool, int, float, complex) or an array of them",
                         op="asarray", backend=b.name)
    return out


def _sequence_library(obj: list[Any] | tuple[Any, ...], device: Any) -> tuple[str | None, Any]:
    # Note: a sequence whose first leaf is one library's array (a list of 0-d tensors) makes that library's array, on
    # its device unless device= says otherwise; only that leaf is read (a list of numbers costs nothing more).
    first: Any = obj
    while type(first) in (list, tuple) and first:
        first = first[0]
    src = None if type(first) in (*_SCALARS, list, tuple) else _of_array(first)
    if src is None:
        return None, device
    if device is None and not src.is_tracer(first):
        device = src.device_of(first)
    return src.name, device


def _target_device(src: Backend, obj: Any, target: Backend) -> Any:
    # Note: an array keeps its device, unless the target cannot hold arrays there (host data for CuPy): then it
    # goes to the target's default device, one counted copy, as the target's own asarray of host data would.
    if src.is_tracer(obj) or src.device_of(obj).kind != "cpu":
        return None
    holds = _HOLDS_HOST.get(target.name)
    if holds is None:
        try:  # (not devices(): JAX lists only its GPUs there, yet holds host arrays)
            target.asarray([0], device=target.native_device(_Device("cpu")))
            holds = True
        except Exception:  # noqa: BLE001 - refused (CuPy: GPUs only): no host arrays
            holds = False
        _HOLDS_HOST[target.name] = holds
    if holds:
        return None
    return target.device_of(target.asarray([0], device=target.native_device(None)))


# Backend name -> whether it can hold arrays in host memory.
_HOLDS_HOST: dict[str, bool] = {}

# NumPy kinds with no array API dtype: object, str, bytes, datetime, timedelta (void stays: ml_dtypes' bfloat16).
_OUTSIDE = frozenset("OUSMm")

_docs.fill(globals())
