"""What does reaching a function through ``ua.<name>`` cost, against the function bound to a name once?

The module's ``__getattr__`` (the error for ``ua.concatenate``) keeps the interpreter from specialising
``ua.<name>`` lookups; a name bound once (``from unarray import to``) is a plain global. Timed on
the calls a hot loop makes: ``ua.to`` of a NumPy array to NumPy and to torch (cache hits and zero-copy
imports), ``ua.matmul`` of (16, 16) float32, and the same through the bound namespace.

    python benchmarks/name_lookup.py [--tree CHECKOUT]

``--tree`` times another checkout's unarray (an earlier commit) with this script.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

if "--tree" in sys.argv[1:-1]:
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()))
else:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import unarray as ua  # noqa: E402


def main() -> None:
    a = np.ones((16, 16), np.float32)
    big = np.random.default_rng(0).random((1024, 1024), dtype=np.float32)
    g: dict[str, object] = {"ua": ua, "to": ua.to, "matmul": ua.matmul, "a": a, "big": big}
    if hasattr(ua, "array_namespace"):
        g["xp"] = ua.array_namespace(a)
    cases = ["ua.to(big, 'numpy')", "to(big, 'numpy')", "ua.matmul(a, a)", "matmul(a, a)"]
    if "xp" in g:
        cases.append("xp.matmul(a, a)")
    try:
        import torch  # noqa: F401

        cases[2:2] = ["ua.to(big, 'torch')", "to(big, 'torch')"]
    except ImportError:
        pass
    for c in cases:
        eval(c, g)
    best = {c: float("inf") for c in cases}
    for _ in range(7):  # the cases alternate; the fastest sample of each
        for c in cases:
            best[c] = min(best[c], min(timeit.repeat(c, globals=g, number=20000, repeat=3)) / 20000 * 1e9)
    print(f"unarray from {Path(ua.__file__).parent.parent}, Python {sys.version.split()[0]}, "
          f"module __getattr__: {'__getattr__' in vars(ua)}")
    print("| call | ns |\n|---|---:|")
    for c in cases:
        print(f"| `{c}` | {best[c]:.0f} |")


if __name__ == "__main__":
    main()
