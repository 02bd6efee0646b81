"""How many Python calls does one repeated call make, and how often does it change files?

A profiler records every Python function a call enters, after three warm-up calls (so the routes, caches and
lookups are built): the count of all of them, of unarray's, and the moves between unarray's files (one move each
time the next unarray function lives in another file). Calls in C (ua.to's route, the front end's fast path)
make no Python calls. The cases: ``ua.to`` of a JAX array to torch (an immutable source: one copy torch owns), of a
TensorFlow tensor to torch (the same), of a reversed NumPy view to torch (a source-side compact copy, then
torch.from_numpy), and ``ua.matmul`` of two (4, 4) torch tensors.

    python benchmarks/call_walk.py [--tree CHECKOUT] [-v]

``--tree`` walks another checkout's unarray (an earlier commit) with this script; ``-v`` lists the calls.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

if "--tree" in sys.argv[1:-1]:
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()))
else:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import unarray as ua  # noqa: E402


def cases() -> dict[str, Any]:
    import jax
    import tensorflow as tf
    import torch

    j = jax.device_put(np.ones((4, 4), np.float32), jax.devices("cpu")[0])
    with tf.device("/device:CPU:0"):
        t = tf.ones((4, 4))
    v = np.arange(12.0)[::-1]
    a = torch.ones(4, 4)
    return {"ua.to(jax_array, 'torch')": lambda: ua.to(j, "torch"),
            "ua.to(tf_tensor, 'torch')": lambda: ua.to(t, "torch"),
            "ua.to(reversed_numpy_view, 'torch')": lambda: ua.to(v, "torch"),
            "ua.matmul(torch, torch)": lambda: ua.matmul(a, a)}


def walk(call: Any) -> list[tuple[str, str]]:
    for _ in range(3):
        call()
    seen: list[tuple[str, str]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append((frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(profile)
    call()
    sys.setprofile(None)
    return seen[1:]  # (the case's own lambda)


def main() -> None:
    warnings.filterwarnings("ignore")
    root = os.path.dirname(ua.__file__)
    print("| call | Python calls | unarray's | moves between unarray's files |\n|---|---:|---:|---:|")
    listed = []
    for name, call in cases().items():
        seen = walk(call)
        mine = [s for s in seen if s[0].startswith(root)]
        moves = sum(a[0] != b[0] for a, b in zip(mine, mine[1:], strict=False))
        print(f"| `{name}` | {len(seen)} | {len(mine)} | {moves} |")
        listed.append((name, seen))
    if "-v" in sys.argv:
        for name, seen in listed:
            print(f"\n{name}:")
            for f, fn in seen:
                print(f"  {os.path.relpath(f, root) if f.startswith(root) else f.rpartition('site-packages/')[2]} {fn}")


if __name__ == "__main__":
    main()
