"""How close does ``ua.ascontiguousarray`` come to copy bandwidth on the GPU, and is it never slower than native?

Materialising permuted views on the GPU: ua.ascontiguousarray against the native calls and copy bandwidth.

For each case, in one run: a plain copy of the same bytes (torch ``clone``, CuPy ``copy``: the copy
bandwidth), torch's ``.contiguous()``, ``cupy.ascontiguousarray``, ``ua.ascontiguousarray`` on torch
(Triton route) and on CuPy (CUDA C route), each kernel forced (whatever the route rule says), and JAX's
``jnp.transpose`` materialised under ``jax.jit`` (reported only: XLA owns JAX layouts). Times are device
events (torch.cuda.Event / cupy.cuda.Event) around a loop of back-to-back calls (so that a launch-bound
call counts its launch), warm-up first, then the median of ``--reps`` samples; JAX, which has no events,
is timed by the host clock around the loop, ending with ``block_until_ready``. Bandwidth counts the bytes
read plus the bytes written (twice the array's size). Results are checked against the native call.

    python benchmarks/gpu/layout_gpu.py --out DIR [--reps 25] [--quick]

writes DIR/layout_gpu.json, DIR/layout_gpu.md (device, versions, command) and DIR/layout_gpu.png (a bar
chart of each route's fraction of copy bandwidth).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import unarray as ua  # noqa: E402
from unarray._kernels import layout_route as layout  # noqa: E402
from unarray._kernels.layout_plan import plan  # noqa: E402

# (label, shape of the compact source, permutation, dtype); the targets first.
TARGETS = [
    ("16k^2 f32 transpose", (16384, 16384), (1, 0), "float32"),
    ("16k^2 bf16 transpose", (16384, 16384), (1, 0), "bfloat16"),
    ("NCHW->NHWC 128x3x224x224 fp16", (128, 3, 224, 224), (0, 2, 3, 1), "float16"),
    ("NCHW->NHWC 128x3x224x224 fp32", (128, 3, 224, 224), (0, 2, 3, 1), "float32"),
    ("NCHW->NHWC 64x256x56x56 fp16", (64, 256, 56, 56), (0, 2, 3, 1), "float16"),
    ("NCHW->NHWC 64x256x56x56 fp32", (64, 256, 56, 56), (0, 2, 3, 1), "float32"),
    ("BSHD->BHSD 32x2048x16x128 bf16", (32, 2048, 16, 128), (0, 2, 1, 3), "bfloat16"),
]
EXTRA = [
    ("8k^2 f32 transpose (issue)", (8192, 8192), (1, 0), "float32"),
    ("8k^2 int8 transpose", (8192, 8192), (1, 0), "int8"),
    ("8k^2 f64 transpose", (8192, 8192), (1, 0), "float64"),
    ("4k^2 c128 transpose", (4096, 4096), (1, 0), "complex128"),
    ("NHWC->NCHW 64x56x56x256 fp16", (64, 56, 56, 256), (0, 3, 1, 2), "float16"),
    ("256^3 f32 reversal (2,1,0)", (256, 256, 256), (2, 1, 0), "float32"),
    ("BSHD->BHSD 8x1024x16x64 fp16", (8, 1024, 16, 64), (0, 2, 1, 3), "float16"),
    ("B(H)SD 64x32x512x4 f32 (0,2,1,3)", (64, 32, 512, 4), (0, 2, 1, 3), "float32"),
]
# The size sweep that sets KERNEL_MIN_BYTES: square float32 transposes.
SWEEP = [64, 256, 512, 1024, 1448, 2048, 2896, 4096]


def _loop(n_bytes: int) -> int:
    # Calls per timed sample: back to back, so a large call's own launch hides behind the one before.
    return 3 if n_bytes >= 64 << 20 else (10 if n_bytes >= 4 << 20 else 50)


def time_events(fn: Callable[[], Any], event: Callable[[], Any], sync: Callable[[], None], reps: int,
                loop: int) -> float:
    """Median milliseconds per call: device events around ``loop`` back-to-back calls, ``reps`` samples."""
    for _ in range(3):
        fn()
    sync()
    out = []
    for _ in range(reps):
        a, b = event(), event()
        a.record()
        for _ in range(loop):
            fn()
        b.record()
        b.synchronize()
        out.append(_elapsed(a, b) / loop)
    return statistics.median(out)


def _elapsed(a: Any, b: Any) -> float:
    if hasattr(a, "elapsed_time"):
        return float(a.elapsed_time(b))
    import cupy

    return float(cupy.cuda.get_elapsed_time(a, b))


def time_host(fn: Callable[[], Any], reps: int, loop: int) -> float:
    for _ in range(3):
        fn().block_until_ready()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(loop):
            r = fn()
        r.block_until_ready()
        out.append((time.perf_counter() - t) * 1e3 / loop)
    return statistics.median(out)


def case(label: str, shape: tuple[int, ...], perm: tuple[int, ...], dtype: str, reps: int) -> dict[str, Any]:
    import cupy
    import torch

    from unarray._kernels import transpose_cupy, transpose_triton

    tdt = getattr(torch, dtype)
    src = torch.randn(shape, device="cuda").to(tdt) if tdt.is_floating_point or tdt.is_complex else \
        torch.randint(-100, 100, shape, device="cuda", dtype=tdt)
    n_bytes = src.numel() * src.element_size()
    loop = _loop(n_bytes)
    v = src.permute(perm)
    p = plan(tuple(v.shape), tuple(v.stride()))
    assert p is not None
    tev, tsync = (lambda: torch.cuda.Event(enable_timing=True)), torch.cuda.synchronize
    row: dict[str, Any] = {"case": label, "shape": list(shape), "perm": list(perm), "dtype": dtype,
                           "bytes": n_bytes, "plan": {"batch": p.n_batch, "rows": p.rows, "cols": p.cols,
                                                      "vec_bytes": p.vec * src.element_size()}}
    ms: dict[str, float] = {}
    ms["copy (torch clone)"] = time_events(src.clone, tev, tsync, reps, loop)
    ms["torch .contiguous()"] = time_events(v.contiguous, tev, tsync, reps, loop)
    ms["ua torch"] = time_events(lambda: ua.ascontiguousarray(v), tev, tsync, reps, loop)
    ms["triton kernel (forced)"] = time_events(lambda: transpose_triton.transpose(v, p), tev, tsync, reps, loop)
    ref = v.contiguous()
    row["ua_torch_route"] = layout.route(ua._dispatch.one(v), v)
    row["ua_torch_ok"] = bool(torch.equal(ua.ascontiguousarray(v), ref)) and bool(
        torch.equal(transpose_triton.transpose(v, p), ref))
    # CuPy: the same bytes (bfloat16 as int16 words: CuPy has no bfloat16; the kernel copies bits).
    cs = cupy.from_dlpack(src.view(torch.int16) if dtype == "bfloat16" else src)
    cv = cs.transpose(perm)
    cev, csync = cupy.cuda.Event, cupy.cuda.Device().synchronize
    ms["copy (cupy copy)"] = time_events(cs.copy, cev, csync, reps, loop)
    ms["cupy.ascontiguousarray"] = time_events(lambda: cupy.ascontiguousarray(cv), cev, csync, reps, loop)
    ms["ua cupy"] = time_events(lambda: ua.ascontiguousarray(cv), cev, csync, reps, loop)
    if transpose_cupy.transposable(cv.itemsize, p, cv.data.ptr):
        ms["cupy kernel (forced)"] = time_events(lambda: transpose_cupy.transpose(cv, p), cev, csync, reps, loop)
        row["cupy_kernel_ok"] = bool((transpose_cupy.transpose(cv, p) == cupy.ascontiguousarray(cv)).all())
    row["ua_cupy_route"] = layout.route(ua._dispatch.one(cv), cv)
    row["ua_cupy_ok"] = bool((ua.ascontiguousarray(cv) == cupy.ascontiguousarray(cv)).all())
    try:
        import jax
        import jax.numpy as jnp

        js = jax.dlpack.from_dlpack(src.view(torch.int16) if dtype == "bfloat16" else src)
        if dtype == "bfloat16":
            js = js.view(jnp.bfloat16)
        f = jax.jit(lambda a: jnp.transpose(a, perm))
        ms["jax jit transpose"] = time_host(lambda: f(js), reps, loop)
        ms["jax copy"] = time_host(lambda: jnp.array(js, copy=True), reps, loop)
    except Exception as e:  # report only
        row["jax_error"] = f"{type(e).__name__}: {e}"[:200]
    row["ms"] = ms
    copy = min(ms["copy (torch clone)"], ms["copy (cupy copy)"])
    row["copy_ms"] = copy
    row["tbps"] = {k: 2 * n_bytes / (t * 1e-3) / 1e12 for k, t in ms.items()}
    row["fraction_of_copy"] = {k: copy / t for k, t in ms.items()}
    return row


def _free() -> None:
    import cupy
    import torch

    torch.cuda.empty_cache()
    cupy.get_default_memory_pool().free_all_blocks()


def sweep(reps: int) -> list[dict[str, Any]]:
    import cupy
    import torch

    from unarray._kernels import transpose_cupy, transpose_triton

    out = []
    tev, tsync = (lambda: torch.cuda.Event(enable_timing=True)), torch.cuda.synchronize
    for n in SWEEP:
        src = torch.randn(n, n, device="cuda")
        v = src.T
        p = plan(tuple(v.shape), tuple(v.stride()))
        cv = cupy.from_dlpack(src).T
        cev, csync = cupy.cuda.Event, cupy.cuda.Device().synchronize
        row = {"n": n, "bytes": n * n * 4, "ms": {
            "torch .contiguous()": time_events(v.contiguous, tev, tsync, reps, 50),
            "triton kernel (forced)": time_events(lambda v=v, p=p: transpose_triton.transpose(v, p), tev, tsync,
                                                  reps, 50),
            "cupy.ascontiguousarray": time_events(lambda cv=cv: cupy.ascontiguousarray(cv), cev, csync, reps, 50),
            "cupy kernel (forced)": time_events(lambda cv=cv, p=p: transpose_cupy.transpose(cv, p), cev, csync,
                                                reps, 50),
            "ua torch": time_events(lambda v=v: ua.ascontiguousarray(v), tev, tsync, reps, 50),
            "ua cupy": time_events(lambda cv=cv: ua.ascontiguousarray(cv), cev, csync, reps, 50),
        }}
        out.append(row)
    return out


def versions() -> dict[str, str]:
    import cupy
    import torch
    import triton

    v = {"python": platform.python_version(), "torch": torch.__version__, "torch cuda": str(torch.version.cuda),
         "triton": triton.__version__, "cupy": cupy.__version__, "unarray": ua.__version__,
         "device": torch.cuda.get_device_name(), "driver": str(cupy.cuda.runtime.driverGetVersion())}
    try:
        import jax

        v["jax"] = jax.__version__
    except Exception:
        pass
    return v


def write(out: Path, rows: list[dict[str, Any]], sw: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "layout_gpu.json").write_text(json.dumps({"meta": meta, "cases": rows, "sweep": sw}, indent=1))
    cols = ["torch .contiguous()", "ua torch", "triton kernel (forced)", "cupy.ascontiguousarray", "ua cupy",
            "cupy kernel (forced)", "jax jit transpose"]
    lines = [f"# ua.ascontiguousarray on {meta['versions']['device']}", "",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()), "",
             f"Command: `{meta['command']}`", "", f"Route thresholds: {meta['thresholds']}", "",
             "Fraction of copy bandwidth (copy = the faster of torch `clone` and CuPy `copy` of the same bytes; "
             "bytes read + written). Median of device-event samples.", "",
             "| case | copy TB/s | " + " | ".join(cols) + " | routes (torch / cupy) | ok |",
             "|---" * (len(cols) + 4) + "|"]
    for r in rows:
        copy_tbps = 2 * r["bytes"] / (r["copy_ms"] * 1e-3) / 1e12
        cells = [f"{r['fraction_of_copy'][c]:.2f}" if c in r["fraction_of_copy"] else "-" for c in cols]
        ok = r["ua_torch_ok"] and r["ua_cupy_ok"] and r.get("cupy_kernel_ok", True)
        lines.append(f"| {r['case']} | {copy_tbps:.2f} | " + " | ".join(cells)
                     + f" | {r['ua_torch_route']} / {r['ua_cupy_route']} | {'yes' if ok else 'NO'} |")
    lines += ["", "Size sweep (square float32 transposes; microseconds per call in a loop of back-to-back calls):",
              "", "| n | bytes | " + " | ".join(sw[0]["ms"]) + " |", "|---" * (len(sw[0]["ms"]) + 2) + "|"]
    for s in sw:
        lines.append(f"| {s['n']} | {s['bytes']} | " + " | ".join(f"{t * 1e3:.1f}" for t in s["ms"].values()) + " |")
    (out / "layout_gpu.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(max(10, len(rows) * 1.3), 5.5))
        width = 0.8 / len(cols)
        for i, c in enumerate(cols):
            vals = [r["fraction_of_copy"].get(c, 0.0) for r in rows]
            ax.bar(np.arange(len(rows)) + i * width, vals, width, label=c)
        ax.axhline(0.8, color="k", ls="--", lw=0.8)
        ax.set_xticks(np.arange(len(rows)) + 0.4 - width / 2)
        ax.set_xticklabels([r["case"] for r in rows], rotation=35, ha="right", fontsize=8)
        ax.set_ylabel("fraction of copy bandwidth")
        ax.set_title(f"Materialising permuted views, {meta['versions']['device']}")
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(out / "layout_gpu.png", dpi=110)
    except Exception as e:
        print("no plot:", e)


def _min_sides() -> dict[str, int]:
    # Each library's minimum side is its route's (unarray/_backends/<lib>/layout.py).
    from unarray._backends.cupy import layout as cupy_layout
    from unarray._backends.torch import layout as torch_layout

    return {"torch": torch_layout.MIN_SIDE, "cupy": cupy_layout.MIN_SIDE}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--quick", action="store_true", help="the targets only, no size sweep")
    args = ap.parse_args()
    meta = {"versions": versions(), "command": " ".join([sys.executable.rsplit("/", 1)[-1], *sys.argv]),
            "thresholds": {"KERNEL_MIN_BYTES": layout.KERNEL_MIN_BYTES, "KERNEL_MIN_SIDE": _min_sides(),
                           "KEPT_RUN_MIN_BYTES": layout.KEPT_RUN_MIN_BYTES,
                           "TRITON_MAX_ELEMENT_BYTES": layout.TRITON_MAX_ELEMENT_BYTES}}
    rows = []
    for label, shape, perm, dtype in TARGETS + ([] if args.quick else EXTRA):
        r = case(label, shape, perm, dtype, args.reps)
        keys = ("case", "ua_torch_route", "ua_cupy_route", "ua_torch_ok", "ua_cupy_ok")
        print(json.dumps({k: r[k] for k in keys}), {k: round(v, 3) for k, v in r["fraction_of_copy"].items()},
              flush=True)
        rows.append(r)
        _free()
    sw = [] if args.quick else sweep(args.reps)
    write(Path(args.out), rows, sw or [{"n": 0, "bytes": 0, "ms": {}}], meta)


if __name__ == "__main__":
    main()
