"""How close does a transformer block under ``ua.jit`` come to the same block written and compiled natively?

A pre-norm transformer block written once with unarray, eager and under ``ua.jit``, against the same
block written natively (torch.nn.functional / jax.nn) and compiled natively (torch.compile / jax.jit).

The block: layer norm, a QKV projection, causal multi-head attention (softmax inside), an output
projection, layer norm, a GELU MLP, two residuals. All four variants use the same weights and the same
precision. ``--precision highest`` (the default): float32 matmuls at float32 accuracy, unarray's default
policy; native JAX is traced under ``jax.default_matmul_precision("float32")`` (entered inside the traced
function, so it is in force while ``jax.jit`` traces: every dot_general of the native jaxpr, attention's
included, carries Precision.HIGHEST, recorded as ``dot_precisions``), native torch keeps its default
"highest". ``--precision tf32``: the reduced precision both sides offer, unarray under
``ua.precision("tf32")``, native JAX at its default matmul precision, native torch under
``torch.set_float32_matmul_precision("high")`` (restored after). Each output is compared with the block
computed in float64 NumPy on the host (``max_rel_err_vs_float64``) and with native compiled.

Timing: the median of ``--repeat`` calls after ``--warmup`` calls (the compile happens in the warm-up and
is reported separately as ``first_call_s``); CUDA events for torch on a GPU, ``block_until_ready`` for
JAX. The figure of merit is ``ua.jit / native compiled`` (target: within 5%).

    python benchmarks/jit_block.py --out benchmarks/results/jit_cpu             # CPU, modest sizes
    python benchmarks/jit_block.py --device cuda --out $OUT/jit_h100              # GPU (under 4 minutes)
    python benchmarks/jit_block.py --device cuda --precision tf32 --variants ua.jit,"native compiled" --out DIR
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

NAMES = ("ua eager", "ua.jit", "native eager", "native compiled")
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


def ref_block(x: np.ndarray, p: dict[str, np.ndarray], heads: int) -> np.ndarray:
    # The block in float64 NumPy (the exact GELU through math.erf).
    def norm(z: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
        m = z.mean(-1, keepdims=True)
        return (z - m) / np.sqrt(((z - m) ** 2).mean(-1, keepdims=True) + EPS) * w + bias

    x, p = x.astype(np.float64), {k: v.astype(np.float64) for k, v in p.items()}
    b, s, d = x.shape
    qkv = (norm(x, p["ln1_w"], p["ln1_b"]) @ p["wqkv"]).reshape(b, s, 3, heads, d // heads).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    z = q @ np.swapaxes(k, -1, -2) / math.sqrt(d // heads)
    z = np.where(np.tril(np.ones((s, s), bool)), z, -np.inf)
    e = np.exp(z - z.max(-1, keepdims=True))
    a = ((e / e.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
    x = x + a @ p["wo"]
    u = norm(x, p["ln2_w"], p["ln2_b"]) @ p["w1"]
    erf = np.vectorize(math.erf)
    return x + (u * (1 + erf(u / math.sqrt(2))) / 2) @ p["w2"]


def dot_precisions(fn: Callable[..., Any], *args: Any) -> list[str]:
    # The precision of every dot_general in the jaxpr of fn(*args), nested jaxprs (pjit, custom_vjp) included.
    import jax

    found: set[str] = set()

    def walk(jaxpr: Any) -> None:
        for e in jaxpr.eqns:
            if e.primitive.name == "dot_general":
                found.add(str(e.params.get("precision")))
            for v in e.params.values():
                for sub in (v if isinstance(v, (tuple, list)) else (v,)):
                    inner = getattr(sub, "jaxpr", None)
                    if inner is not None:
                        walk(getattr(inner, "jaxpr", inner))

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    return sorted(found)


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


def variants(framework: str, device: str, size: dict[str, int], dtype: str, reduced: bool,
             info: dict[str, Any]) -> dict[str, Callable[[], Any]]:
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

    # "highest": the precision unarray's "highest" gives, in force while jax.jit traces native_traced;
    # "tf32": JAX's own default (reduced on a GPU).
    scope = "default" if reduced else "float32"

    def native_traced(x: Any, p: dict[str, Any]) -> Any:
        with jax.default_matmul_precision(scope):
            return jax_block(x, p, heads)

    native = jax.jit(native_traced)

    def native_eager() -> Any:
        with jax.default_matmul_precision(scope):
            return jax_block(x, p, heads)

    info["dot_precisions"] = {"native": dot_precisions(native_traced, x, p),
                              "ua": dot_precisions(lambda x, p: ua_block(x, p, heads), x, p)}

    return {"ua eager": lambda: ua_block(x, p, heads), "ua.jit": lambda: ua_jit(x, p, heads=heads),
            "native eager": native_eager, "native compiled": lambda: native(x, p)}


def to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        return np.asarray(x.detach().cpu().float().numpy(), np.float64)
    return np.asarray(x.astype("float32"), np.float64)


def run(framework: str, device: str, size: dict[str, int], dtype: str, warmup: int, repeat: int,
        precision: str = "highest", names: tuple[str, ...] = NAMES) -> dict[str, Any]:
    reduced = precision != "highest"
    saved = None
    if framework == "torch" and reduced:
        import torch

        saved = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high")  # native torch's TF32 setting, for its compile and its calls
    try:
        with ua.precision(precision):  # type: ignore[arg-type]
            info: dict[str, Any] = {}
            fns = {k: f for k, f in variants(framework, device, size, dtype, reduced, info).items() if k in names}
            timed = measure(fns, framework, device, warmup, repeat)  # the first calls compile
            outs = {name: to_numpy(fn()) for name, fn in fns.items()}
    finally:
        if saved is not None:
            torch.set_float32_matmul_precision(saved)
    ref = outs["native compiled"]
    scale = float(np.abs(ref).max())
    err = {name: float(np.abs(o - ref).max() / scale) for name, o in outs.items()}
    exact = ref_block(*host_inputs(size), size["heads"])
    exact_scale = float(np.abs(exact).max())
    err64 = {name: float(np.abs(o - exact).max() / exact_scale) for name, o in outs.items()}
    res: dict[str, Any] = {"framework": framework, "device": device, "dtype": dtype, "precision": precision, **size,
                           **info, "variants": {}}
    for name, (first, times) in timed.items():
        res["variants"][name] = {"median_ms": statistics.median(times), "min_ms": min(times),
                                 "first_call_s": first, "max_rel_err_vs_native_compiled": err[name],
                                 "max_rel_err_vs_float64": err64[name]}
    v = res["variants"]
    res["ua.jit / native compiled"] = v["ua.jit"]["median_ms"] / v["native compiled"]["median_ms"]
    res["ua.jit / native compiled (min)"] = v["ua.jit"]["min_ms"] / v["native compiled"]["min_ms"]
    if "ua eager" in v and "native eager" in v:
        res["ua eager / native eager"] = v["ua eager"]["median_ms"] / v["native eager"]["median_ms"]
        res["ua.jit speed-up over ua eager"] = v["ua eager"]["median_ms"] / v["ua.jit"]["median_ms"]
    return res


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = ["# Transformer block: unarray eager and ua.jit vs native eager and native compiled", "",
             f"Machine: {meta['machine']}; {meta['versions']}", "",
             "Median of the timed calls after warm-up (ms); ratio = ua.jit / native compiled (target <= 1.05), "
             "of the medians and of the fastest calls (both move with the load of a shared machine).",
             "", "| framework | device | dtype | precision | B x S x D (heads) | ua eager | ua.jit | native eager | "
             "native compiled | ua.jit / native compiled (median) | (min) | max rel. err vs float64: ua.jit | "
             "native compiled |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def ms(v: dict[str, Any], k: str) -> str:
        return f"{v[k]['median_ms']:.3f}" if k in v else "-"

    for r in results:
        v = r["variants"]
        lines.append(f"| {r['framework']} | {r['device']} | {r['dtype']} | {r.get('precision', 'highest')} | "
                     f"{r['batch']} x {r['seq']} x {r['dim']} ({r['heads']}) | {ms(v, 'ua eager')} | "
                     f"{ms(v, 'ua.jit')} | {ms(v, 'native eager')} | {ms(v, 'native compiled')} | "
                     f"{r['ua.jit / native compiled']:.3f} | {r['ua.jit / native compiled (min)']:.3f} | "
                     f"{v['ua.jit']['max_rel_err_vs_float64']:.1e} | "
                     f"{v['native compiled']['max_rel_err_vs_float64']:.1e} |")
    lines += [f"\nNot run: {f}" for f in meta["failed"]]
    lines += [f"\nJAX dot_general precisions ({r['dtype']}, {r.get('precision')}): {r['dot_precisions']}"
              for r in results if "dot_precisions" in r]
    lines += ["", "First call (compile included), seconds (ua.jit compiles before native compiled, so it also "
              "pays the compiler's start-up in the process):", "",
              "| framework | ua eager | ua.jit | native eager | native compiled |", "|---|---|---|---|---|"]
    for r in results:
        v = r["variants"]
        lines.append(f"| {r['framework']} | " + " | ".join(f"{v[k]['first_call_s']:.2f}" if k in v else "-"
                                                            for k in NAMES) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--frameworks", default="torch,jax")
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    ap.add_argument("--precision", default="highest", choices=("highest", "tf32"),
                    help="highest: float32 accuracy on both sides; tf32: unarray's 'tf32' against the native "
                         "frameworks' reduced defaults (JAX's default, torch's 'high')")
    ap.add_argument("--variants", default=",".join(NAMES), help="which of the four variants to run (ua.jit and "
                    "native compiled are always run)")
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
    names = tuple(n for n in NAMES if n in {*a.variants.split(","), "ua.jit", "native compiled"})
    results, versions, failed = [], {}, []
    for fw in a.frameworks.split(","):
        mod = __import__(fw)
        versions[fw] = mod.__version__
        try:
            results.append(run(fw, a.device, size, dtype, a.warmup, a.repeat, a.precision, names))
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
