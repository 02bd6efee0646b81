"""Which part of the transformer block makes ua.jit slower than native compiled code, on a GPU (issue 19).

The block of ``benchmarks/jit_block.py`` with each part (layer norm, attention, GELU, matmul) written
either with unarray or natively, all compiled by ``ua.jit``, timed side by side in one process: all
unarray, all native, and each part alone swapped to native. For torch also a torch.profiler table of
the all-unarray and all-native graphs, and Inductor's generated code for both; for JAX the optimized
HLO of both.

    python3 benchmarks/gpu/jit_parts.py --out $OUT/jit_parts
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import jit_block  # noqa: E402

import unarray as ua  # noqa: E402

PARTS = ("ln", "attn", "gelu", "mm")
DEVICE = "cuda"


def block(x: Any, p: dict[str, Any], heads: int, native: frozenset[str], fw: str) -> Any:
    if fw == "torch":
        import torch.nn.functional as F

        def ln(z: Any, w: Any, b: Any) -> Any:
            return F.layer_norm(z, (z.shape[-1],), w, b, jit_block.EPS)

        def attn(q: Any, k: Any, v: Any) -> Any:  # (b, s, h, d) in and out
            t = (q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
            return F.scaled_dot_product_attention(*t, is_causal=True).transpose(1, 2)

        gelu = F.gelu
    else:
        import jax

        def ln(z: Any, w: Any, b: Any) -> Any:
            m = z.mean(-1, keepdims=True)
            return (z - m) * jax.lax.rsqrt(((z - m) ** 2).mean(-1, keepdims=True) + jit_block.EPS) * w + b

        def attn(q: Any, k: Any, v: Any) -> Any:
            return jax.nn.dot_product_attention(q, k, v, is_causal=True)

        def gelu(z: Any) -> Any:
            return jax.nn.gelu(z, approximate=False)

    def u_ln(z: Any, w: Any, b: Any) -> Any:
        return ua.nn.layer_norm(z, weight=w, bias=b, eps=jit_block.EPS)

    def u_attn(q: Any, k: Any, v: Any) -> Any:
        return ua.nn.scaled_dot_product_attention(q, k, v, is_causal=True, layout="bshd")

    def n_mm(a: Any, b: Any) -> Any:
        return a @ b

    L = ln if "ln" in native else u_ln
    A = attn if "attn" in native else u_attn
    G = gelu if "gelu" in native else ua.nn.gelu
    M = n_mm if "mm" in native else ua.matmul
    b, s, d = x.shape
    h = L(x, p["ln1_w"], p["ln1_b"])
    qkv = M(h, p["wqkv"]).reshape(b, s, 3, heads, d // heads)
    a = A(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2])
    x = x + M(a.reshape(b, s, d), p["wo"])
    h = L(x, p["ln2_w"], p["ln2_b"])
    return x + M(G(M(h, p["w1"])), p["w2"])


def timed(fn: Any, fw: str, warmup: int = 5, repeat: int = 40) -> dict[str, float]:
    import torch

    for _ in range(warmup):
        out = fn()
    if fw == "torch" and DEVICE == "cuda":
        torch.cuda.synchronize()
        ev = []
        for _ in range(repeat):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ev.append(s.elapsed_time(e))
        t = time.perf_counter()
        for _ in range(repeat):
            fn()
        host = (time.perf_counter() - t) / repeat * 1e3
        torch.cuda.synchronize()
        return {"median_ms": statistics.median(ev), "min_ms": min(ev), "host_issue_ms": host}
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        r = fn()
        if fw == "jax":
            r.block_until_ready()
        times.append((time.perf_counter() - t) * 1e3)
    del out
    return {"median_ms": statistics.median(times), "min_ms": min(times)}


def run(fw: str, dtype: str, precision: str, out_dir: pathlib.Path) -> dict[str, Any]:
    size = jit_block.SIZES[DEVICE]
    x_h, p_h = jit_block.host_inputs(size)
    if fw == "torch":
        import torch

        x = torch.from_numpy(x_h).to(DEVICE, getattr(torch, dtype))
        p = {k: torch.from_numpy(v).to(DEVICE, getattr(torch, dtype)) for k, v in p_h.items()}
    else:
        import jax

        dev = jax.devices("gpu" if DEVICE == "cuda" else "cpu")[0]
        x = jax.device_put(x_h, dev).astype(dtype)
        p = {k: jax.device_put(v, dev).astype(dtype) for k, v in p_h.items()}
    heads = size["heads"]
    combos = {"all ua": frozenset(), "all native": frozenset(PARTS)}
    combos.update({f"native {part}": frozenset((part,)) for part in PARTS})
    res: dict[str, Any] = {}
    fns: dict[str, Any] = {}
    with ua.precision(precision):  # type: ignore[arg-type]
        for name, native in combos.items():
            def f(x: Any, p: Any, heads: int, native: frozenset[str] = native) -> Any:
                return block(x, p, heads, native, fw)

            fns[name] = ua.jit(f, static_argnames="heads")
        if fw == "torch":
            fns["torch.compile all native"] = __import__("torch").compile(
                lambda x, p, heads: block(x, p, heads, frozenset(PARTS), fw))
        else:
            import jax

            fns["jax.jit all native"] = jax.jit(lambda x, p: block(x, p, heads, frozenset(PARTS), fw))
        calls: dict[str, Any] = {}
        for name, f in fns.items():
            if name.startswith(("torch.compile", "jax.jit")):
                calls[name] = (lambda f=f: f(x, p, heads)) if fw == "torch" else (lambda f=f: f(x, p))
            else:
                calls[name] = lambda f=f: f(x, p, heads=heads)
        for _ in range(2):  # two rounds, interleaved by variant
            for name, call in calls.items():
                res.setdefault(name, []).append(timed(call, fw))
        if fw == "torch":
            profile(calls, out_dir / f"torch_{dtype}")
        else:
            hlo(fns, x, p, heads, out_dir / f"jax_{dtype}_{precision}")
    base = statistics.median(r["median_ms"] for r in res["all native"])
    return {name: {"rounds": r, "median_over_all_native": statistics.median(v["median_ms"] for v in r) / base}
            for name, r in res.items()}


def profile(calls: dict[str, Any], out: pathlib.Path) -> None:
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as prof

    out.mkdir(parents=True, exist_ok=True)
    for name in ("all ua", "all native"):
        call = calls[name]
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEVICE == "cuda" else [])
        with prof(activities=acts) as pr:
            for _ in range(10):
                call()
            if DEVICE == "cuda":
                torch.cuda.synchronize()
        tag = name.replace(" ", "_")
        (out / f"profile_{tag}.txt").write_text(pr.key_averages().table(sort_by="self_cpu_time_total", row_limit=40))
    from torch._inductor.codecache import PyCodeCache

    for i, mod in enumerate(list(PyCodeCache.modules)):
        path = getattr(mod, "__file__", None)
        if path:
            text = pathlib.Path(path).read_text()
            if "def call(" in text:
                (out / f"inductor_{i}.py").write_text(text)


def hlo(fns: dict[str, Any], x: Any, p: Any, heads: int, out: pathlib.Path) -> None:
    import jax

    out.mkdir(parents=True, exist_ok=True)
    for name in ("all ua", "all native"):
        f = fns[name]
        entry = next(iter(f._cache.values()))  # the jax.jit of ua.jit's cache entry
        text = entry.run.lower(x, p, heads=heads).compile().as_text()
        (out / f"hlo_{name.replace(' ', '_')}.txt").write_text(text)
    del jax


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--cases", default="torch:bfloat16:highest,jax:float32:tf32,torch:float32:highest")
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    args.out.mkdir(parents=True, exist_ok=True)
    import jax
    import torch

    name = torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu"
    out: dict[str, Any] = {"device": name, "torch": torch.__version__, "jax": jax.__version__}
    for case in args.cases.split(","):
        fw, dtype, precision = case.split(":")
        t = time.perf_counter()
        try:
            out[case] = run(fw, dtype, precision, args.out)
        except Exception:  # noqa: BLE001 - one case failing leaves the others results
            import traceback

            out[case] = {"error": traceback.format_exc()[-2000:]}
        out[f"{case} s"] = time.perf_counter() - t
        (args.out / "jit_parts.json").write_text(json.dumps(out, indent=1, default=str))
        print(case, "done", round(out[f"{case} s"], 1), "s", flush=True)


if __name__ == "__main__":
    main()
