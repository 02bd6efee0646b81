"""The torch backend's hot calls (``unarray/_backends/hot_calls.py``): each branch of a hot op that is one torch
function, declared once; the backend binds each to its op (the Python path) and the C fast path reads the same
declaration (``unarray/_fast.c``)."""

from __future__ import annotations

import torch

from unarray import _precision
from unarray._backends.hot_calls import Bound, Gated, HotCall
from unarray._backends.torch import precision as _tp
from unarray._backends.torch.gaps import UINTS, WIDE_UINTS
from unarray._kernels import layout_route as lr

__all__ = ["ARGMAX", "COMPACT", "MATMUL", "MEAN", "SUM", "TINY"]

_EVERY = frozenset(d for d in vars(torch).values() if isinstance(d, torch.dtype))
# Note: torch's float32 CPU matmul takes oneDNN's reduced-precision path only above 16*16*16 multiply-adds (aten
# mkldnn_gemm's checksize), a count numel1*numel2/k bounds: at or below it the switch is skipped.
TINY = 16 * 16 * 16

# every parameter at its default, a plain tensor of a dtype that branch takes (sum and argmax: torch has no
# unsigned accumulation and no wide unsigned kernels, gaps.py)
SUM = HotCall("sum", torch.sum, torch.Tensor, dtypes=_EVERY - frozenset(UINTS), defaults=(None, None, False))
ARGMAX = HotCall("argmax", torch.argmax, torch.Tensor, dtypes=_EVERY - frozenset(WIDE_UINTS), defaults=(None, False))
MEAN = HotCall("mean", torch.mean, torch.Tensor, dtypes=frozenset(d for d in _EVERY if d.is_floating_point),
               defaults=(None, False))
# ascontiguousarray's common case (layout.compact): a strided tensor off CUDA, or a small one on it, is torch's own
# copy, for every dtype; a large CUDA view takes the route and its kernels
COMPACT = HotCall("ascontiguousarray", torch.Tensor.contiguous, torch.Tensor,
                  max_size=Bound("nbytes", lr.KERNEL_MIN_BYTES["cuda"], on="is_cuda", same=("layout", torch.strided)))
# matmul's branches for one dtype: torch's matmul wherever the policy cannot change the result (integers on the CPU
# only, cuBLAS having no integer GEMM; float32 and complex64 on the CPU up to the size oneDNN reduces at, any size
# where the CPU has no reduced-precision path), else float32 and complex64 through the precision switch
MATMUL = HotCall("matmul", torch.matmul, torch.Tensor, arrays=2, policy=Gated(
    anywhere=frozenset({torch.float16, torch.bfloat16, torch.float64, torch.complex128}),
    on_host=frozenset({torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64}),
    reducible=frozenset({torch.float32, torch.complex64}), host="is_cpu",
    limit=TINY if _tp.CPU_REDUCES else -1, flags=_precision, flag="FORCE_ARBITRATION",
    gate=_tp.RUN, wants=_tp.WANT, tracing=_tp.compiling))

