"""The torch backend's common branches registered with the C hot path (``unarray._switch``, see
``unarray/_hot.py``): each is one torch function that the backend's own op or method calls for those
arguments, so the C path calls it without the method's frame."""

from __future__ import annotations

from typing import Any

import torch

from unarray import _precision
from unarray._backends.torch import precision as _tp
from unarray._kernels import layout_route as lr

__all__ = ["register"]


def register(switch: Any, cls: Any, *, uints: frozenset[Any], wide_uints: frozenset[Any], limit: int) -> None:
    """Register the backend class ``cls``'s sum, argmax, mean, ascontiguousarray and matmul branches with the C
    module ``switch`` (None: not built). ``uints``, ``wide_uints``: the dtypes sum and argmax take elsewhere;
    ``limit``: matmul's multiply-adds up to which no policy changes a CPU float32 result (-1: any size)."""
    if switch is None:
        return
    tensor = torch.Tensor
    every = frozenset(d for d in vars(torch).values() if isinstance(d, torch.dtype))
    # every parameter at its default, a plain tensor of a dtype that branch takes
    switch.one_default(cls.sum, torch.sum, tensor, every - uints)
    switch.one_default(cls.argmax, torch.argmax, tensor, every - wide_uints)
    switch.one_default(cls.mean, torch.mean, tensor, frozenset(d for d in every if d.is_floating_point))
    # ascontiguousarray's common case (layout.compact): a strided tensor off CUDA, or a small one on it, is
    # torch's own copy (x itself where compact), for every dtype (None: no dtype read); a large CUDA view takes the
    # route and its kernels
    switch.one_default(cls.ascontiguousarray, torch.Tensor.contiguous, tensor, None, None,
                       (("layout", torch.strided), "is_cuda", "nbytes", lr.KERNEL_MIN_BYTES["cuda"]))
    # matmul's branches for one dtype: torch's matmul wherever the policy cannot change the result (integers on
    # the CPU only, cuBLAS having no integer GEMM; float32 and complex64 on the CPU up to the size oneDNN reduces
    # at), else float32 and complex64 through the precision switch
    switch.one_gated(cls.matmul, torch.matmul, tensor,
                     frozenset({torch.float16, torch.bfloat16, torch.float64, torch.complex128}),
                     frozenset({torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64}),
                     frozenset({torch.float32, torch.complex64}), "is_cpu", limit, _precision, "FORCE_ARBITRATION",
                     _tp.RUN, _tp.WANT)
