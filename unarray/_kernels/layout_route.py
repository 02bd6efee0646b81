"""The route of ``ua.ascontiguousarray`` and of a handoff's compact copy: which copy runs, and running it.

On CUDA and ROCm a permuted view (``x.T``, ``x.permute(0, 2, 3, 1)``) is copied by unarray's own
tiled transpose (Triton for torch, CUDA C through CuPy), which reads and writes at close to copy
bandwidth where the frameworks' strided copy reaches about a third of it on a transpose. Everything
else is the framework's own call: see :func:`route` for the rule and the measurements behind it.
The front end (``unarray/layout.py``) and the handoff (``unarray/interop/_paths.py``) both call
:func:`contiguous`; this module imports neither.
"""

from __future__ import annotations

import functools
from typing import Any

from unarray._errors import UnsupportedError

__all__ = ["contiguous", "kernel_name", "route"]

# The route rule, from benchmarks/gpu/layout_gpu.py (figures: docs/design-notes.md, "Layout kernels"):
#
# - Below KERNEL_MIN_BYTES the native copy wins: there a call costs its launch from Python, not its bytes.
KERNEL_MIN_BYTES = {"cuda": 16 << 20, "triton": 64 << 20}
# - A transpose of fewer rows or columns than this (NCHW -> NHWC with 3 channels is a transpose of
#   3 rows) is a strided copy with a short run on one side: the few-rows kernel (16-byte words both ways)
#   takes it where its words line up, faster than torch's own; where they do not, torch's copy beats the
#   skinny tile and CuPy's does not.
KERNEL_MIN_SIDE = {"torch": 17, "cupy": 2}
# - A view that keeps the inner axis (attention's (0, 2, 1, 3)) moves runs of the vector element: the
#   kernels win for long runs, torch's copy for short ones. Runs shorter than KEPT_RUN_MIN_BYTES go native.
KEPT_RUN_MIN_BYTES = 128
# - The Triton kernel moves a 16-byte element (complex128) as two 8-byte words, slower than torch's
#   copy: Triton takes elements of at most 8 bytes (and runs of KEPT_RUN_MIN_BYTES).
TRITON_MAX_ELEMENT_BYTES = 8

# Libraries whose arrays carry no strides: every array is compact as far as the caller can see
# (XLA and TensorFlow choose the physical layout; Dask's chunks are made by whoever computes them).
_NO_STRIDES = frozenset({"jax", "tensorflow", "dask"})


def contiguous(b: Any, x: Any) -> Any:
    """``x`` (an array of backend ``b``) as a compact C-ordered array, by :func:`route`."""
    fast = _FAST.get(b.name)
    if fast is not None:  # a small view's call costs its launch: nothing more in its way
        out = fast(x)
        if out is not None:
            return out
    return _materialise(b, x, *_decide(b, x))


def _torch_fast(x: Any) -> Any:
    # torch's own call where the rule gives "as is" or "native" (.contiguous() returns x itself when compact).
    if x.layout is _torch_strided() and (x.nbytes < KERNEL_MIN_BYTES["cuda"] or not x.is_cuda):
        return x.contiguous()
    return None


def _cupy_fast(x: Any) -> Any:
    if x.flags.c_contiguous:
        return x
    return _cupy().ascontiguousarray(x) if x.nbytes < KERNEL_MIN_BYTES["cuda"] else None


def _numpy_fast(x: Any) -> Any:
    return x if x.flags.c_contiguous else _numpy().ascontiguousarray(x)


@functools.cache
def _cupy() -> Any:
    import cupy

    return cupy


@functools.cache
def _numpy() -> Any:
    import numpy

    return numpy


def _torch_trivial(x: Any) -> str | None:
    # "as is" or "native" from the cheapest reads, else None (the full rule decides; it refuses a sparse layout).
    if x.layout is not _torch_strided():
        return None
    if x.is_contiguous():
        return "as is"
    return "native" if not x.is_cuda or x.nbytes < KERNEL_MIN_BYTES["cuda"] else None


@functools.cache
def _torch_strided() -> Any:
    import torch

    return torch.strided


def _numpy_trivial(x: Any) -> str:
    return "as is" if x.flags.c_contiguous else "native"


