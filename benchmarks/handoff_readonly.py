"""What does the read-only promise cost on a repeat JAX -> torch (or CuPy) handoff, against import and copy?

The read-only promise: repeat handoff of one JAX array to torch (and, on a GPU, to CuPy), 4 MiB float32.

Usage: python benchmarks/handoff_readonly.py [--n 2000] [--device cpu|cuda]

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import torch  # noqa: E402

import unarray as ua  # noqa: E402


def _cases(x: Any, target: str) -> dict[str, Callable[[], Any]]:
    native: Any = torch.from_dlpack if target == "torch" else __import__("cupy").from_dlpack
    return {f"ua.to(x, '{target}', readonly=True)": lambda: ua.to(x, target, readonly=True),
            f"{native.__module__.split('.')[0]}.from_dlpack(x)": lambda: native(x),
            f"ua.to(x, '{target}') (copy)": lambda: ua.to(x, target)}


def _sync(target: str) -> None:
    if target == "torch":
        torch.cuda.synchronize()
    else:
        __import__("cupy").cuda.Device().synchronize()


def _time(cases: dict[str, Callable[[], Any]], n: int, gpu: str | None) -> dict[str, float]:
    """Median µs per call. The alias and the native import enqueue no device work: host time. The copy
    does, so on a GPU each of its calls is synchronised and its time runs to the copy's end."""
    samples: dict[str, list[int]] = {k: [] for k in cases}
    for fn in cases.values():
        for _ in range(50):
            fn()
    names = list(cases)
    rng = random.Random(0)
    for _ in range(20):
        rng.shuffle(names)
        for k in names:
            fn, copy = cases[k], "copy" in k
            for _ in range(n // 20 if not copy else max(1, n // 200)):
                if copy and gpu:
                    _sync(gpu)
                t0 = time.perf_counter_ns()
                fn()
                if copy and gpu:
                    _sync(gpu)
                samples[k].append(time.perf_counter_ns() - t0)
    return {k: statistics.median(v) / 1000 for k, v in samples.items()}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = p.parse_args()
    x = jnp.arange(1 << 20, dtype=jnp.float32)  # 4 MiB
    targets = ["torch"]
    if args.device == "cuda":
        x = jax.device_put(x, jax.devices("gpu")[0])
        targets.append("cupy")
    gpu = ""
    if args.device == "cuda":
        gpu = f", {torch.cuda.get_device_name()}, cupy {__import__('cupy').__version__}"
    print(f"Machine: {platform.machine()} {platform.processor() or ''}{gpu}, Python {platform.python_version()}, "
          f"torch {torch.__version__}, jax {jax.__version__}; "
          f"`python benchmarks/handoff_readonly.py --n {args.n} --device {args.device}`\n")
    for target in targets:
        med = _time(_cases(x, target), args.n, target if args.device == "cuda" else None)
        native = next(v for k, v in med.items() if k.endswith(".from_dlpack(x)"))
        name = next(k for k in med if k.endswith(".from_dlpack(x)"))
        print(f"| JAX -> {target}: call | median µs | vs {name} |")
        print("| --- | ---: | ---: |")
        for k, v in med.items():
            print(f"| `{k}` | {v:.2f} | {v / native:.2f}x |")
        print()


if __name__ == "__main__":
    main()
