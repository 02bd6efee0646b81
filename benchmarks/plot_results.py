"""What do a GPU run's attention and handoff results look like? (PNGs from the run's JSON, beside it.)

Reads attention_gpu.json and handoff_gpu.json of a run's output folder (``$OUT`` of ``run_all.sh``) and writes
the PNGs beside them; the recorded figures are ``benchmarks/results/attention_h100.png`` and ``handoff_h100.png``.

    python benchmarks/plot_results.py RUN_DIR
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def attention(d: Path) -> None:
    rows = [r for r in json.loads((d / "attention_gpu.json").read_text())["rows"] if r.get("tflops")]
    groups: dict[tuple[str, str, bool], dict[str, float]] = defaultdict(dict)
    for r in rows:
        groups[(r["section"], "x".join(map(str, r["shape"])), r["causal"])][r["impl"]] = r["tflops"]
    fig, axes = plt.subplots(1, 3, figsize=(18, 5), sharey=True)
    for ax, section in zip(axes, ("torch", "jax", "cupy"), strict=True):
        keys = [k for k in groups if k[0] == section]
        impls = sorted({i for k in keys for i in groups[k]}, key=lambda s: (not s.startswith("unarray"), s))
        x = np.arange(len(keys))
        w = 0.8 / max(1, len(impls))
        for j, impl in enumerate(impls):
            ax.bar(x + j * w, [groups[k].get(impl, 0) for k in keys], w, label=impl)
        ax.set_xticks(x + 0.4 - w / 2, [f"{k[1]}{' causal' if k[2] else ''}" for k in keys], rotation=30, ha="right")
        ax.set_title(f"{section} inputs")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("TFLOP/s (forward, median)")
    fig.suptitle("Attention on an H100: unarray vs the native kernels, same run")
    fig.tight_layout()
    fig.savefig(d / "attention_gpu.png", dpi=100)


def handoff(d: Path) -> None:
    rows = [r for r in json.loads((d / "handoff_gpu.json").read_text())["matrix"]
            if "first_us" in r and not r.get("again")]  # "again": the first pair timed a second time
    labels = [f"{r['src']}→{r['dst']}" for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(12, 4.5))
    best = [min(r["native_us"].values()) for r in rows]
    for k, (vals, lab) in enumerate([(best, "best native"), ([r["first_us"] for r in rows], "unarray first"),
                                     ([r["repeated_us"] for r in rows], "unarray repeated (cache)")]):
        ax.bar(x + (k - 1) * 0.27, vals, 0.27, label=lab)
    ax.set_yscale("log")
    ax.set_ylabel("µs per handoff (median host time, log)")
    ax.set_xticks(x, labels, rotation=40, ha="right")
    ax.set_title("CUDA handoff on an H100, 1024x1024 float32, zero bytes copied on every pair")
    ax.legend()
    fig.tight_layout()
    fig.savefig(d / "handoff_gpu.png", dpi=100)


def dispatch(d: Path) -> None:
    rows: list[dict[str, Any]] = json.loads((d / "dispatch_h100.json").read_text())["rows"]
    labels = [f"{r['backend']} {r['op']}" for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(14, 4.5))
    ax.bar(x - 0.2, [r["overhead_us"] for r in rows], 0.4, label="unarray - native")
    ax.bar(x + 0.2, [r.get("compat_us", np.nan) - r["native_us"] for r in rows], 0.4, label="array-api-compat - native")
    ax.axhline(0.5, color="k", lw=0.8, ls="--", label="0.5 µs target")
    ax.set_ylabel("µs added per call (median)")
    ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=7)
    ax.set_title("Per-call cost on tiny arrays (H100 host)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(d / "dispatch_h100.png", dpi=100)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out")
    for fn in (attention, handoff, dispatch):
        try:
            fn(out)
        except (OSError, KeyError) as e:
            print(f"{fn.__name__}: {e}")