def _cupy_trivial(x: Any) -> str | None:
    if x.flags.c_contiguous:
        return "as is"
    return "native" if x.nbytes < KERNEL_MIN_BYTES["cuda"] else None


_FAST = {"torch": _torch_fast, "numpy": _numpy_fast, "cupy": _cupy_fast}


def route(b: Any, x: Any) -> str:
    """How ``ascontiguousarray`` copies ``x``: ``"as is"``, ``"native"``, ``"triton"`` or ``"cuda"``.

    ``"cuda"`` is the CUDA C kernel (unarray/_kernels/transpose_cupy.py), for CuPy arrays and for torch
    CUDA tensors where CuPy is installed (on torch's current stream; it is the faster of the two
    kernels); ``"triton"`` serves torch on ROCm and where CuPy is missing. A kernel
    is taken for a view that :func:`~unarray._kernels.layout_plan.plan` folds into a batched
    transpose, of at least ``KERNEL_MIN_BYTES``, with at least ``KERNEL_MIN_SIDE`` rows and columns,
    or runs of at least ``KEPT_RUN_MIN_BYTES`` where the inner axis stays inner (the measurements
    behind each constant: docs/design-notes.md).
    """
    return _decide(b, x)[0]


def _decide(b: Any, x: Any) -> tuple[str, Any]:
    # (the route, the plan where a kernel runs)
    name = b.name
    if name in _NO_STRIDES:
        return "as is", None
    if name == "numpy":
        return _numpy_trivial(x), None
    if name == "mlx":  # strides MLX keeps to itself: its own compacting call
        return "native", None
    if name == "torch":
        import torch

        if x.layout != torch.strided:
            raise UnsupportedError(f"a {x.layout} tensor has no strides to compact; call x.to_dense() first",
                                   op="ascontiguousarray", backend=name)
        how = _torch_trivial(x)
        if how is not None:
            return how, None
        if x.is_conj() or x.is_neg() or type(x) is not torch.Tensor:
            return "native", None
        if (x.requires_grad and torch.is_grad_enabled()) or torch.compiler.is_compiling():
            return "native", None
        kind = "cuda" if torch.version.hip is None and _cuda_kernels() is not None else "triton"
        p = _plan_if_worth(kind, "torch", tuple(x.shape), tuple(x.stride()), x.element_size())
        if p is None or (kind == "cuda" and not _cuda_kernels().transposable(x.element_size(), p, x.data_ptr())):
            return "native", None
        if min(p.rows, p.cols) < KERNEL_MIN_SIDE["torch"] and x.data_ptr() % 16:
            return "native", None  # the few-rows kernel needs 16-byte words; torch's own copy beats the skinny tile
        return kind, p
    if name == "numba":
        if x.is_c_contiguous():
            return "as is", None
        if _cuda_kernels() is None:
            raise UnsupportedError("a non-contiguous Numba device array is compacted through CuPy, which is "
                                   "not installed; install cupy, or hand it over with ua.to(x, 'torch')",
                                   op="ascontiguousarray", backend=name)
        import cupy

        return "cuda", _cupy_plan(cupy.asarray(x))
    if name == "cupy":
        how = _cupy_trivial(x)
        if how is not None:  # first: a small array goes native without planning
            return how, None
        p = _cupy_plan(x)
        return ("native", None) if p is None else ("cuda", p)
    raise UnsupportedError(f"no compacting route for {name} arrays", op="ascontiguousarray", backend=name)


