# ruff: noqa: B023  (each timed closure runs inside the iteration that binds its variables)
"""Per-kernel SDPA timings on one GPU for the benchmark shapes, float16 and bfloat16 (steady state).

    python benchmarks/gpu/sdpa_kernels.py
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from attention_gpu import SHAPES, torch_time  # the attention benchmark's shapes and steady-state timing
from torch.nn.attention import SDPBackend, sdpa_kernel

KERNELS = {"cuDNN": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
           "efficient": SDPBackend.EFFICIENT_ATTENTION}


def main() -> None:
    print(f"{'dtype':9s} {'shape':18s} causal " + " ".join(f"{k:>10s}" for k in KERNELS))
    for dtype in (torch.float16, torch.bfloat16):
        for shape in SHAPES:
            q, k, v = (torch.randn(shape, device="cuda", dtype=dtype) for _ in range(3))
            for causal in (False, True):
                flops = 4 * shape[0] * shape[1] * shape[2] ** 2 * shape[3] / (2 if causal else 1)
                cells = []
                for kb in KERNELS.values():
                    try:
                        with sdpa_kernel([kb]):
                            ms, _ = torch_time(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                        cells.append(f"{flops / ms / 1e9:10.1f}")
                    except Exception:
                        cells.append(f"{'-':>10s}")
                print(f"{str(dtype)[6:]:9s} {str(shape):18s} {causal!s:6s} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
