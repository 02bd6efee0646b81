"""Host time of a JAX decode step through ``ua.scaled_dot_product_attention`` against the native jitted call, on
JAX's CPU backend with arrays small enough that the kernel costs little: what the route adds per call in Python.

Rows (bshd, GQA 4/2 heads, D=16, S keys): a decode step (L=1, is_causal: every key reachable, the native call
unmasked), a sliding-window decode step (L=1, window=(W, 0): the native call on the W+1 sliced keys), a few rows
under a window (L=4: the native call with the (L, W+4) band mask), each in float32 and bfloat16. Time per call:
the median over 15 alternating rounds of the best of 3 runs of 100 calls, after 50 warm-up calls.
The torch rows are the same cases on torch's CPU backend (bhsd, torch's layout), against
``F.scaled_dot_product_attention`` with ``enable_gqa`` on the same keys, the sliced keys, or the band mask.

    python benchmarks/attention_masks_host.py [jax|torch]
"""

from __future__ import annotations

import importlib
import platform
import statistics
import sys
import timeit

import jax
import jax.numpy as jnp
import numpy as np

import unarray as ua

S, W, ROUNDS = 256, 64, 15


def rows(dt: object) -> dict[str, tuple[object, object]]:
    rng = np.random.default_rng(0)
    k, v = (jnp.asarray(rng.standard_normal((1, S, 2, 16)), dt) for _ in range(2))
    q1, q4 = (jnp.asarray(rng.standard_normal((1, n, 4, 16)), dt) for n in (1, 4))
    full = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v))
    sliced = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k[:, S - W - 1:], v[:, S - W - 1:]))
    j, i = np.arange(W + 4)[None, :], np.arange(4)[:, None]
    band = jnp.asarray((j >= i) & (j <= i + W))[None, None]  # query i at key i + W of the W + 4 sliced keys
    banded = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k[:, S - W - 4:], v[:, S - W - 4:], mask=band))
    ours = ua.scaled_dot_product_attention
    return {
        "decode L1, causal": (lambda: ours(q1, k, v, is_causal=True, layout="bshd"), lambda: full(q1, k, v)),
        f"decode L1, window ({W}, 0)": (lambda: ours(q1, k, v, is_causal=True, window=(W, 0), layout="bshd"),
                                        lambda: sliced(q1, k, v)),
        f"L4, window ({W}, 0)": (lambda: ours(q4, k, v, is_causal=True, window=(W, 0), layout="bshd"),
                                 lambda: banded(q4, k, v)),
    }


def torch_rows(dt: object) -> dict[str, tuple[object, object]]:
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(0)
    k, v = (torch.asarray(rng.standard_normal((1, 2, S, 16)), dtype=dt) for _ in range(2))  # type: ignore[arg-type]
    q1, q4 = (torch.asarray(rng.standard_normal((1, 4, n, 16)), dtype=dt) for n in (1, 4))  # type: ignore[arg-type]
    j, i = torch.arange(W + 4)[None, :], torch.arange(4)[:, None]
    band = (j >= i) & (j <= i + W)  # query i at key i + W of the W + 4 sliced keys
    sdpa, ours = F.scaled_dot_product_attention, ua.scaled_dot_product_attention
    return {
        "decode L1, causal": (lambda: ours(q1, k, v, is_causal=True), lambda: sdpa(q1, k, v, enable_gqa=True)),
        f"decode L1, window ({W}, 0)": (lambda: ours(q1, k, v, is_causal=True, window=(W, 0)),
                                        lambda: sdpa(q1, k[:, :, S - W - 1:], v[:, :, S - W - 1:], enable_gqa=True)),
        f"L4, window ({W}, 0)": (lambda: ours(q4, k, v, is_causal=True, window=(W, 0)),
                                 lambda: sdpa(q4, k[:, :, S - W - 4:], v[:, :, S - W - 4:], attn_mask=band,
                                              enable_gqa=True)),
    }


def per_call(f: object) -> float:
    return min(timeit.repeat(f, number=100, repeat=3)) / 100 * 1e6  # type: ignore[arg-type]


def main() -> None:
    libs = sys.argv[1:] or ["jax", "torch"]
    torch = importlib.import_module("torch") if "torch" in libs else None
    threads = f"; torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ""
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, {platform.machine()}{threads}; S={S}, GQA 4/2, D=16; "
          "JAX in bshd, torch in bhsd\n")
    print("| library | case | dtype | unarray µs | native µs | unarray - native µs | unarray / native |")
    print("|---|---|---|---:|---:|---:|---:|")
    for lib in libs:
        for dt in ("float32", "bfloat16"):
            make, sync = (rows, jax.block_until_ready) if lib == "jax" else (torch_rows, lambda x: x)
            for name, (ours, native) in make(getattr(jnp if lib == "jax" else torch, dt)).items():
                for f in (ours, native):
                    for _ in range(50):
                        sync(f())  # type: ignore[operator]
                a, b = [], []
                for _ in range(ROUNDS):
                    a.append(per_call(ours))
                    b.append(per_call(native))
                ma, mb = statistics.median(a), statistics.median(b)
                print(f"| {lib} | {name} | {dt} | {ma:.1f} | {mb:.1f} | {ma - mb:+.1f} | {ma / mb:.2f} |", flush=True)

if __name__ == "__main__":
    main()
