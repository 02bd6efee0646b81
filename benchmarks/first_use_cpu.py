"""First use on the CPU: a NumPy op's first call, ``python -m unarray env`` and ``check --devices cuda``
(on a machine without that driver), each in a fresh process, checkouts side by side.

    python benchmarks/first_use_cpu.py --root before=/path/to/old/checkout --root after=. --runs 5

Each round runs every case once per checkout, alternating, so load on the machine falls on both; the table
gives the median of the runs: the call's time and the modules it imported (measured inside the child), the
child's wall time, and the frameworks it imported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

FRAMEWORKS = ("torch", "jax", "tensorflow", "dask", "numba", "cupy", "mlx")

_CALL = """
import json, sys, time
import numpy as np
import unarray as ua
x = np.eye(3) + 1.0
n0 = len(sys.modules)
t = time.perf_counter()
{call}
dt = time.perf_counter() - t
print(json.dumps({{"call_s": dt, "modules": len(sys.modules) - n0}}))
"""
_MAIN = """
import json, sys, time
t = time.perf_counter()
from unarray.__main__ import main
try:
    rc = main({argv!r})
except SystemExit as e:
    rc = e.code
dt = time.perf_counter() - t
print(json.dumps({{"call_s": dt, "modules": len(sys.modules), "rc": rc,
                  "frameworks": [m for m in {fw!r} if m in sys.modules]}}))
"""


def cases(out: str) -> dict[str, str]:
    c = {f"first call: {call}": _CALL.format(call=call) for call in (
        "ua.sum(np.ones(3))", "ua.asarray([1.0, 2.0])", "ua.zeros(3)", "ua.sort(x[0])", "ua.linalg.inv(x)",
        "ua.fft.fft(x)")}
    c["python -m unarray env"] = _MAIN.format(argv=["env"], fw=FRAMEWORKS)
    c["python -m unarray check --devices cuda"] = _MAIN.format(
        argv=["check", "--devices", "cuda", "--out", out], fw=FRAMEWORKS)
    return c


def run_once(root: str, code: str) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=root, env=env, capture_output=True,
                       text=True, timeout=600)
    wall = time.perf_counter() - t
    lines = r.stdout.strip().splitlines()
    if not lines:  # (the case fails on that checkout: reported as such)
        return {"call_s": float("nan"), "modules": float("nan"), "wall_s": float("nan"),
                "error": r.stderr.strip().splitlines()[-1]}
    out: dict[str, object] = json.loads(lines[-1])
    out["wall_s"] = wall
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", action="append", required=True, help="label=path of a checkout (repeatable)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--only", default="", help="run the cases whose name contains this")
    a = p.parse_args()
    roots = dict(r.split("=", 1) for r in a.root)
    with tempfile.TemporaryDirectory() as tmp:
        todo = {k: v for k, v in cases(os.path.join(tmp, "r")).items() if a.only in k}
        got: dict[tuple[str, str], list[dict[str, object]]] = {}
        for _ in range(a.runs):
            for case, code in todo.items():
                for label, root in roots.items():
                    got.setdefault((case, label), []).append(run_once(os.path.abspath(root), code))
    print("| case | checkout | call (s) | modules | process wall (s) | frameworks imported |")
    print("|---|---|---|---|---|---|")
    for (case, label), rows in got.items():
        med = {k: statistics.median(float(r[k]) for r in rows) for k in ("call_s", "modules", "wall_s")}
        fw = sorted({m for r in rows for m in r.get("frameworks", [])})  # type: ignore[attr-defined]
        print(f"| {case} | {label} | {med['call_s']:.3f} | {med['modules']:.0f} | {med['wall_s']:.2f} | "
              f"{', '.join(fw) or '-'} |")


if __name__ == "__main__":
    main()
