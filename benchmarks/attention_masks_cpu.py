"""How fast, and in how much memory, does attention run a sliding window or segment ids on the CPU, against the
same call with the dense boolean mask (and torch's SDPA with that mask, the native reference)?

For S in SIZES, float32, B=1, H=2, D=32: a causal window of 256 keys (window=(256, 0)) and packed documents
(segment ids, document lengths drawn from 256..4096). Each form runs through ``ua.scaled_dot_product_attention``
on NumPy and torch arrays, then the same call with the dense (S, S) boolean mask built from the definition, and
``torch.nn.functional.scaled_dot_product_attention`` with that mask. Time: the minimum over alternating rounds
(the dense calls once at the largest S). Peak: the highest bytes allocated through malloc (NumPy's and torch's
buffers), sampled every millisecond during the call, beyond those before it (the dense mask, built before the
call, is reported apart).

    python benchmarks/attention_masks_cpu.py            # prints the Markdown table
    python benchmarks/attention_masks_cpu.py --sizes 8192
"""

from __future__ import annotations

import argparse
import ctypes
import platform
import threading
import time
from typing import Any

import numpy as np
import torch

import unarray as ua

H, D, WINDOW = 2, 32, 256


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                                               "uordblks", "fordblks", "keepcost")]


_mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
_mallinfo2.restype = _MallInfo2


def allocated() -> int:
    """Bytes malloc has handed out and not taken back (NumPy's and torch's CPU buffers alike; glibc >= 2.33)."""
    m = _mallinfo2()
    return int(m.uordblks + m.hblkhd)


def measure(fn: Any, rounds: int) -> tuple[float, int, Any]:
    """Best time over ``rounds``, the peak bytes allocated beyond the start while ``fn`` runs, its result."""
    best, top, out = float("inf"), 0, None
    for _ in range(rounds):
        base, peak, done = allocated(), [0], threading.Event()

        def watch(base: int = base, peak: list[int] = peak, done: threading.Event = done) -> None:
            while not done.wait(0.001):
                peak[0] = max(peak[0], allocated() - base)

        w = threading.Thread(target=watch)
        w.start()
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
        done.set()
        w.join()
        top = max(top, peak[0])
    return best, top, np.asarray(out)


def forms(s: int, rng: np.random.Generator) -> dict[str, tuple[dict[str, Any], np.ndarray]]:
    lengths: list[int] = []
    while sum(lengths) < s:
        lengths.append(int(rng.integers(256, 4097)))
    ids = np.repeat(np.arange(len(lengths)), lengths)[:s].astype(np.int32)
    p = np.arange(s)
    window = (p[None, :] <= p[:, None]) & (p[None, :] >= p[:, None] - WINDOW)
    return {f"window ({WINDOW}, 0), causal": ({"window": (WINDOW, 0), "is_causal": True}, window),
            f"segment ids ({len(lengths)} documents)": ({"segment_ids": ids}, ids[:, None] == ids[None, :])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[8192, 16384, 32768])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--numpy-dense-max", type=int, default=8192, help="NumPy's dense-mask call computes every "
                    "block in NumPy ops (about 20 s at 8192 on two cores): skipped above this S")
    ap.add_argument("--torch-threads", type=int, default=None, help="torch.set_num_threads for the run (default: "
                    "torch's own); on a loaded VM two threads stall on OpenMP barriers between small calls")
    args = ap.parse_args()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    print(f"torch {torch.__version__}, numpy {np.__version__}, {platform.machine()}, torch threads "
          f"{torch.get_num_threads()}; B=1, H={H}, D={D}, float32\n")
    print("| S | mask | library | structured (s) | dense mask, same call (s) | torch SDPA, dense mask (s) | "
          "dense / structured | peak MiB: structured / dense / SDPA | dense mask MiB |")
    print("|---:|---|---|---:|---:|---:|---:|---|---:|")
    w, wi = np.ones((1, H, 64, D), np.float32), np.zeros(64, np.int32)
    for a, i in ((w, wi), (torch.from_numpy(w), torch.from_numpy(wi))):  # first calls (imports) outside the timing
        ua.scaled_dot_product_attention(a, a, a, window=(8, 0), is_causal=True, segment_ids=i)
        ua.scaled_dot_product_attention(a, a, a, mask=i[:, None] == i[None, :])
    for s in args.sizes:
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((1, H, s, D), dtype=np.float32) for _ in range(3))
        for name, (kw, dense) in forms(s, rng).items():
            tq, tk, tv, tm = (torch.from_numpy(a) for a in (q, k, v, dense))
            for lib, (a, b, c, m) in (("numpy", (q, k, v, dense)), ("torch", (tq, tk, tv, tm))):
                kws = dict(kw, segment_ids=torch.from_numpy(kw["segment_ids"])) if lib == "torch" and \
                    "segment_ids" in kw else kw
                dense_rounds = 1 if s == max(args.sizes) else args.rounds
                t_s, m_s, out = measure(lambda a=a, b=b, c=c, kws=kws: ua.scaled_dot_product_attention(a, b, c, **kws),
                                        args.rounds)
                cells = []
                if lib == "torch" or s <= args.numpy_dense_max:
                    t_d, m_d, ref = measure(lambda a=a, b=b, c=c, m=m: ua.scaled_dot_product_attention(a, b, c, mask=m),
                                            dense_rounds)
                    assert np.abs(out - ref).max() < 1e-4, np.abs(out - ref).max()
                    cells = [(t_d, m_d)]
                if lib == "torch":
                    cells.append(measure(lambda t=(tq, tk, tv, tm): torch.nn.functional.scaled_dot_product_attention(
                        *t[:3], attn_mask=t[3]), dense_rounds)[:2])
                t, mem = ([f"{c[0]:.3f}" for c in cells] + ["-", "-"])[:2], [f"{c[1] / 2**20:.0f}" for c in cells]
                ratio = f"{min(c[0] for c in cells) / t_s:.1f}x" if cells else "-"
                print(f"| {s} | {name} | {lib} | {t_s:.3f} | {t[0]} | {t[1]} | {ratio} | "
                      f"{' / '.join([f'{m_s / 2**20:.0f}', *mem])} | {dense.nbytes / 2**20:.0f} |", flush=True)


if __name__ == "__main__":
    main()
