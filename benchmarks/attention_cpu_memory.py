"""How much extra memory does attention take on the CPU as the sequence grows, blocked against the math path?

Peak extra memory of attention on the CPU against sequence length: unarray's blocked
online-softmax path vs the math path (scores materialised), NumPy float32 inputs.

Peak extra memory = the highest traced allocation during the call beyond the inputs
(tracemalloc sees NumPy's buffers). The math path is measured up to S = 8192; beyond
that its need is Sq * Sk * 4 bytes times the measured factor (scores, probabilities).

    python benchmarks/attention_cpu_memory.py   # writes benchmarks/results/attention_cpu_memory.{json,md,png}
"""

from __future__ import annotations

import json
import math
import pathlib
import time
import tracemalloc
from typing import Any

import numpy as np

import unarray as ua
from unarray._backends import attention_blocked as _attention

H, D = 1, 64
SIZES = [512, 1024, 2048, 4096, 8192, 16384]
MATH_MAX = 16384  # the math path fits in memory here (about 1 GiB of scores): measured, not estimated
OUT = pathlib.Path(__file__).parent / "results"


def math_path(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = q @ np.swapaxes(k, -1, -2) * np.float32(1 / math.sqrt(q.shape[-1]))
    s -= s.max(-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(-1, keepdims=True)
    return s @ v


def peak(fn: Any, *args: Any) -> tuple[int, float, Any]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    t = time.perf_counter()
    out = fn(*args)
    dt = time.perf_counter() - t
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return top - base, dt, out


def main() -> None:
    rows = []
    factor = None
    warm = np.ones((1, H, 8, D), np.float32)
    ua.scaled_dot_product_attention(warm, warm, warm)  # imports and caches outside the measurement
    for s in SIZES:
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((1, H, s, D), dtype=np.float32) for _ in range(3))
        blocked, t_b, out_b = peak(ua.scaled_dot_product_attention, q, k, v)
        row: dict[str, Any] = {"S": s, "blocked_peak_bytes": blocked, "blocked_s": round(t_b, 3),
                               "output_bytes": int(out_b.nbytes)}
        if s <= MATH_MAX:
            m, t_m, out_m = peak(math_path, q, k, v)
            factor = m / (s * s * 4)
            row.update(math_peak_bytes=m, math_s=round(t_m, 3), math_measured=True,
                       max_abs_diff=float(np.abs(out_m - out_b).max()))
        else:
            row.update(math_peak_bytes=int((factor or 1.0) * s * s * 4), math_measured=False)
        row["ratio"] = row["blocked_peak_bytes"] / row["math_peak_bytes"]
        rows.append(row)
        print(f"S={s:6d} blocked {blocked / 2**20:8.1f} MiB  math {row['math_peak_bytes'] / 2**20:9.1f} MiB"
              f"{'' if row['math_measured'] else ' (from S*S*4*factor)'}  ratio {row['ratio']:.4f}")
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"inputs": f"NumPy float32, B=1, H={H}, D={D}, Sq=Sk=S, not causal",
            "blocks": f"{_attention.BLOCK_Q}x{_attention.BLOCK_K}",
            "numpy": np.__version__}
    (OUT / "attention_cpu_memory.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = ["# Attention on the CPU: peak extra memory vs sequence length", "",
             f"{meta['inputs']}; peak traced allocation during the call (tracemalloc), inputs excluded.", "",
             "| S | blocked (MiB) | math (MiB) | blocked / math | blocked time (s) | math time (s) |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        mm = f"{r['math_peak_bytes'] / 2**20:.1f}" + ("" if r["math_measured"] else " (est.)")
        lines.append(f"| {r['S']} | {r['blocked_peak_bytes'] / 2**20:.1f} | {mm} | {r['ratio']:.4f} | "
                     f"{r['blocked_s']} | {r.get('math_s', '-')} |")
    (OUT / "attention_cpu_memory.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        sizes = [r["S"] for r in rows]
        ax.loglog(sizes, [r["blocked_peak_bytes"] / 2**20 for r in rows], "o-", label="unarray blocked")
        ax.loglog([r["S"] for r in rows], [r["math_peak_bytes"] / 2**20 for r in rows], "s--", label="math path")
        ax.set_xlabel("sequence length S")
        ax.set_ylabel("peak extra memory (MiB)")
        ax.set_title(f"attention, NumPy float32, H={H}, D={D}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(OUT / "attention_cpu_memory.png", dpi=120)
    except ImportError as e:
        print(f"no plot: {e}")


if __name__ == "__main__":
    main()
