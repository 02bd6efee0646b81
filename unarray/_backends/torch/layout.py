"""torch's route for ``ua.ascontiguousarray`` (and a handoff's compact copy): ``Tensor.contiguous``, or on CUDA and
ROCm unarray's tiled transpose for a large permuted view (the CUDA C kernel, on torch's current stream, where CuPy
can launch it; Triton on ROCm and without CuPy). The thresholds shared by every library are in
``unarray/_kernels/layout_route.py``."""

from __future__ import annotations

import functools
from typing import Any

import torch

from unarray._errors import UnsupportedError
from unarray._kernels import layout_route as lr
from unarray._kernels.layout_plan import Plan

__all__ = ["MIN_SIDE", "compact", "route"]

# Below this many rows or columns the few-rows kernel needs its 16-byte words lined up (else torch's copy).
MIN_SIDE = 17
_NATIVE = lr.Route("native", "torch.Tensor.contiguous", torch.Tensor.contiguous)
_SMALL = lr.KERNEL_MIN_BYTES["cuda"]


_STRIDED = torch.strided
_contiguous = torch.Tensor.contiguous


def compact(backend: Any, x: torch.Tensor) -> Any:
    # route(x).run(x), the backend's ascontiguousarray (the C path calls it unbound): a CPU or small tensor skips it.
    if x.layout is _STRIDED and (not x.is_cuda or x.nbytes < _SMALL):
        return _contiguous(x)  # (returns x itself where x is compact: the route's "as is")
    return route(x).run(x)


def route(x: torch.Tensor) -> lr.Route:
    """How ``x`` is compacted (the plan that runs and that ``ua.explain`` prints)."""
    if x.layout is not torch.strided:
        raise UnsupportedError(f"a {x.layout} tensor has no strides to compact; call x.to_dense() first",
                               op="ascontiguousarray", backend="torch")
    if x.is_contiguous():
        return lr.AS_IS
    if not x.is_cuda or x.nbytes < _SMALL or x.is_conj() or x.is_neg() or type(x) is not torch.Tensor:
        return _NATIVE
    if (x.requires_grad and torch.is_grad_enabled()) or torch.compiler.is_compiling():
        return _NATIVE  # the kernels copy bits and record no gradient; a trace takes torch's own op
    kernels = lr.cuda_kernels()
    kind = "cuda" if torch.version.hip is None and kernels is not None else "triton"
    size, ptr = x.element_size(), x.data_ptr()
    p = lr.plan_if_worth(kind, MIN_SIDE, tuple(x.shape), tuple(x.stride()), size)
    if p is None or (kind == "cuda" and not kernels.transposable(size, p, ptr)):
        return _NATIVE
    if min(p.rows, p.cols) < MIN_SIDE and ptr % 16:
        return _NATIVE  # the few-rows kernel needs 16-byte words; torch's own copy beats the skinny tile
    if kind == "triton":
        return lr.Route("triton", lr.triton_label(p, size), functools.partial(_triton, p=p), p)
    return lr.Route("cuda", lr.cuda_label(p, size, ptr, ", on torch's stream"), functools.partial(_cuda, p=p), p)


def _triton(x: torch.Tensor, p: Plan) -> torch.Tensor:
    from unarray._kernels import transpose_triton

    with torch.cuda.device(x.device):
        return transpose_triton.transpose(x, p)


def _cuda(x: torch.Tensor, p: Plan) -> torch.Tensor:
    import cupy

    from unarray._backends.torch.handoff import torch_raw_stream

    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    index = x.get_device()
    with cupy.cuda.Device(index):
        lr.cuda_kernels().launch(x.data_ptr(), out.data_ptr(), x.element_size(), p, torch_raw_stream(index), index)
    return out
