"""A pre-norm transformer block written once with unarray, eager and under ``ua.jit``, against the same
block written natively (torch.nn.functional / jax.nn) and compiled natively (torch.compile / jax.jit).

The block: layer norm, a QKV projection, causal multi-head attention (softmax inside), an output
projection, layer norm, a GELU MLP, two residuals. All four variants use the same weights and the same
precision (float32 matmuls at float32 accuracy, unarray's default policy: native JAX is traced under
``jax.default_matmul_precision("float32")``, native torch keeps its default "highest"), and their outputs
are checked against each other before timing.

Timing: the median of ``--repeat`` calls after ``--warmup`` calls (the compile happens in the warm-up and
is reported separately as ``first_call_s``); CUDA events for torch on a GPU, ``block_until_ready`` for
JAX. The figure of merit is ``ua.jit / native compiled`` (target: within 5%).

    python benchmarks/jit_block.py --out benchmarks/results/jit_cpu             # CPU, modest sizes
    python benchmarks/jit_block.py --device cuda --out $OUT/jit_h100              # GPU (under 4 minutes)
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import unarray as ua

SIZES = {"cpu": {"batch": 2, "seq": 128, "dim": 256, "heads": 4},
         "cuda": {"batch": 8, "seq": 1024, "dim": 1024, "heads": 16}}
EPS = 1e-5


# -- the block, once, with unarray -------------------------------------------------------------------------------

def ua_block(x: Any, p: dict[str, Any], heads: int) -> Any:
    b, s, d = x.shape
    h = ua.nn.layer_norm(x, weight=p["ln1_w"], bias=p["ln1_b"], eps=EPS)
    qkv = ua.reshape(ua.matmul(h, p["wqkv"]), (b, s, 3, heads, d // heads))
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    a = ua.nn.scaled_dot_product_attention(q, k, v, is_causal=True, layout="bshd")
    x = ua.add(x, ua.matmul(ua.reshape(a, (b, s, d)), p["wo"]))
    h = ua.nn.layer_norm(x, weight=p["ln2_w"], bias=p["ln2_b"], eps=EPS)
    return ua.add(x, ua.matmul(ua.nn.gelu(ua.matmul(h, p["w1"])), p["w2"]))


# -- the same block, natively -------------------------------------------------------------------------------------

def torch_block(x: Any, p: dict[str, Any], heads: int) -> Any:
    import torch.nn.functional as F

    b, s, d = x.shape
    h = F.layer_norm(x, (d,), p["ln1_w"], p["ln1_b"], EPS)
    q, k, v = (h @ p["wqkv"]).reshape(b, s, 3, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, d)
    x = x + a @ p["wo"]
    h = F.layer_norm(x, (d,), p["ln2_w"], p["ln2_b"], EPS)
    return x + F.gelu(h @ p["w1"]) @ p["w2"]


def jax_block(x: Any, p: dict[str, Any], heads: int) -> Any:
    import jax

    def norm(z: Any, w: Any, bias: Any) -> Any:
        m = z.mean(-1, keepdims=True)
        return (z - m) * jax.lax.rsqrt(((z - m) ** 2).mean(-1, keepdims=True) + EPS) * w + bias

    b, s, d = x.shape
    h = norm(x, p["ln1_w"], p["ln1_b"])
    qkv = (h @ p["wqkv"]).reshape(b, s, 3, heads, d // heads)
    a = jax.nn.dot_product_attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], is_causal=True)
    x = x + a.reshape(b, s, d) @ p["wo"]
    h = norm(x, p["ln2_w"], p["ln2_b"])
    return x + jax.nn.gelu(h @ p["w1"], approximate=False) @ p["w2"]


# -- inputs and timing --------------------------------------------------------------------------------------------

def host_inputs(size: dict[str, int]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    d = size["dim"]
    x = rng.standard_normal((size["batch"], size["seq"], d))
    p = {"ln1_w": 1 + 0.1 * rng.standard_normal(d), "ln1_b": 0.1 * rng.standard_normal(d),
         "wqkv": rng.standard_normal((d, 3 * d)) / math.sqrt(d), "wo": rng.standard_normal((d, d)) / math.sqrt(d),
         "ln2_w": 1 + 0.1 * rng.standard_normal(d), "ln2_b": 0.1 * rng.standard_normal(d),
         "w1": rng.standard_normal((d, 4 * d)) / math.sqrt(d), "w2": rng.standard_normal((4 * d, d)) / math.sqrt(4 * d)}
    return x.astype(np.float32), {k: v.astype(np.float32) for k, v in p.items()}


def syncer(framework: str, device: str) -> Callable[[Any], None]:
    if framework == "jax":
        return lambda out: out.block_until_ready()
    if device == "cuda":
        import torch

        return lambda out: torch.cuda.synchronize()
    return lambda out: None


def measure(fns: dict[str, Callable[[], Any]], framework: str, device: str, warmup: int,
            repeat: int) -> dict[str, tuple[float, list[float]]]:
    # (first call in seconds, the timed calls in milliseconds) per variant. The variants take turns call
    # by call, so a busy machine slows each of them alike.
    sync = syncer(framework, device)
    first = {}
    for name, fn in fns.items():
        t = time.perf_counter()
        sync(fn())
        first[name] = time.perf_counter() - t
        for _ in range(warmup):
            sync(fn())
    times: dict[str, list[float]] = {name: [] for name in fns}
    events = framework == "torch" and device == "cuda"
    for _ in range(repeat):
        for name, fn in fns.items():
            if events:
                import torch

                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times[name].append(start.elapsed_time(end))
            else:
                t = time.perf_counter()
                sync(fn())
                times[name].append((time.perf_counter() - t) * 1e3)
    return {name: (first[name], times[name]) for name in fns}


def variants(framework: str, device: str, size: dict[str, int], dtype: str) -> dict[str, Callable[[], Any]]:
    x_h, p_h = host_inputs(size)
    heads = size["heads"]
    if framework == "torch":
        import torch

        dev, dt = torch.device(device), getattr(torch, dtype)
        x = torch.from_numpy(x_h).to(dev, dt)
        p = {k: torch.from_numpy(v).to(dev, dt) for k, v in p_h.items()}
        ua_jit = ua.jit(ua_block, static_argnames="heads")
        native = torch.compile(torch_block)
        return {"ua eager": lambda: ua_block(x, p, heads), "ua.jit": lambda: ua_jit(x, p, heads=heads),
                "native eager": lambda: torch_block(x, p, heads), "native compiled": lambda: native(x, p, heads)}
    import jax

    dev = jax.devices("gpu" if device == "cuda" else "cpu")[0]
    x = jax.device_put(x_h, dev).astype(dtype)
    p = {k: jax.device_put(v, dev).astype(dtype) for k, v in p_h.items()}
    ua_jit = ua.jit(ua_block, static_argnames="heads")

    def native_traced(x: Any, p: dict[str, Any]) -> Any:
        with jax.default_matmul_precision("float32"):  # the precision unarray's "highest" gives
            return jax_block(x, p, heads)

    native = jax.jit(native_traced)

    def native_eager() -> Any:
        with jax.default_matmul_precision("float32"):
            return jax_block(x, p, heads)

    return {"ua eager": lambda: ua_block(x, p, heads), "ua.jit": lambda: ua_jit(x, p, heads=heads),
            "native eager": native_eager, "native compiled": lambda: native(x, p)}


def to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        return np.asarray(x.detach().cpu().float().numpy(), np.float64)
    return np.asarray(x.astype("float32"), np.float64)


def run(framework: str, device: str, size: dict[str, int], dtype: str, warmup: int, repeat: int) -> dict[str, Any]:
    fns = variants(framework, device, size, dtype)
    timed = measure(fns, framework, device, warmup, repeat)  # the first calls compile
    outs = {name: to_numpy(fn()) for name, fn in fns.items()}
    ref = outs["native compiled"]
    scale = float(np.abs(ref).max())
    err = {name: float(np.abs(o - ref).max() / scale) for name, o in outs.items()}
    res: dict[str, Any] = {"framework": framework, "device": device, "dtype": dtype, **size, "variants": {}}
    for name, (first, times) in timed.items():
        res["variants"][name] = {"median_ms": statistics.median(times), "min_ms": min(times),
                                 "first_call_s": first, "max_rel_err_vs_native_compiled": err[name]}
    v = res["variants"]
    res["ua.jit / native compiled"] = v["ua.jit"]["median_ms"] / v["native compiled"]["median_ms"]
    res["ua.jit / native compiled (min)"] = v["ua.jit"]["min_ms"] / v["native compiled"]["min_ms"]
    res["ua eager / native eager"] = v["ua eager"]["median_ms"] / v["native eager"]["median_ms"]
    res["ua.jit speed-up over ua eager"] = v["ua eager"]["median_ms"] / v["ua.jit"]["median_ms"]
    return res


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = ["# Transformer block: unarray eager and ua.jit vs native eager and native compiled", "",
             f"Machine: {meta['machine']}; {meta['versions']}", "",
             "Median of the timed calls after warm-up (ms); ratio = ua.jit / native compiled (target <= 1.05), "
             "of the medians and of the fastest calls (both move with the load of a shared machine).",
             "", "| framework | device | dtype | B x S x D (heads) | ua eager | ua.jit | native eager | "
             "native compiled | ua.jit / native compiled (median) | (min) | max rel. err of ua.jit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        v = r["variants"]
        lines.append(f"| {r['framework']} | {r['device']} | {r['dtype']} | {r['batch']} x {r['seq']} x {r['dim']} "
                     f"({r['heads']}) | {v['ua eager']['median_ms']:.3f} | {v['ua.jit']['median_ms']:.3f} | "
                     f"{v['native eager']['median_ms']:.3f} | {v['native compiled']['median_ms']:.3f} | "
                     f"{r['ua.jit / native compiled']:.3f} | {r['ua.jit / native compiled (min)']:.3f} | "
                     f"{v['ua.jit']['max_rel_err_vs_native_compiled']:.1e} |")
    lines += [f"\nNot run: {f}" for f in meta["failed"]]
    lines += ["", "First call (compile included), seconds (ua.jit compiles before native compiled, so it also "
              "pays the compiler's start-up in the process):", "",
              "| framework | ua eager | ua.jit | native eager | native compiled |", "|---|---|---|---|---|"]
    for r in results:
        v = r["variants"]
        lines.append(f"| {r['framework']} | " + " | ".join(f"{v[k]['first_call_s']:.2f}" for k in
                                                            ("ua eager", "ua.jit", "native eager", "native compiled"))
                     + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--frameworks", default="torch,jax")
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    ap.add_argument("--batch", type=int)
    ap.add_argument("--seq", type=int)
    ap.add_argument("--dim", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--threads", type=int, help="torch CPU threads (torch.set_num_threads); default: torch's")
    ap.add_argument("--out", type=pathlib.Path, required=True)
    a = ap.parse_args()
    if a.threads:
        import torch

        torch.set_num_threads(a.threads)
    size = {k: getattr(a, k) or v for k, v in SIZES[a.device].items()}
    dtype = a.dtype
    results, versions, failed = [], {}, []
    for fw in a.frameworks.split(","):
        mod = __import__(fw)
        versions[fw] = mod.__version__
        try:
            results.append(run(fw, a.device, size, dtype, a.warmup, a.repeat))
        except Exception as e:  # noqa: BLE001 - one framework that cannot run here (no GPU build) is reported
            failed.append(f"{fw}: {type(e).__name__}: {e}")
            print(failed[-1])
            continue
        print(json.dumps({k: v for k, v in results[-1].items() if k != "variants"}))
    machine = f"{platform.processor() or platform.machine()}, {__import__('os').cpu_count()} CPUs"
    if a.device == "cuda":
        try:
            import torch

            machine += f", {torch.cuda.get_device_name()}"
        except Exception:  # noqa: BLE001 - a torch without CUDA: the GPU is named by the results' framework
            pass
    if a.threads:
        machine += f", torch threads {a.threads}"
    meta = {"machine": machine, "versions": ", ".join(f"{k} {v}" for k, v in versions.items())
            + f", unarray {ua.__version__}", "failed": failed}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "jit_block.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    (a.out / "jit_block.md").write_text(markdown(results, meta))
    print(markdown(results, meta))


if __name__ == "__main__":
    main()
