# ruff: noqa: B023  (each timed closure runs inside the iteration that binds its variables)
"""Per-kernel SDPA timings on one GPU for the benchmark shapes, float16 and bfloat16 (steady state).

    python benchmarks/gpu/sdpa_kernels.py
"""

from __future__ import annotations

import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(4, 16, 4096, 128), (1, 16, 16384, 128), (16, 16, 1024, 64)]
KERNELS = {"cuDNN": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
           "efficient": SDPBackend.EFFICIENT_ATTENTION}


def per_call_ms(fn: object, reps: int = 15, inner: int = 8) -> float:
    for _ in range(3):
        fn()  # type: ignore[operator]
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()  # type: ignore[operator]
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / inner)
    return statistics.median(times)


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
                            ms = per_call_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                        cells.append(f"{flops / ms / 1e9:10.1f}")
                    except Exception:
                        cells.append(f"{'-':>10s}")
                print(f"{str(dtype)[6:]:9s} {str(shape):18s} {causal!s:6s} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
