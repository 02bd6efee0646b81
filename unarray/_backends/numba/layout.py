"""Numba's route for ``ua.ascontiguousarray``: a Numba device array is compacted through a zero-copy CuPy view
(CuPy's route: its own copy or unarray's CUDA C transpose), and the result handed back as a Numba view."""

from __future__ import annotations

import functools
from typing import Any

from unarray._errors import UnsupportedError
from unarray._kernels import layout_route as lr
from unarray._kernels.layout_plan import Plan

__all__ = ["MIN_SIDE", "route"]

# The CuPy copy a view falls back to loses to the skinny tile down to two rows or columns (as for CuPy's arrays).
MIN_SIDE = 2


def route(x: Any) -> lr.Route:
    """How ``x`` is compacted (the plan that runs and that ``ua.explain`` prints)."""
    if x.is_c_contiguous():
        return lr.AS_IS
    if lr.cuda_kernels() is None:
        raise UnsupportedError("a non-contiguous Numba device array is compacted through CuPy, which is "
                               "not installed; install cupy, or hand it over with ua.to(x, 'torch')",
                               op="ascontiguousarray", backend="numba")
    import cupy

    c = cupy.asarray(x)  # a zero-copy view through __cuda_array_interface__
    p = lr.cuda_view_plan(c, MIN_SIDE)
    if p is None:
        return lr.Route("native", "cupy.ascontiguousarray (on a CuPy view)", functools.partial(_copy, p=None))
    return lr.Route("cuda", lr.cuda_label(p, c.itemsize, c.data.ptr), functools.partial(_copy, p=p), p)


def _copy(x: Any, p: Plan | None) -> Any:
    import cupy
    from numba import cuda

    c = cupy.asarray(x)
    c = cupy.ascontiguousarray(c) if p is None else lr.cuda_kernels().transpose(c, p)
    view: Any = cuda.as_cuda_array
    return view(c)  # a view of the new array, which it keeps alive
