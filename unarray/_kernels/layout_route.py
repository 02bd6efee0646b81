"""The route of ``ua.ascontiguousarray`` and of a handoff's compact copy: the rule's thresholds, the plan a
backend's route makes (:class:`Route`), and running it.

On CUDA and ROCm a permuted view (``x.T``, ``x.permute(0, 2, 3, 1)``) is copied by unarray's own
tiled transpose (Triton, or CUDA C launched through CuPy), faster there than the frameworks' strided
copy. Everything else is the framework's own call. Each backend whose arrays carry strides declares its route
(``Backend.layout_route``, in its package); an array without strides is returned as is. The route is
the plan: :func:`contiguous` runs it and ``ua.explain`` prints its ``kernel``. The front end
(``unarray/layout.py``) and the handoff (a library's ``compact_copy``) both call :func:`contiguous`;
this module imports neither, and names no library.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

from unarray._kernels.layout_plan import Plan, plan

__all__ = ["AS_IS", "KEPT_RUN_MIN_BYTES", "KERNEL_MIN_BYTES", "TRITON_MAX_ELEMENT_BYTES", "Route",
           "cuda_kernels", "cuda_label", "plan_if_worth", "triton_label", "unstrided"]

# The route rule (why each constant, with its figures: docs/design-notes.md, "Layout kernels").
# Below it the native copy wins: a call costs its launch from Python, not its bytes.
KERNEL_MIN_BYTES = {"cuda": 16 << 20, "triton": 64 << 20}
# A view that keeps the inner axis moves runs of the vector element: shorter runs go native.
KEPT_RUN_MIN_BYTES = 128
# Triton moves a 16-byte element as two 8-byte words, slower than the library's copy.
TRITON_MAX_ELEMENT_BYTES = 8


class Route(NamedTuple):  # (not a dataclass: cheaper to build at `import unarray`, docs/design-notes.md)
    """How ``ascontiguousarray`` compacts one array: the plan that runs and the one ``ua.explain`` prints.

    ``how`` is ``"as is"``, ``"native"`` (the library's own copy), ``"cuda"`` or ``"triton"`` (unarray's
    kernels); ``kernel`` names what runs; ``run(x)`` runs it; ``plan`` is the transpose a kernel runs.
    """

    how: str
    kernel: str
    run: Callable[[Any], Any]
    plan: Plan | None = None


def _same(x: Any) -> Any:
    return x


AS_IS = Route("as is", "none (already C-contiguous: x is returned as is)", _same)


@functools.cache
def unstrided(name: str) -> Route:
    """The route of a library whose arrays carry no strides (the caller sees every array as compact)."""
    return Route("as is", f"none ({name} arrays carry no strides: x is returned as is)", _same)


@functools.lru_cache(maxsize=1024)
def plan_if_worth(kernel: str, min_side: int, shape: tuple[int, ...], strides: tuple[int, ...],
                  itemsize: int) -> Plan | None:
    """The plan where ``kernel`` (``"cuda"`` or ``"triton"``) is worth running on a view (strides in elements) of
    a library whose own copy wins below ``min_side`` rows or columns, else None (cached: a repeated layout is
    planned once)."""
    if any(s < 0 for s in strides) or math.prod(shape) * itemsize < KERNEL_MIN_BYTES[kernel]:
        return None
    p = plan(shape, strides)
    if p is None:
        return None
    run = p.vec * itemsize
    if p.vec > 1:
        return p if run >= KEPT_RUN_MIN_BYTES else None
    if kernel == "triton" and run > TRITON_MAX_ELEMENT_BYTES:
        return None
    if min(p.rows, p.cols) >= min_side:
        return p
    # A few rows into 16-byte words (NCHW -> NHWC with 3 channels) beat every library's own copy.
    kernels = cuda_kernels()
    return p if kernel == "cuda" and kernels is not None and kernels.few_rows(p, itemsize, 0, 0) else None


def cuda_view_plan(x: Any, min_side: int) -> Plan | None:
    """The CUDA C kernel's plan for a strided view with CuPy's attributes (a CuPy array, or CuPy's zero-copy view of
    another library's), where the kernel takes it and is worth it against CuPy's own copy, else None."""
    if x.flags.c_contiguous or any(s % x.itemsize for s in x.strides):
        return None
    p = plan_if_worth("cuda", min_side, x.shape, tuple(s // x.itemsize for s in x.strides), x.itemsize)
    return p if p is not None and cuda_kernels().transposable(x.itemsize, p, x.data.ptr) else None


def cuda_label(p: Plan, itemsize: int, ptr: int, where: str = "") -> str:
    """``ua.explain``'s name of the CUDA C kernel that runs ``p`` (``where``: on whose stream)."""
    return (f"unarray._kernels.transpose_cupy.{cuda_kernels().kernel(p, itemsize, ptr % 16)} (CUDA C{where}: "
            + _shape(p, itemsize))


def triton_label(p: Plan, itemsize: int) -> str:
    """``ua.explain``'s name of the Triton kernel that runs ``p``."""
    return "unarray._kernels.transpose_triton (Triton tiled transpose: " + _shape(p, itemsize)


def _shape(p: Plan, itemsize: int) -> str:
    return f"{p.n_batch} x {p.rows} x {p.cols} of {p.vec * itemsize}-byte elements)"


@functools.cache
def cuda_kernels() -> Any:
    """The CUDA C kernels' module, or None where it cannot be imported (its launcher is missing)."""
    try:
        from unarray._kernels import transpose_cupy
    except Exception:
        return None
    return transpose_cupy