@functools.lru_cache(maxsize=1024)
def _plan_if_worth(kernel: str, lib: str, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> Any:
    # The plan where ``kernel`` ("cuda" or "triton") is worth running on ``lib``'s view, else None
    # (cached: a repeated layout is planned once).
    from unarray._kernels.layout_plan import plan

    if any(s < 0 for s in strides) or _size(shape) * itemsize < KERNEL_MIN_BYTES[kernel]:
        return None
    p = plan(shape, strides)
    if p is None:
        return None
    run = p.vec * itemsize
    if p.vec > 1:
        return p if run >= KEPT_RUN_MIN_BYTES else None
    if kernel == "triton" and run > TRITON_MAX_ELEMENT_BYTES:
        return None
    if min(p.rows, p.cols) >= KERNEL_MIN_SIDE[lib]:
        return p
    # A few rows into 16-byte words (NCHW -> NHWC with 3 channels) beat every library's own copy.
    return p if kernel == "cuda" and _cuda_kernels() is not None and _cuda_kernels().few_rows(p, itemsize, 0, 0) \
        else None


def _cupy_plan(x: Any) -> Any:
    # The plan of a CuPy view where the CUDA C kernel takes it and is worth it, else None.
    if x.flags.c_contiguous or any(s % x.itemsize for s in x.strides):
        return None
    p = _plan_if_worth("cuda", "cupy", x.shape, tuple(s // x.itemsize for s in x.strides), x.itemsize)
    return p if p is not None and _cuda_kernels().transposable(x.itemsize, p, x.data.ptr) else None


def _materialise(b: Any, x: Any, how: str, p: Any) -> Any:
    if how == "as is":
        return x
    name = b.name
    if how == "native":
        if name == "numpy":
            import numpy as np

            return np.ascontiguousarray(x)
        if name == "torch":
            return x.contiguous()
        if name == "mlx":
            return b.native.contiguous(x)
        import cupy

        return cupy.ascontiguousarray(x)
    if name == "torch":
        import torch

        if how == "triton":
            from unarray._kernels import transpose_triton

            with torch.cuda.device(x.device):
                return transpose_triton.transpose(x, p)
        import cupy

        out = torch.empty_like(x, memory_format=torch.contiguous_format)
        index = x.get_device()
        with cupy.cuda.Device(index):
            _cuda_kernels().launch(x.data_ptr(), out.data_ptr(), x.element_size(), p, _torch_stream(torch, index),
                                   index)
        return out
    import cupy

    if name == "numba":
        from numba import cuda

        c = cupy.asarray(x)  # a zero-copy view through __cuda_array_interface__
        c = cupy.ascontiguousarray(c) if p is None else _cuda_kernels().transpose(c, p)
        view: Any = cuda.as_cuda_array
        return view(c)  # a view of the new array, which it keeps alive
    return _cuda_kernels().transpose(x, p)


def kernel_name(b: Any, x: Any) -> str:
    """What ``ua.explain("ascontiguousarray", x)`` reports as the kernel."""
    how, p = _decide(b, x)
    if how == "as is" and b.name in _NO_STRIDES:
        return f"none ({b.name} arrays carry no strides: x is returned as is)"
    if how == "as is":
        return "none (already C-contiguous: x is returned as is)"
    if how == "native":
        return {"numpy": "numpy.ascontiguousarray", "torch": "torch.Tensor.contiguous",
                "mlx": "mlx.core.contiguous"}.get(
            b.name, "cupy.ascontiguousarray")
    if p is None:
        return "cupy.ascontiguousarray (on a CuPy view)"
    itemsize = x.element_size() if b.name == "torch" else x.dtype.itemsize
    if how == "triton":
        what = "unarray._kernels.transpose_triton (Triton tiled transpose"
    else:
        ptr = x.data_ptr() if b.name == "torch" else _cupy_of(b, x).data.ptr
        what = (f"unarray._kernels.transpose_cupy.{_cuda_kernels().kernel(p, itemsize, ptr % 16)} (CUDA C"
                + (", on torch's stream" if b.name == "torch" else ""))
    return f"{what}: {p.n_batch} x {p.rows} x {p.cols} of {p.vec * itemsize}-byte elements)"


def _cupy_of(b: Any, x: Any) -> Any:
    if b.name == "numba":
        import cupy

        return cupy.asarray(x)
    return x


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _torch_stream(torch: Any, index: int) -> int:
    # torch's current stream on the device, as a raw handle (the kernels launch on it).
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return int(raw(index)) if raw is not None else int(torch.cuda.current_stream(index).cuda_stream)


@functools.cache
def _cuda_kernels() -> Any:
    # The CUDA C kernels' module, or None where CuPy cannot be imported.
    try:
        from unarray._kernels import transpose_cupy
    except Exception:
        return None
    return transpose_cupy


@functools.cache
def _has_triton() -> bool:
    try:
        import triton  # noqa: F401
    except Exception:
        return False
    return True
