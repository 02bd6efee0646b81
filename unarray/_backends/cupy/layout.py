"""CuPy's route for ``ua.ascontiguousarray`` (and a handoff's compact copy): ``cupy.ascontiguousarray``, or unarray's
CUDA C tiled transpose for a large permuted view. Numba device arrays take it through a zero-copy CuPy view.
The thresholds shared by every library are in ``unarray/_kernels/layout_route.py``."""

from __future__ import annotations

import functools
from typing import Any

import cupy

from unarray._backends.cupy.devices import on_device_of
from unarray._kernels import layout_route as lr
from unarray._kernels.layout_plan import Plan

__all__ = ["MIN_SIDE", "NATIVE", "SMALL", "compact", "route"]

# CuPy's own strided copy loses to the skinny tile down to two rows or columns.
MIN_SIDE = 2
SMALL = lr.KERNEL_MIN_BYTES["cuda"]  # (below it a view takes CuPy's copy)


_ascontiguous = cupy.ascontiguousarray


def _native_copy(x: Any) -> Any:
    with on_device_of(x):  # (CuPy copies on the current device, not the array's)
        return _ascontiguous(x)


NATIVE = lr.Route("native", "cupy.ascontiguousarray", _native_copy)


def compact(backend: Any, x: Any) -> Any:
    """``route(x).run(x)``, the backend's ``ascontiguousarray`` (a method: the C path calls it unbound): a compact
    array is returned as is and a small one takes CuPy's copy, as the route does, without building the route."""
    if x.flags.c_contiguous:
        return x
    if x.nbytes < SMALL:
        return _native_copy(x)
    return route(x).run(x)


def route(x: Any) -> lr.Route:
    """How ``x`` is compacted (the plan that runs and that ``ua.explain`` prints)."""
    if x.flags.c_contiguous:
        return lr.AS_IS
    if x.nbytes < SMALL:  # a small array goes native without planning
        return NATIVE
    p = lr.cuda_view_plan(x, MIN_SIDE)  # (None where the CUDA C kernel does not take x or is not worth it)
    if p is None:
        return NATIVE
    return lr.Route("cuda", lr.cuda_label(p, x.itemsize, x.data.ptr), functools.partial(transpose, p=p), p)


def transpose(x: Any, p: Plan) -> Any:
    return lr.cuda_kernels().transpose(x, p)
