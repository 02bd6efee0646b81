"""What does the read-only promise cost on a repeat JAX -> torch handoff, against torch's import and a copy?

The read-only promise: repeat handoff of one JAX array to torch (4 MiB float32 on the CPU).

Usage: python benchmarks/handoff_readonly.py [--n 2000]

Three ways, timed in turns (median µs per call after warm-up): ``ua.to(x, "torch", readonly=True)``
(the zero-copy alias, served from the cache on repeat), ``torch.from_dlpack(x)`` (the native import, a
writable alias of the immutable JAX buffer), and ``ua.to(x, "torch")`` (the default: one copy each call).
Prints a Markdown table (machine, versions, ratios to the native import).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import torch  # noqa: E402

import unarray as ua  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2000)
    args = p.parse_args()
    x = jnp.arange(1 << 20, dtype=jnp.float32)  # 4 MiB
    cases = {"ua.to(x, 'torch', readonly=True)": lambda: ua.to(x, "torch", readonly=True),
             "torch.from_dlpack(x)": lambda: torch.from_dlpack(x),
             "ua.to(x, 'torch') (copy)": lambda: ua.to(x, "torch")}
    samples: dict[str, list[int]] = {k: [] for k in cases}
    for fn in cases.values():
        for _ in range(50):
            fn()
    names = list(cases)
    rng = random.Random(0)
    for _ in range(20):
        rng.shuffle(names)
        for k in names:
            fn = cases[k]
            for _ in range(args.n // 20 if "copy" not in k else max(1, args.n // 200)):
                t0 = time.perf_counter_ns()
                fn()
                samples[k].append(time.perf_counter_ns() - t0)
    med = {k: statistics.median(v) / 1000 for k, v in samples.items()}
    native = med["torch.from_dlpack(x)"]
    print(f"Machine: {platform.machine()} {platform.processor() or ''}, Python {platform.python_version()}, "
          f"torch {torch.__version__}, jax {jax.__version__}; `python benchmarks/handoff_readonly.py --n {args.n}`\n")
    print("| call | median µs | vs torch.from_dlpack |")
    print("| --- | ---: | ---: |")
    for k, v in med.items():
        print(f"| `{k}` | {v:.2f} | {v / native:.2f}x |")


if __name__ == "__main__":
    main()
