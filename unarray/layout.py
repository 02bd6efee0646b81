"""``ascontiguousarray``: materialise any array as a compact C-ordered array, on its own device and library.

On CUDA and ROCm a permuted view (``x.T``, ``x.permute(0, 2, 3, 1)``) is copied by unarray's own
tiled transpose (Triton for torch, CUDA C through CuPy), which reads and writes at close to copy
bandwidth where the frameworks' strided copy reaches about a third of it on a transpose. Everything
else is the framework's own call: ``unarray/_kernels/layout_route.py`` holds the rule, the measurements
behind it and the kernels' calls.
"""

from __future__ import annotations

from unarray import _hot
from unarray._dispatch import BY_TYPE as _BY_TYPE
from unarray._dispatch import fail as _fail
from unarray._dispatch import one as _one
from unarray._kernels import layout_route as _layout_route  # noqa: F401  # (loaded with the front end, not by a first call)
from unarray._typing import A

__all__ = ["ascontiguousarray"]


def ascontiguousarray(x: A, /) -> A:
    """``x`` as a compact C-ordered (row-major) array of the same library, device, dtype and values.

    The name is NumPy's (``numpy.ascontiguousarray``, also CuPy's), the one callers already know for
    this; the array API standard has no such function. ``x`` itself is returned, at no cost, when it
    is already C-contiguous, and always for JAX, TensorFlow and Dask arrays, which have no strides
    (XLA and TensorFlow own the physical layout). Otherwise the result is a new array: ``x`` is never
    changed.

    On CUDA and ROCm a view that permutes the axes of a compact buffer (``x.T``, ``x.mT``,
    ``x.permute(0, 2, 3, 1)``, ``x.transpose(1, 2)``) is copied by unarray's tiled transpose
    (a CUDA C kernel through CuPy, for CuPy arrays and for torch tensors where CuPy is installed;
    Triton for torch otherwise, ROCm included); small arrays, other strided views and CPU arrays
    use the library's own call (``numpy.ascontiguousarray``, ``torch.Tensor.contiguous``,
    ``cupy.ascontiguousarray``). ``ua.explain("ascontiguousarray", x)`` names the route taken. A
    torch tensor that records autograd, or a lazily conjugated or negated one, always takes
    ``torch.Tensor.contiguous`` (the kernel copies bits and records no gradient).

    Parameters
    ----------
    x : array
        An array of any supported library (NumPy, torch, CuPy, JAX, TensorFlow, Dask, Numba device
        arrays).

    Returns
    -------
    out : array
        A C-contiguous array equal to ``x``: ``x`` itself where it already is one.

    Raises
    ------
    UnknownArrayTypeError
        ``x`` is no array of a supported library (a list: pass ``ua.asarray(x)``).
    ArgumentTypeError
        ``x`` is a Python scalar.
    UnsupportedError
        A non-contiguous Numba device array where CuPy is not installed (install CuPy or hand the array
        to torch with ``ua.to(x, "torch")``), or a torch tensor that is not strided (sparse, mkldnn:
        convert with ``to_dense()`` first).

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> y = ua.ascontiguousarray(x.T)
    >>> y.flags.c_contiguous, y.strides, y.tolist()
    (True, (16, 8), [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]])
    >>> ua.ascontiguousarray(x) is x
    True
    """
    b = _BY_TYPE.get(type(x)) or _one(x, "ascontiguousarray")
    try:  # frame("ascontiguousarray"): its except clause is the template's (tools/gen_frontend.py)
        return b.ascontiguousarray(x)  # type: ignore[no-any-return]
    except Exception as e:
        raise _fail("ascontiguousarray", b, e) from e


# (the C path's backend call: Backend.ascontiguousarray, the route or a library's common cases first)
ascontiguousarray = _hot.fast(ascontiguousarray)
