"""What does catching NumPy's and torch's keywords (``**refused``) cost a correct call, checkout against checkout?

A function without a C path takes the keywords it has no parameter for in ``**refused`` (an empty dict made on
every call) to raise the typed error naming the standard's keyword. Each round runs every checkout in a fresh
process, alternating; a process reports the best of 3 repeats of 20,000 calls per case; the table gives the
median over rounds. Tiny NumPy arrays, so the front end's own cost shows.

    python benchmarks/refused_keywords.py --base CHECKOUT [--rounds 9]
    python benchmarks/refused_keywords.py --hook    # the hook alone: two 3-keyword functions, with and without it
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

CASES = ["ua.concat([a, a], axis=0)", "ua.sort(a)", "ua.zeros(3)", "ua.cumulative_sum(a)",
         "ua.expand_dims(a, axis=0)", "ua.squeeze(b, axis=0)", "ua.linalg.outer(a, a)", "xp.zeros(3)"]


def child(tree: str) -> None:
    sys.path.insert(0, tree)
    import numpy as np

    import unarray as ua

    a = np.arange(4.0)
    g = {"ua": ua, "a": a, "b": a[None], "xp": ua.array_namespace(a)}
    for c in CASES:
        eval(c, g)
    print(json.dumps({c: min(timeit.repeat(c, globals=g, number=20000, repeat=3)) / 20000 * 1e9 for c in CASES}))


def plain(x: object, /, *, axis: int = 0, keepdims: bool = False, dtype: object = None) -> object:
    return x


def hooked(x: object, /, *, axis: int = 0, keepdims: bool = False, dtype: object = None, **refused: object) -> object:
    if refused:
        raise TypeError(refused)
    return x


def hook() -> None:
    got: dict[str, list[float]] = {"plain(a, axis=1)": [], "hooked(a, axis=1)": [], "plain(a)": [], "hooked(a)": []}
    g = {"plain": plain, "hooked": hooked, "a": 1.0}
    for _ in range(15):  # alternating; the best of 3 per sample, the median of the samples
        for c in got:
            got[c].append(min(timeit.repeat(c, globals=g, number=200000, repeat=3)) / 200000 * 1e9)
    print(f"Python {sys.version.split()[0]}, 15 alternating samples, median (ns)\n")
    print("| call | ns |\n|---|---:|")
    for c, v in got.items():
        print(f"| `{c}` | {statistics.median(v):.1f} |")


def main() -> None:
    if sys.argv[1] == "--hook":
        hook()
        return
    if sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    trees = {"base": sys.argv[sys.argv.index("--base") + 1], "new": str(Path(__file__).resolve().parents[1])}
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 9
    got: dict[str, dict[str, list[float]]] = {t: {c: [] for c in CASES} for t in trees}
    for _ in range(rounds):
        for t, path in trees.items():
            out = subprocess.run([sys.executable, __file__, "--child", path], capture_output=True, text=True,
                                 check=True, timeout=600)
            for c, ns in json.loads(out.stdout).items():
                got[t][c].append(ns)
    print(f"Python {sys.version.split()[0]}, {rounds} alternating rounds, median of each process's best (ns)\n")
    print("| call | base | new | new - base |\n|---|---:|---:|---:|")
    for c in CASES:
        b, n = statistics.median(got["base"][c]), statistics.median(got["new"][c])
        print(f"| `{c}` | {b:.0f} | {n:.0f} | {n - b:+.0f} |")


if __name__ == "__main__":
    main()
