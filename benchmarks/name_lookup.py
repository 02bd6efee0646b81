"""What does reaching a function through ``ua.<name>`` cost, against the function bound to a name once?

The module's ``__getattr__`` (the error for ``ua.concatenate``) keeps the interpreter from specialising
``ua.<name>`` lookups; a name bound once (``from unarray import to``) is a plain global. Timed on
the calls a hot loop makes: ``ua.to`` of a NumPy array to NumPy and to torch (cache hits and zero-copy
imports), ``ua.matmul`` of (16, 16) float32, and the same through the bound namespace.

    python benchmarks/name_lookup.py [--tree CHECKOUT]
    python benchmarks/name_lookup.py --shapes

``--tree`` times another checkout's unarray (an earlier commit) with this script. ``--shapes`` times what a
namespace of unarray's size could be (an instance with its names in its dict, as ``BoundNamespace``; the same
with a class ``__getattr__``; a plain module; a module with a PEP 562 ``__getattr__``) on a hit, ``xp.f`` and
``xp.f(1)``, and names the instruction CPython specialised each lookup to.
"""

from __future__ import annotations

import dis
import statistics
import sys
import timeit
import types
from pathlib import Path
from typing import Any

if "--tree" in sys.argv[1:-1]:
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()))
else:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))



def _f(x: object) -> object:
    return x


def _shapes() -> dict[str, object]:
    names = {f"n{i}": _f for i in range(250)} | {"f": _f}

    class Instance:
        def __init__(self) -> None:
            self.__dict__.update(names)

    class Hooked(Instance):
        def __getattr__(self, name: str) -> object:
            raise AttributeError(name)

    def hook(name: str) -> object:
        raise AttributeError(name)

    plain, pep562 = types.ModuleType("unarray.numpy"), types.ModuleType("unarray.numpy")
    plain.__dict__.update(names)
    pep562.__dict__.update(names, __getattr__=hook)
    return {"instance (BoundNamespace)": Instance(), "instance, class __getattr__": Hooked(), "module": plain,
            "module, PEP 562 __getattr__": pep562}


def shapes() -> None:
    code = "def attr(xp, n):\n    for _ in range(n):\n        xp.f; xp.f; xp.f; xp.f; xp.f\n" \
           "def call(xp, n):\n    for _ in range(n):\n        xp.f(1); xp.f(1); xp.f(1); xp.f(1); xp.f(1)\n"
    spaces = _shapes()
    fns, rows, ops = {}, {}, {}
    for label, xp in spaces.items():
        for kind in ("attr", "call"):
            g: dict[str, Any] = {}
            exec(code, g)  # noqa: S102 - a function per shape, so each specialises on its own
            fns[label, kind] = fn = g[kind]
            fn(xp, 100)
            ops[label, kind] = next(i.opname for i in dis.get_instructions(fn, adaptive=True)  # type: ignore[call-arg]
                                    if i.opname.startswith(("LOAD_ATTR", "LOAD_METHOD")))
            rows[label, kind] = []
    for _ in range(15):  # the shapes alternate; each sample the best of 3, the table the median of the samples
        for (label, kind), got in rows.items():
            fn, xp = fns[label, kind], spaces[label]
            got.append(min(timeit.repeat(lambda f=fn, x=xp: f(x, 20000), number=1, repeat=3)) / 100000 * 1e9)
    print(f"Python {sys.version.split()[0]}; 15 alternating samples, median ns per lookup (loop included)\n")
    print("| namespace | `xp.f` | instruction | `xp.f(1)` | instruction |\n|---|---:|---|---:|---|")
    for label in spaces:
        print(f"| {label} | {statistics.median(rows[label, 'attr']):.1f} | `{ops[label, 'attr']}` "
              f"| {statistics.median(rows[label, 'call']):.1f} | `{ops[label, 'call']}` |")


def main() -> None:
    if "--shapes" in sys.argv:
        shapes()
        return
    import numpy as np

    import unarray as ua

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
