"""What does a handoff that must copy a JAX GPU array (to torch, CuPy, Numba) cost, timed to the copy's end?

200 calls of ``to(x, target)`` on a 4 MiB float32 JAX array on the GPU, synchronised, the fastest of 5 loops
(µs per call), beside torch's own ``from_dlpack(x).clone()``. One line per run, as a dict, so that two
checkouts can be run in alternating rounds:

    python benchmarks/gpu/jax_copies.py [CHECKOUT]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import torch  # noqa: E402

import unarray as ua  # noqa: E402


def _loop(fn: Any, n: int = 200) -> float:
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    to = ua.to
    x = jax.device_put(jnp.arange(1 << 20, dtype=jnp.float32), jax.devices("gpu")[0])
    cases = {"ua.to(jax, 'torch')": lambda: to(x, "torch"),
             "native from_dlpack+clone": lambda: torch.from_dlpack(x).clone(),
             "ua.to(jax, 'cupy')": lambda: to(x, "cupy"), "ua.to(jax, 'numba')": lambda: to(x, "numba")}
    out = {}
    for name, fn in cases.items():
        try:
            out[name] = min(_loop(fn) for _ in range(5))
        except Exception:  # noqa: BLE001 - a library missing on the machine: no figure
            out[name] = float("nan")
    print(repr(out))


if __name__ == "__main__":
    main()
