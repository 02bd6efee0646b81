"""What does ``ua.<op>`` cost per call over the native call and array-api-compat, on tiny arrays?

On tiny arrays the kernel is cheap, so the table shows what the layer adds.
For each backend and op, the three callables are timed interleaved in one
run (``timeit`` with many calls per sample, median of the samples after a
warm-up; ``--stat min`` takes the fastest sample instead, the steadier figure on
a loaded machine). GPU backends are synchronised after each sample's loop; the
layer's cost is host-side, so the loop is what it pays.

    python benchmarks/dispatch.py [--backends numpy,torch,jax,tensorflow,cupy] [--ops matmul,sum,add]
                                  [--size 16] [--stat min] [--tree CHECKOUT] [--out DIR]

``--tree`` times the unarray of another checkout (an earlier commit) with this
harness, so a before/after pair is two runs of one script.

array-api-compat is timed as a library author uses it: ``xp =
array_namespace(*arrays); xp.<op>(...)`` ("compat") and with the namespace
looked up once outside the loop ("compat, ns hoisted").
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _tree() -> str:
    # The checkout whose unarray is timed: --tree's, read before unarray is imported.
    if "--tree" in sys.argv[1:-1]:
        return str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve())
    return str(Path(__file__).resolve().parents[1])


sys.path.insert(0, _tree())

import unarray as ua  # noqa: E402

OPS = ("matmul", "sum", "permute_dims", "mean", "argmax")
# The binary element-wise ops timed on request (--ops): each is the standard's name in every library.
BINARY = ("add", "subtract", "multiply", "divide", "maximum", "less")
# ua.matmul with a per-call policy, timed on request against the native matmul (compat has no policy).
PRECISION = ("matmul_tf32",)
# ua.ascontiguousarray of the transposed (n, n) view, timed on request against the library's own call (the
# standard and compat have none).
COMPACT = ("ascontiguousarray",)


def _setup(backend: str, n: int = 4) -> tuple[Any, Any, dict[str, Callable[[], Any]], Callable[[Any], None]]:
    """(a, b, native callables, sync) for ``backend``: a and b are (n, n) float32."""
    import numpy as np

    rng = np.random.default_rng(0)
    a0 = rng.standard_normal((n, n)).astype(np.float32)
    b0 = rng.standard_normal((n, n)).astype(np.float32)
    sync: Callable[[Any], None] = lambda last: None
    if backend == "numpy":
        a, b = a0, b0
        at = _transposed(a)
        native = {
            "matmul": lambda: np.matmul(a, b),
            "sum": lambda: np.sum(a),
            "permute_dims": lambda: np.permute_dims(a, (1, 0)),
            "mean": lambda: np.mean(a),
            "argmax": lambda: np.argmax(a),
            "ascontiguousarray": lambda: np.ascontiguousarray(at),
            **_binary(np, a, b),
        }
    elif backend in ("torch", "torch-cuda"):
        import torch

        dev = "cuda" if backend == "torch-cuda" else "cpu"
        a, b = torch.from_numpy(a0).to(dev), torch.from_numpy(b0).to(dev)
        at = _transposed(a)
        if dev == "cuda":
            sync = lambda last: torch.cuda.synchronize()
        native = {
            "matmul": lambda: torch.matmul(a, b),
            "sum": lambda: torch.sum(a),
            "permute_dims": lambda: torch.permute(a, (1, 0)),
            "mean": lambda: torch.mean(a),
            "argmax": lambda: torch.argmax(a),
            "ascontiguousarray": lambda: at.contiguous(),
            **_binary(torch, a, b),
        }
    elif backend in ("jax", "jax-gpu"):
        import jax
        import jax.numpy as jnp

        dev = jax.devices("gpu" if backend == "jax-gpu" else "cpu")[0]
        a, b = jax.device_put(a0, dev), jax.device_put(b0, dev)
        sync = lambda last: jax.block_until_ready(last)
        hi = jax.lax.Precision.HIGHEST
        # The native matmul is timed with the precision unarray guarantees (float32-exact).
        native = {
            "matmul": lambda: jnp.matmul(a, b, precision=hi),
            "sum": lambda: jnp.sum(a),
            "permute_dims": lambda: jnp.permute_dims(a, (1, 0)),
            "mean": lambda: jnp.mean(a),
            "argmax": lambda: jnp.argmax(a),
            **_binary(jnp, a, b),
        }
    elif backend == "tensorflow":
        import tensorflow as tf

        a, b = tf.constant(a0), tf.constant(b0)
        native = {
            "matmul": lambda: tf.linalg.matmul(a, b),
            "sum": lambda: tf.reduce_sum(a),
            "permute_dims": lambda: tf.transpose(a, (1, 0)),
            "mean": lambda: tf.reduce_mean(a),
            "argmax": lambda: tf.argmax(tf.reshape(a, [-1])),
        }
    elif backend == "cupy":
        import cupy

        a, b = cupy.asarray(a0), cupy.asarray(b0)
        at = _transposed(a)
        native = {
            "matmul": lambda: cupy.matmul(a, b),
            "sum": lambda: cupy.sum(a),
            "permute_dims": lambda: cupy.transpose(a, (1, 0)),
            "mean": lambda: cupy.mean(a),
            "argmax": lambda: cupy.argmax(a),
            "ascontiguousarray": lambda: cupy.ascontiguousarray(at),
            **_binary(cupy, a, b),
        }
        sync = lambda last: cupy.cuda.get_current_stream().synchronize()
    else:
        raise SystemExit(f"unknown backend {backend}")
    return a, b, native, sync


def _transposed(a: Any) -> Any:
    # The (n, n) array's transposed view, where the library has one (ascontiguousarray's input).
    return getattr(a, "T", a)


def _binary(ns: Any, a: Any, b: Any) -> dict[str, Callable[[], Any]]:
    # Bound through a helper: a lambda in a loop would see the last op only.
    def call(fn: Callable[[Any, Any], Any]) -> Callable[[], Any]:
        return lambda: fn(a, b)

    return {op: call(getattr(ns, op)) for op in BINARY if hasattr(ns, op)}


def _ua_calls(a: Any, b: Any) -> dict[str, Callable[[], Any]]:
    at = _transposed(a)
    return {
        "matmul": lambda: ua.matmul(a, b),
        "sum": lambda: ua.sum(a),
        "permute_dims": lambda: ua.permute_dims(a, (1, 0)),
        "mean": lambda: ua.mean(a),
        "argmax": lambda: ua.argmax(a),
        "matmul_tf32": lambda: ua.matmul(a, b, precision="tf32"),
        "ascontiguousarray": lambda: ua.ascontiguousarray(at),
        **_binary(ua, a, b),
    }


def _compat_calls(a: Any, b: Any) -> tuple[dict[str, Callable[[], Any]], dict[str, Callable[[], Any]]] | None:
    try:
        from array_api_compat import array_namespace
    except ImportError:
        return None
    try:
        xp = array_namespace(a, b)
    except TypeError:
        return None
    full = {
        "matmul": lambda: array_namespace(a, b).matmul(a, b),
        "sum": lambda: array_namespace(a).sum(a),
        "permute_dims": lambda: array_namespace(a).permute_dims(a, (1, 0)),
        "mean": lambda: array_namespace(a).mean(a),
        "argmax": lambda: array_namespace(a).argmax(a),
    }
    hoisted = {
        "matmul": lambda: xp.matmul(a, b),
        "sum": lambda: xp.sum(a),
        "permute_dims": lambda: xp.permute_dims(a, (1, 0)),
        "mean": lambda: xp.mean(a),
        "argmax": lambda: xp.argmax(a),
        **_binary(xp, a, b),
    }

    def full_binary(op: str) -> Callable[[], Any]:
        return lambda: getattr(array_namespace(a, b), op)(a, b)

    full.update({op: full_binary(op) for op in BINARY})
    return full, hoisted


def _time(fn: Callable[[], Any], sync: Callable[[Any], None], number: int) -> float:
    def loop() -> None:
        last = None
        for _ in range(number):
            last = fn()
        sync(last)

    return timeit.timeit(loop, number=1) / number * 1e6


def bench_backend(
    backend: str, repeats: int, number: int, ops: tuple[str, ...] = OPS, n: int = 4, stat: str = "median"
) -> list[dict[str, Any]]:
    a, b, native, sync = _setup(backend, n)
    mine = _ua_calls(a, b)
    compat = _compat_calls(a, b)
    pick = min if stat == "min" else statistics.median
    rows = []
    for op in ops:
        if ("matmul" if op in PRECISION else op) not in native:
            continue  # (no native call to time it against: JAX's and TensorFlow's arrays have no strides)
        contenders = {"native": native["matmul" if op in PRECISION else op], "unarray": mine[op]}
        if compat is not None and op not in PRECISION + COMPACT:
            contenders["compat"] = compat[0][op]
            contenders["compat_hoisted"] = compat[1][op]
        for fn in contenders.values():  # warm-up: caches, JIT, first-call paths
            last = None
            for _ in range(200):
                last = fn()
            sync(last)
        samples: dict[str, list[float]] = {k: [] for k in contenders}
        for _ in range(repeats):  # interleaved so drift hits every contender alike
            for name, fn in contenders.items():
                samples[name].append(_time(fn, sync, number))
        med = {k: pick(v) for k, v in samples.items()}
        row = {"backend": backend, "op": op, **{f"{k}_us": round(v, 3) for k, v in med.items()}}
        row["overhead_us"] = round(med["unarray"] - med["native"], 3)
        row["ratio_vs_native"] = round(med["unarray"] / med["native"], 3)
        if "compat" in med:
            row["ratio_vs_compat"] = round(med["unarray"] / med["compat"], 3)
        rows.append(row)
    return rows


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    for b in ua.backends():
        if b.installed:
            info[b.name] = b.version
    try:
        import array_api_compat

        info["array_api_compat"] = array_api_compat.__version__
    except ImportError:
        pass
    return info


def to_markdown(rows: list[dict[str, Any]], info: dict[str, Any]) -> str:
    head = (
        "| backend | op | native µs | unarray µs | overhead µs | compat µs | compat (ns hoisted) µs "
        "| unarray / native | unarray / compat |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        lines.append(
            f"| {r['backend']} | {r['op']} | {r['native_us']:.3f} | {r['unarray_us']:.3f} | {r['overhead_us']:+.3f} "
            f"| {r.get('compat_us', float('nan')):.3f} | {r.get('compat_hoisted_us', float('nan')):.3f} "
            f"| {r['ratio_vs_native']:.2f} | {r.get('ratio_vs_compat', float('nan')):.2f} |"
        )
    meta = ", ".join(f"{k}={v}" for k, v in info.items())
    return f"Machine: {meta}\n\n" + head + "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", default="numpy,torch,jax")
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--ops", default=",".join(OPS),
                   help=f"comma-separated, of {', '.join(OPS + BINARY + PRECISION + COMPACT)}")
    p.add_argument("--size", type=int, default=4, help="the arrays are (size, size) float32")
    p.add_argument("--stat", choices=("median", "min"), default="median", help="of the samples")
    p.add_argument("--tree", default=None, help="a checkout whose unarray to time (default: this one)")
    p.add_argument("--out", default=None, help="directory for dispatch_<tag>.json/.md")
    p.add_argument("--tag", default="cpu")
    args = p.parse_args()
    rows: list[dict[str, Any]] = []
    for backend in args.backends.split(","):
        try:
            rows += bench_backend(backend.strip(), args.repeats, args.number, tuple(args.ops.split(",")), args.size,
                                  args.stat)
        except Exception as e:  # one missing backend must not lose the others
            print(f"{backend}: skipped ({type(e).__name__}: {e})", file=sys.stderr)
    info = machine()
    info.update(size=f"{args.size}x{args.size}", stat=args.stat, unarray_tree=str(Path(ua.__file__).parents[1]))
    md = to_markdown(rows, info)
    print(md)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"dispatch_{args.tag}.json").write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
        (out / f"dispatch_{args.tag}.md").write_text(md)


if __name__ == "__main__":
    main()
