"""How far does ring attention scale beyond two GPUs? A per-step model of unarray's ring, calibrated on two GPUs.

    python benchmarks/scaling_model.py      # prints the calibration and the predictions (markdown)

The ring (causal, head-tail balanced) runs W steps per rank; at each step a rank computes its queries against one
key/value block while the next block travels to it. Per step:

- compute = CALL_S + FLOPs of the step / PEAK_FLOPS, where the FLOPs of the whole call are 2*B*H*S*S*D (causal)
  and head-tail balancing gives every one of the W*W steps the same share;
- communication = bytes of the K and V block (2 * B*H*(S/W)*D * 2 bytes in bf16) / the link's bandwidth; on
  several hosts the ring crosses the slowest link (InfiniBand) at every step, so that link sets the pace;
- merge = the float32 accumulator's traffic (read and write 4 bytes, the block's 2 bytes) / HBM bandwidth;
- step = max(compute, communication) + merge; the last step has nothing in flight.

A call adds what is not overlapped: the head-tail exchange of the first head group's q, k, v and the last group's
output (half of each, over the link) and FIXED_S (launches, P2P set-up, synchronisation), the one constant fitted
to the two-GPU timings. One GPU runs the whole call as one kernel: CALL_S + FLOPs / PEAK_FLOPS.

Assumptions (H100 SXM, bf16, B=1, H=16, D=128): PEAK_FLOPS and CALL_S from one H100's cuDNN causal attention
(546 TFLOP/s at S=16k, 604 at 32k, docs/scaling_jax.md); NVLink4 through NVSwitch 450 GB/s per direction per GPU
of which NCCL P2P reaches about 80 %; InfiniBand NDR 400 Gb/s per GPU (one NIC per GPU) of which about 90 %;
HBM3 3.35 TB/s of which about 80 % for an element-wise pass.
"""

# ruff: noqa: T201
from __future__ import annotations

import math
from dataclasses import dataclass

B, H, D, BYTES = 1, 16, 128, 2
PEAK_FLOPS = 626e12  # cuDNN causal bf16 on one H100, the large-S limit of the two timings below
CALL_S = 0.25e-3  # per kernel call: the fixed part of the same fit (waves, launch)
NVLINK_BPS = 0.8 * 450e9
IB_BPS = 0.9 * 50e9
HBM_BPS = 0.8 * 3.35e12
HEAD_GROUPS = 4  # ring_rules.head_groups for this shape on 2 ranks (1 from 4 ranks on: more memory headroom)

# Two H200s (the H100's chip; NVLink), causal bf16 attention, B=1 H=16 D=128: throughput of unarray's ring against
# one GPU's best kernel, from benchmarks/gpu/scale_torch.py (docs/scaling.md, "Beyond two GPUs").
MEASURED_2 = {32768: 0.67, 65536: 1.57, 131072: 1.91, 1048576: 2.18}
TOLERANCE = 0.25  # relative, predicted against measured speed-up, at every calibration size


@dataclass(frozen=True)
class Machine:
    name: str
    gpus: int
    link_bps: float  # the slowest link the ring crosses at each step


MACHINES = (Machine("2 GPUs, one host (NVLink)", 2, NVLINK_BPS), Machine("4 GPUs, one host (NVLink)", 4, NVLINK_BPS),
            Machine("8 GPUs, one host (NVSwitch)", 8, NVLINK_BPS), Machine("2 hosts x 8 GPUs (InfiniBand NDR)", 16,
                                                                          IB_BPS))


def flops(s: int) -> float:
    return 2.0 * B * H * s * s * D


def one_gpu_s(s: int) -> float:
    return CALL_S + flops(s) / PEAK_FLOPS


def step_parts(s: int, w: int, link_bps: float) -> tuple[float, float, float]:
    """(compute, communication, merge) seconds of one ring step on ``w`` GPUs."""
    local = B * H * (s // w) * D
    compute = CALL_S + flops(s) / (w * w) / PEAK_FLOPS
    comm = 2 * local * BYTES / link_bps
    merge = local * (4 + 4 + BYTES) / HBM_BPS
    return compute, comm, merge


def ring_s(s: int, w: int, link_bps: float, fixed_s: float) -> float:
    compute, comm, merge = step_parts(s, w, link_bps)
    groups = HEAD_GROUPS if w == 2 else 1
    exposed = 2 * B * H * (s // w) * D * BYTES / groups / link_bps  # q, k, v halves in, output half out
    return (w - 1) * (max(compute, comm) + merge) + compute + merge + exposed + fixed_s


def speedup(s: int, w: int, link_bps: float, fixed_s: float) -> float:
    return one_gpu_s(s) / ring_s(s, w, link_bps, fixed_s)


def fit_fixed() -> float:
    """FIXED_S: least squares on log(speed-up) over the two-GPU timings (a grid, 0 to 20 ms)."""
    best, err = 0.0, math.inf
    for i in range(2001):
        f = i * 1e-5
        e = sum((math.log(speedup(s, 2, NVLINK_BPS, f)) - math.log(m)) ** 2 for s, m in MEASURED_2.items())
        if e < err:
            best, err = f, e
    return best


def table() -> str:
    fixed = fit_fixed()
    lines = [f"Fitted fixed cost per call: {fixed * 1e3:.2f} ms", "",
             "| S | measured, 2 GPUs | model, 2 GPUs | relative error |", "|---|---|---|---|"]
    for s, m in MEASURED_2.items():
        p = speedup(s, 2, NVLINK_BPS, fixed)
        lines.append(f"| {s // 1024}k | {m:.2f} | {p:.2f} | {abs(p - m) / m:.0%} |")
    sizes = [32768, 65536, 131072, 262144, 1048576, 4194304]
    lines += ["", "| machine | " + " | ".join(f"{s // 1024}k" for s in sizes) + " | bound at 1M |",
              "|---|" + "---|" * (len(sizes) + 1)]
    for mc in MACHINES:
        cells = []
        for s in sizes:
            sp = speedup(s, mc.gpus, mc.link_bps, fixed)
            cells.append(f"{sp:.2f} ({sp / mc.gpus:.0%})")
        c, m, _ = step_parts(1 << 20, mc.gpus, mc.link_bps)
        lines.append(f"| {mc.name} | " + " | ".join(cells) + f" | {'compute' if c >= m else 'link'} |")
    lines += ["", "Cells: speed-up over one GPU (parallel efficiency). The link hides behind the block's compute "
              "(compute beyond CALL_S >= communication) from:", ""]
    for mc in MACHINES:
        hidden = [x for x in (1 << k for k in range(12, 24)) if step_parts(x, mc.gpus, mc.link_bps)[0] - CALL_S
                  >= step_parts(x, mc.gpus, mc.link_bps)[1]]
        lines.append(f"- {mc.name}: S = {hidden[0] // 1024 if hidden else '-'}k")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
