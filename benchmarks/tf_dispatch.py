"""What do TensorFlow's hot ops and reductions cost through unarray against the native TensorFlow call?

    python benchmarks/tf_dispatch.py [--out benchmarks/results] [--shape 4 4] [--repeats 15]

"Native" is what a TensorFlow user writes for the standard's op: ``tf.linalg.matmul``,
``tf.reduce_sum``/``mean``/``max``/``min``/``prod``, ``tf.argmax`` (of the flattened tensor for
``axis=None``), ``tf.math.reduce_variance``/``reduce_std``. The native calls do not give the
standard's answers everywhere (NaN propagation, first occurrence, empty reductions); unarray does.
Each pair is timed interleaved, sample by sample (``timeit``, many calls per sample), after a
warm-up, and the median of the samples is reported with the ratio of the medians. The ``--before``
column, where given a checkout of an earlier commit, is that commit's unarray timed in the same way
in a separate process. Writes ``tf_dispatch_cpu.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def calls(shape: tuple[int, ...]) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """op -> (unarray call, native call) on float32 tensors of ``shape``."""
    import numpy as np
    import tensorflow as tf

    import unarray as ua

    rng = np.random.default_rng(0)
    a = tf.constant(rng.standard_normal(shape).astype(np.float32))
    b = tf.constant(rng.standard_normal(shape[::-1]).astype(np.float32))
    return {
        "matmul": (lambda: ua.matmul(a, b), lambda: tf.linalg.matmul(a, b)),
        "sum": (lambda: ua.sum(a), lambda: tf.reduce_sum(a)),
        "sum(axis=0)": (lambda: ua.sum(a, axis=0), lambda: tf.reduce_sum(a, axis=0)),
        "mean": (lambda: ua.mean(a), lambda: tf.reduce_mean(a)),
        "mean(axis=1)": (lambda: ua.mean(a, axis=1), lambda: tf.reduce_mean(a, axis=1)),
        "max": (lambda: ua.max(a), lambda: tf.reduce_max(a)),
        "max(axis=0)": (lambda: ua.max(a, axis=0), lambda: tf.reduce_max(a, axis=0)),
        "min": (lambda: ua.min(a), lambda: tf.reduce_min(a)),
        "min(axis=1)": (lambda: ua.min(a, axis=1), lambda: tf.reduce_min(a, axis=1)),
        "argmax": (lambda: ua.argmax(a), lambda: tf.argmax(tf.reshape(a, [-1]))),
        "argmax(axis=1)": (lambda: ua.argmax(a, axis=1), lambda: tf.argmax(a, axis=1)),
        "argmin": (lambda: ua.argmin(a), lambda: tf.argmin(tf.reshape(a, [-1]))),
        "argmin(axis=0)": (lambda: ua.argmin(a, axis=0), lambda: tf.argmin(a, axis=0)),
        "var": (lambda: ua.var(a), lambda: tf.math.reduce_variance(a)),
        "var(axis=0)": (lambda: ua.var(a, axis=0), lambda: tf.math.reduce_variance(a, axis=0)),
        "std": (lambda: ua.std(a), lambda: tf.math.reduce_std(a)),
        "prod": (lambda: ua.prod(a), lambda: tf.reduce_prod(a)),
        "prod(axis=1)": (lambda: ua.prod(a, axis=1), lambda: tf.reduce_prod(a, axis=1)),
    }


def _number(fn: Callable[[], Any]) -> int:
    # Calls per sample: about 20 ms of work.
    t = timeit.timeit(fn, number=20) / 20
    return max(20, int(0.02 / max(t, 1e-7)))


def measure(shape: tuple[int, ...], repeats: int, only_ua: bool = False) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for op, (u, n) in calls(shape).items():
        for f in (u, n):
            for _ in range(200):
                f()  # warm-up: first-call set-up, caches
        number = _number(n)
        tu: list[float] = []
        tn: list[float] = []
        for _ in range(repeats):
            tu.append(timeit.timeit(u, number=number) / number * 1e6)
            if not only_ua:
                tn.append(timeit.timeit(n, number=number) / number * 1e6)
        row = {"unarray_us": statistics.median(tu)}
        if not only_ua:
            row["native_us"] = statistics.median(tn)
            row["ratio"] = row["unarray_us"] / row["native_us"]
        out[op] = row
    return out


def machine() -> dict[str, Any]:
    import numpy as np
    import tensorflow as tf

    import unarray as ua

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "tensorflow": tf.__version__, "numpy": np.__version__, "unarray": ua.__version__,
            "load_average_1min": round(load, 2)}


def _before(checkout: str, shape: tuple[int, ...], repeats: int) -> dict[str, dict[str, float]]:
    code = (f"import sys, json; sys.path.insert(0, {checkout!r}); sys.path.insert(1, {str(Path(__file__).parent)!r});"
            f"import tf_dispatch as t; print(json.dumps(t.measure({shape!r}, {repeats}, only_ua=True)))")
    env = {**os.environ, "PYTHONPATH": checkout}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=checkout)
    return json.loads(r.stdout.strip().splitlines()[-1])


def table(rows: dict[str, dict[str, float]], before: dict[str, dict[str, float]] | None) -> list[str]:
    head = "| op | native µs | unarray µs | unarray / native |"
    sep = "|---|---|---|---|"
    if before:
        head += " unarray before µs | before / native |"
        sep += "---|---|"
    lines = [head, sep]
    for op, r in rows.items():
        line = f"| {op} | {r['native_us']:.1f} | {r['unarray_us']:.1f} | {r['ratio']:.2f} |"
        if before:
            b = before[op]["unarray_us"]
            line += f" {b:.1f} | {b / r['native_us']:.2f} |"
        lines.append(line)
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    p.add_argument("--shape", type=int, nargs="+", default=[4, 4])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--before", metavar="CHECKOUT", help="a checkout of an earlier commit to time as well")
    p.add_argument("--before-label", default="", help="what the --before checkout is (a commit)")
    args = p.parse_args()
    shape = tuple(args.shape)
    before = _before(args.before, shape, args.repeats) if args.before else None
    rows = measure(shape, args.repeats)
    info = machine()
    cmd = "python benchmarks/tf_dispatch.py" + (f" --before {args.before}" if args.before else "")
    md = [f"# TensorFlow per-call cost, unarray against native ({'x'.join(map(str, shape))} float32, CPU)", "",
          f"Command: `{cmd}`. Machine: " + ", ".join(f"{k}={v}" for k, v in info.items()) + ".", "",
          "Medians of interleaved timeit samples after a warm-up; see the script's docstring for what "
          "\"native\" is." + (f" The before columns: {args.before_label or args.before}, timed in a separate "
                               "process just before this run." if before else ""), "", *table(rows, before), ""]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tf_dispatch_cpu.md").write_text("\n".join(md))
    (out / "tf_dispatch_cpu.json").write_text(json.dumps({"machine": info, "shape": shape, "rows": rows,
                                                          "before": before}, indent=1) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
