"""What ``import unarray`` costs against ``import array_api_compat``, and each backend's first call after it.

    python benchmarks/import_time.py --root before=/path/to/old/checkout --root after=. --runs 7

Every case runs in a fresh interpreter, the checkouts (and array_api_compat) alternating within each round so
load on the machine falls on all of them; the table gives medians. The import is timed as a whole process
(``python -c "import X"``: user + system CPU from the kernel's accounting, and wall), with the modules it left
in ``sys.modules``; a first call is timed inside the child, after ``import <framework>, unarray``: the call's
own time (the lazy imports it triggers included) and the modules it imported. Byte code is cached under a
temporary ``PYTHONPYCACHEPREFIX`` (warmed by one unrecorded round), as an installed package has its ``.pyc``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

_COUNT = "import sys\n{imp}\nprint(len(sys.modules))"
# framework -> (its import, an array of it)
FIRST = {
    "numpy": ("import numpy as np", "np.ones(3)"),
    "torch": ("import torch", "torch.ones(3)"),
    "jax": ("import jax.numpy as jnp", "jnp.ones(3)"),
    "tensorflow": ("import tensorflow as tf", "tf.ones(3)"),
    "dask": ("import dask.array as da", "da.ones(3)"),
    "mlx": ("import mlx.core as mx", "mx.ones(3)"),
}
_CALL = """
import json, sys, time
{imp}
x = {array}
import unarray as ua
n0 = len(sys.modules)
t = time.perf_counter()
ua.{op}(x)
dt = time.perf_counter() - t
print(json.dumps({{"call_s": dt, "modules": len(sys.modules) - n0}}))
"""


def _env(root: str | None, cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    if root is not None:
        env["PYTHONPATH"] = root
    return env


def process(code: str, env: dict[str, str]) -> tuple[float, float]:
    # (CPU seconds, wall seconds) of a whole `python -c code`, from the kernel's accounting of the child.
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                         cwd=env["PYTHONPYCACHEPREFIX"])
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        raise RuntimeError(f"{code!r} failed ({status})")
    return usage.ru_utime + usage.ru_stime, wall


def child(code: str, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                         cwd=env["PYTHONPYCACHEPREFIX"])  # (not a checkout: "-c" puts the working directory first)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", action="append", required=True, help="name=path of a checkout")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--op", default="sum")
    ap.add_argument("--frameworks", default=",".join(FIRST))
    args = ap.parse_args()
    roots = {n: os.path.abspath(p) for n, p in (r.split("=", 1) for r in args.root)}  # (the children run elsewhere)
    frameworks = [f for f in args.frameworks.split(",") if f]
    cache = tempfile.mkdtemp(prefix="pyc-")
    sides: dict[str, str | None] = {**roots, "array_api_compat": None}
    imports = {name: ("array_api_compat" if root is None else "unarray") for name, root in sides.items()}
    cpu: dict[str, list[float]] = {n: [] for n in sides}
    wall: dict[str, list[float]] = {n: [] for n in sides}
    calls: dict[tuple[str, str], list[dict[str, float]]] = {(f, n): [] for f in frameworks for n in roots}
    for rnd in range(args.runs + 1):
        for name, root in sides.items():
            c, w = process(f"import {imports[name]}", _env(root, cache))
            if rnd:  # round 0 writes the byte code
                cpu[name].append(c)
                wall[name].append(w)
        for f in frameworks:
            imp, array = FIRST[f]
            for name, root in roots.items():
                r = child(_CALL.format(imp=imp, array=array, op=args.op), _env(root, cache))
                if rnd:
                    calls[f, name].append(r)
    base = statistics.median(cpu["array_api_compat"])
    print("| import | CPU (s) | wall (s) | modules | CPU / array_api_compat |")
    print("|---|---|---|---|---|")
    for name, root in sides.items():
        n = int(child(_COUNT.format(imp=f"import {imports[name]}").replace(
            "print(len(sys.modules))", 'import json; print(json.dumps({"n": len(sys.modules)}))'),
            _env(root, cache))["n"])
        c = statistics.median(cpu[name])
        print(f"| `import {imports[name]}` ({name}) | {c:.3f} | {statistics.median(wall[name]):.3f} | {n} | "
              f"{c / base:.2f}x |")
    print()
    print(f"| first `ua.{args.op}(x)` | " + " | ".join(f"{n}: call (ms) / modules" for n in roots) + " |")
    print("|---|" + "---|" * len(roots))
    for f in frameworks:
        cells = []
        for name in roots:
            rs = calls[f, name]
            cells.append(f"{statistics.median(r['call_s'] for r in rs) * 1e3:.1f} / "
                         f"{int(statistics.median(r['modules'] for r in rs))}")
        print(f"| {f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
