"""What does a handoff that must copy (unaligned CPU buffers to JAX) cost against JAX's own copies?

A handoff that must copy: NumPy and torch CPU buffers that are not 64-byte aligned, handed to JAX on
the CPU. unarray's first handoff (an empty cache each call) against the native copies (``jnp.array``,
``jnp.asarray``, ``jax.device_put``), timed interleaved, medians after warm-up.

    JAX_PLATFORMS=cpu python benchmarks/handoff_copy.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import timeit
from pathlib import Path
from typing import Any

import numpy as np


def _unaligned(n: int) -> np.ndarray:
    raw = np.random.default_rng(n).standard_normal(n + 32).astype(np.float32)
    start = next(i for i in range(1, 16) if (raw.ctypes.data + 4 * i) % 64)
    return raw[start:start + n]


def run(number: int, repeats: int) -> list[dict[str, Any]]:
    import jax
    import jax.numpy as jnp

    import unarray as ua
    from unarray.interop import _cache

    rows = []
    for n in (1024, 65536, 1 << 20):
        a = _unaligned(n)
        sources = {"numpy": a}
        try:
            import torch

            sources["torch"] = torch.from_numpy(a)
        except ImportError:
            pass
        for name, x in sources.items():
            host = a

            def first(x: Any = x) -> Any:
                _cache.clear()
                return ua.to(x, "jax")

            calls = {"unarray first": first, "jnp.array": lambda h=host: jnp.array(h),
                     "jnp.asarray": lambda h=host: jnp.asarray(h), "jax.device_put": lambda h=host: jax.device_put(h)}
            for f in calls.values():  # warm-up, and block on the results
                jax.block_until_ready(f())
            times: dict[str, list[float]] = {k: [] for k in calls}
            for _ in range(repeats):
                for k, f in calls.items():
                    times[k].append(timeit.timeit(lambda f=f: jax.block_until_ready(f()), number=number) / number * 1e6)
            med = {k: statistics.median(v) for k, v in times.items()}
            best = min(v for k, v in med.items() if k != "unarray first")
            rows.append({"source": name, "bytes": a.nbytes, **{k: round(v, 2) for k, v in med.items()},
                         "unarray / best native": round(med["unarray first"] / best, 2)})
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--number", type=int, default=200)
    p.add_argument("--repeats", type=int, default=9)
    args = p.parse_args()
    rows = run(args.number, args.repeats)
    import jax

    meta = {"machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
            "jax": jax.__version__, "numpy": np.__version__, "command": "JAX_PLATFORMS=cpu python "
            "benchmarks/handoff_copy.py"}
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "handoff_copy.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
