"""What does handing an array between two CPU libraries cost through ``ua.to``, against the best native call?

Handoff matrix: unarray first call (cache miss), unarray repeated (cache hit), best native call.

Usage: python benchmarks/handoff.py [--out benchmarks/results] [--size 1024] [--n 2000]

Every pair among the installed CPU libraries (NumPy, torch, JAX, TensorFlow), on a
64-byte aligned 1024x1024 float32 array. Median over ``--n`` calls after warm-up; native, first,
second and repeated are timed in turns (interleaved_us), so that the machine's drift hits all alike;
native and repeated also in loops of LOOP calls (looped), which leave out the timer's cost per call.
Writes handoff_cpu.json, handoff_cpu.md and handoff_cpu.png under ``--out``.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import unarray as ua  # noqa: E402
from unarray._backends._host import aligned_copy  # noqa: E402
from unarray.interop import _cache, _routes  # noqa: E402

LIBS = [n for n in ("numpy", "torch", "jax", "tensorflow") if importlib.util.find_spec(n)]


def interleaved_us(cases: dict[str, tuple[Any, Any]], n: int, rounds: int = 20) -> dict[str, float]:
    """Median µs per call of each case (name -> (fn, before)), timed side by side.

    The cases take turns: ``rounds`` rounds of ``n // rounds`` calls each, in a shuffled order per
    round, so that a slow spell of the machine falls on all of them alike. ``before`` (if not
    None) runs untimed before each call."""
    rng = random.Random(0)
    per = max(1, n // rounds)
    samples: dict[str, list[int]] = {k: [] for k in cases}
    for fn, before in cases.values():  # warm-up
        for _ in range(min(50, n)):
            if before:
                before()
            fn()
    names = list(cases)
    for _ in range(rounds):
        rng.shuffle(names)
        for k in names:
            fn, before = cases[k]
            ts = samples[k]
            for _ in range(per):
                if before:
                    before()
                t0 = time.perf_counter_ns()
                fn()
                ts.append(time.perf_counter_ns() - t0)
    out = {}
    for k, ts in samples.items():
        ts.sort()
        out[k] = ts[len(ts) // 2] / 1000
    return out


LOOP = 100


def looped(f: Any, *args: Any) -> Any:
    """One sample of LOOP calls f(*args) in a row (divided by LOOP when reported): a call's cost
    without the timer's own, which interleaved_us pays around every single call (timer_us)."""
    r = range(LOOP)
    if len(args) == 1:
        (a,) = args

        def run() -> None:
            for _ in r:
                f(a)
    else:
        a, b = args

        def run() -> None:
            for _ in r:
                f(a, b)
    return run


def make(lib: str, a: np.ndarray) -> Any:
    if lib == "numpy":
        return a
    if lib == "torch":
        import torch

        return torch.from_numpy(a).clone()
    if lib == "jax":
        import jax.numpy as jnp

        return jnp.asarray(a)
    import tensorflow as tf

    return tf.constant(a)


def natives() -> dict[tuple[str, str], tuple[str, Any]]:
    out: dict[tuple[str, str], tuple[str, Any]] = {}
    if "torch" in LIBS:
        import torch

        out[("numpy", "torch")] = ("torch.from_numpy", torch.from_numpy)
        out[("torch", "numpy")] = ("Tensor.numpy()", lambda t: t.numpy())
    if "jax" in LIBS:
        import jax.numpy as jnp

        out[("numpy", "jax")] = ("jnp.from_dlpack", jnp.from_dlpack)
        out[("jax", "numpy")] = ("np.asarray", np.asarray)
        if "torch" in LIBS:
            out[("torch", "jax")] = ("jnp.from_dlpack", jnp.from_dlpack)
            out[("jax", "torch")] = ("torch.from_dlpack", torch.from_dlpack)
    if "tensorflow" in LIBS:
        import tensorflow as tf

        tfd = tf.experimental.dlpack
        for s in ("numpy", "torch", "jax"):
            out[(s, "tensorflow")] = ("tf.experimental.dlpack.from_dlpack(x.__dlpack__())",
                                      lambda x: tfd.from_dlpack(x.__dlpack__()))
        out[("tensorflow", "numpy")] = ("np.asarray", np.asarray)
        if "torch" in LIBS:
            out[("tensorflow", "torch")] = ("torch.utils.dlpack.from_dlpack(tfd.to_dlpack(t))",
                                            lambda t: torch.utils.dlpack.from_dlpack(tfd.to_dlpack(t)))
        if "jax" in LIBS:
            out[("tensorflow", "jax")] = ("jnp.from_dlpack(t)", jnp.from_dlpack)
    return out


