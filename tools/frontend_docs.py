"""The parameter and error text that front-end docstrings share, each written once.

A hand-written docstring names an entry by a line ``{key}`` in its Parameters or Raises section;
``tools/gen_frontend.py`` writes this table into ``unarray/_docs.py``, which fills the entries in when the
module is imported (``help`` and the built documentation show the whole text). A description that is a
function's own stays written in its docstring.
"""

from __future__ import annotations

# key -> (the entry's first line: "name : type" or the error class, its description)
SHARED: dict[str, tuple[str, str]] = {
    "array_size": ("ArraySizeError",
             "The array would hold more than 2**63 - 1 bytes (a ``dtype`` left out counts as 8 bytes, "
             "16 if complex): refused before the backend is asked, on every backend (also a "
             "``MemoryError``)."),
    "axes_range": ("AxisError",
             "An axis is outside ``[-ndim, ndim)`` (any axis of a 0-d array) or named twice."),
    "axis_out_of_range": ("AxisError",
             "``axis`` is out of range."),
    "axis_range": ("AxisError",
             "``axis`` is out of range for ``x``, or names an axis twice."),
    "axis_reduce": ("axis : int, tuple of int or None",
             "Axis or axes to reduce (negative ones count from the end); ``None`` (the default) "
             "reduces all, ``()`` reduces none."),
    "axis_repeated": ("AxisError",
             "An axis is out of range or repeated."),
    "axis_type": ("ArgumentTypeError",
             "``axis`` is a bool or a float."),
    "backend_create": ("backend : str or module, optional",
             "Which library creates it; by default the one set by :class:`unarray.use` (NumPy unless "
             "set)."),
    "backend_unknown": ("BackendNotAvailableError",
             "``backend`` is unknown or not installed."),
    "complex_unordered": ("DTypeError",
             "``x`` is complex (the standard orders no complex numbers)."),
    "device_create": ("device : device, optional",
             "Where to create it (a :class:`unarray.Device`, the library's own device object or a "
             "string such as ``\"cuda:0\"``); by default the backend's default device."),
    "device_like": ("device : device, optional",
             "Where to create it; ``x``'s device by default."),
    "device_unknown": ("DeviceMismatchError",
             "``device`` is not one the backend can place arrays on (a NumPy array on ``\"cuda\"``)."),
    "dtype_create": ("dtype : dtype, optional",
             "The dtype (``ua.float32``, or the library's own); by default the backend's default "
             "floating dtype."),
    "dtype_like": ("dtype : dtype, optional",
             "The dtype; ``x``'s by default."),
    "dtype_unknown": ("DTypeError",
             "``dtype`` is not a dtype, or not one the backend has."),
    "empty_reduction": ("EmptyReductionError",
             "The reduction covers zero elements."),
    "fewer_than_two_dims": ("ShapeError",
             "``x`` has fewer than two dimensions."),
    "keepdims": ("keepdims : bool",
             "Keep the reduced axes with length one. Default ``False``."),
    "keepdims_broadcast": ("keepdims : bool",
             "Keep the reduced axes, with length one, so the result broadcasts against ``x``. Default "
             "``False``."),
    "shape": ("shape : int or tuple of int",
             "The shape of the result."),
    "shape_negative": ("ShapeError",
             "``shape`` has a negative size."),
    "unknown_x": ("UnknownArrayTypeError",
             "``x`` is not an array of a supported library."),
    "x": ("x : array",
             "Input array."),
    "x_like": ("x : array",
             "The array whose shape (and, unless given, dtype and device) the result takes."),
    "x_matrix": ("x : array",
             "Input array with at least two dimensions."),
    "x_not_real_float": ("DTypeError",
             "``x`` is not real floating-point (cast first, ``ua.astype(x, ua.float32)``)."),
    "x_numeric": ("x : array",
             "Input array, numeric."),
    "x_real": ("x : array",
             "Input array, real-valued."),
    "x_real_float": ("x : array",
             "A real floating-point array; float16 and bfloat16 are computed in float32 and rounded "
             "once."),
}