def run(size: int, n: int) -> list[dict[str, Any]]:
    a = aligned_copy(np.random.default_rng(0).standard_normal((size, size)).astype(np.float32))
    rows = []
    nat = natives()
    for src, dst in itertools.permutations(LIBS, 2):
        x = make(src, a)
        name, fn = nat[(src, dst)]
        ua.stats(reset=True)
        ua.to(x, dst)
        s = ua.stats()
        # ua.to bound to a name once, as the native function is (the cost of looking up ua.<name> on the
        # module is benchmarks/name_lookup.py's question).
        to = ua.to
        t = interleaved_us({
            "native_us": (lambda: fn(x), None),  # noqa: B023 (called at once)
            "first_us": (lambda: to(x, dst), _cache.clear),  # noqa: B023
            # The second handoff converts again and stores the view (cache admission on second sight).
            "second_us": (lambda: to(x, dst), lambda: (_cache.clear(), to(x, dst))),  # noqa: B023
            "repeated_us": (lambda: to(x, dst), None),  # noqa: B023
        }, n)
        # The same repeated handoff and native call in loops of LOOP calls (fewer samples: a copying
        # native call takes tens of microseconds).
        loops = interleaved_us({"native_loop_us": (looped(fn, x), None),
                                "repeated_loop_us": (looped(ua.to, x, dst), None)}, max(40, n // 20), rounds=10)
        t.update({k: v / LOOP for k, v in loops.items()})
        row = {"src": src, "dst": dst, "native_call": name, **t,
               "zero_copy": s["copies"] == 0, "bytes_copied": s["bytes_copied"],
               "path": _routes.pair(src, dst).convert.__name__}
        rows.append(row)
        print(f"{src:>10} -> {dst:<10} native {row['native_us']:8.2f} us  first {row['first_us']:8.2f} us  "
              f"repeated {row['repeated_us']:6.2f} us (loop {row['repeated_loop_us']:5.2f})  "
              f"copies={0 if row['zero_copy'] else 1}", flush=True)
    return rows


def machine() -> dict[str, Any]:
    cpu = "?"
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import os

    versions = {}
    for lib in LIBS:
        versions[lib] = str(getattr(sys.modules.get(lib) or __import__(lib), "__version__", "?"))
    impl = "C (unarray/interop/_speedups.c)" if _routes.speedups is not None else "Python"
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "ua.to": impl,
            "versions": versions}


def write(rows: list[dict[str, Any]], meta: dict[str, Any], out: Path, stem: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps({"machine": meta, "rows": rows}, indent=1))
    lines = [f"# Handoff matrix ({stem})", "",
             f"Machine: {meta.get('device', '')} {meta['cpu']}, {meta['cores']} cores, Python {meta['python']} "
             f"(ua.to in {meta.get('ua.to', 'Python')}); "
             + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()), "",
             f"Array: {meta.get('array', '1024x1024 float32')}; median per call after warm-up, microseconds. "
             "first = unarray with an empty cache; second = the next handoff of the same array (it converts "
             "again and stores the view: cache admission on second sight); repeated = cache hit (uncached "
             "pairs convert every time). Each call is timed alone, so each figure includes the timer's own "
             f"cost ({meta.get('timer_us', '?')} µs for an empty call here); the loop columns time {LOOP} calls "
             "in a row and divide, as timeit does.", "",
             "| source | target | best native call | native µs | unarray first µs | unarray second µs | "
             "unarray repeated µs | native, loop µs | unarray repeated, loop µs | zero-copy | unarray path |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        lines.append(f"| {r['src']} | {r['dst']} | `{r['native_call']}` | {r['native_us']:.2f} | {r['first_us']:.2f} |"
                     f" {r['second_us']:.2f} | {r['repeated_us']:.2f} | {r['native_loop_us']:.2f} |"
                     f" {r['repeated_loop_us']:.2f} | {'yes' if r['zero_copy'] else 'no'} | `{r['path']}` |")
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        labels = [f"{r['src']}→{r['dst']}" for r in rows]
        xs = np.arange(len(rows))
        fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.7), 4.5))
        for k, (key, lab) in enumerate([("native_us", "best native"), ("first_us", "unarray first"),
                                        ("repeated_us", "unarray repeated")]):
            ax.bar(xs + (k - 1) * 0.27, [r[key] for r in rows], 0.27, label=lab)
        ax.set_yscale("log")
        ax.set_ylabel("µs per handoff (median, log)")
        ax.set_xticks(xs, labels, rotation=45, ha="right")
        ax.set_title(f"Handoff {stem}: {meta.get('array', '1024x1024 float32')}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"{stem}.png", dpi=110)
    except ImportError as e:
        print("no plot:", e)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--stem", default="handoff_cpu", help="result file name (handoff_cpu_python for the Python path)")
    args = p.parse_args()
    rows = run(args.size, args.n)
    meta = machine()
    meta["timer_us"] = interleaved_us({"empty": (lambda: None, None)}, args.n)["empty"]
    meta["array"] = f"{args.size}x{args.size} float32, 64-byte aligned"
    meta["command"] = "python benchmarks/handoff.py " + " ".join(sys.argv[1:])
    write(rows, meta, Path(args.out), args.stem)


if __name__ == "__main__":
    main()
