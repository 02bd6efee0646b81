"""How fast are structured attention masks (a window, causal aligned bottom-right, segment ids) on the GPU?

Per mask form, ua.scaled_dot_product_attention against the best native kernel for that mask on the same arrays:
torch's compiled flex_attention under create_block_mask for a window or segments, SDPA with causal_lower_right for
causal aligned bottom-right, SDPA unmasked on the reachable keys for a decode step; JAX's cuDNN local_window_size;
CuPy (in a child without torch) against its cuDNN graph executed directly. Then the dense-mask call against the
structured call at S = 32k (time and peak memory), and decode rows (L = 1, S = 8k/32k/128k, GQA 32/8, bf16, D = 128).

Timing: torch and CuPy with CUDA events, `inner` calls back to back per group (loop) and one call after a
synchronize (single), median of the groups after warm-up, the two contenders alternating; JAX by wall clock around
`inner` calls blocking on the last. Peak: torch.cuda.max_memory_allocated beyond what was allocated before the call.

    OUT=out python benchmarks/gpu/attention_masks.py   # writes $OUT/attention_masks.{json,md}
"""

# ruff: noqa: B023  (timed closures run inside the iteration that binds their loop variables)
from __future__ import annotations

import json
import os
import pathlib
import statistics
import subprocess
import sys
import time
import traceback
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

OUT = pathlib.Path(os.environ.get("OUT", "out"))
BUDGET_S = float(os.environ.get("BUDGET_S", "330"))
START = time.perf_counter()
ROWS: list[dict[str, Any]] = []
ERRORS: list[str] = []


def left() -> float:
    return BUDGET_S - (time.perf_counter() - START)


def row(section: str, case: str, ours: float, native: float, native_name: str, **extra: Any) -> None:
    r = {"section": section, "case": case, "unarray_ms": round(ours, 4), "native": native_name,
         "native_ms": round(native, 4), "ratio": round(native / ours, 3), **extra}
    ROWS.append(r)
    print(json.dumps(r), flush=True)


def cuda_times(fns: dict[str, Any], inner: int = 8, reps: int = 15, warm: int = 3) -> dict[str, tuple[float, float]]:
    """(loop ms per call, single-call ms) per contender, alternating contenders group by group."""
    import torch

    for fn in fns.values():
        for _ in range(warm):
            fn()
    torch.cuda.synchronize()
    loop: dict[str, list[float]] = {n: [] for n in fns}
    single: dict[str, list[float]] = {n: [] for n in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(inner):
                fn()
            b.record()
            b.synchronize()
            loop[name].append(a.elapsed_time(b) / inner)
            torch.cuda.synchronize()
            a.record()
            fn()
            b.record()
            b.synchronize()
            single[name].append(a.elapsed_time(b))
    return {n: (statistics.median(loop[n]), statistics.median(single[n])) for n in fns}


def peak(fn: Any) -> float:
    import torch

    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = fn()
    torch.cuda.synchronize()
    del out
    return (torch.cuda.max_memory_allocated() - base) / 2**30


def section(name: str, fn: Any) -> None:
    if left() < 20:
        ERRORS.append(f"{name}: skipped, time budget spent")
        return
    try:
        fn()
    except Exception as e:  # one section must not lose the others
        ERRORS.append(f"{name}: {type(e).__name__}: {e}")
        traceback.print_exc()


def _packed(torch: Any, s: int, docs: int) -> Any:
    g = torch.Generator().manual_seed(docs)
    cuts = torch.sort(torch.randint(1, s, (docs - 1,), generator=g)).values
    return (torch.arange(s)[:, None] >= cuts[None, :]).sum(-1).to(torch.int32)[None].cuda()


def bench_torch_forms() -> None:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention.bias import causal_lower_right
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    import unarray as ua

    flex = torch.compile(flex_attention)
    b, h, s, d, w = 1, 16, 16384, 128, 1024
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))

    t0 = time.perf_counter()
    ua.scaled_dot_product_attention(q, k, v, window=(w, 0))
    torch.cuda.synchronize()
    first = time.perf_counter() - t0

    def window_mod(b_: Any, h_: Any, qi: Any, kv: Any) -> Any:
        return (kv <= qi) & (kv >= qi - w)

    bm = create_block_mask(window_mod, None, None, s, s)
    t = cuda_times({"ua": lambda: ua.scaled_dot_product_attention(q, k, v, window=(w, 0)),
                    "native": lambda: flex(q, k, v, block_mask=bm)})
    row("torch", f"window ({w}, 0), B{b} H{h} S{s} D{d} bf16", t["ua"][0], t["native"][0], "compiled flex_attention",
        first_call_s=round(first, 1), kernel=ua.explain("scaled_dot_product_attention", q, k, v, window=(w, 0)).kernel)

    ids = _packed(torch, s, 8)

    def doc_mod(b_: Any, h_: Any, qi: Any, kv: Any) -> Any:
        return (ids[0, qi] == ids[0, kv]) & (kv <= qi)

    bm = create_block_mask(doc_mod, None, None, s, s)
    t0 = time.perf_counter()
    ua.scaled_dot_product_attention(q, k, v, segment_ids=ids, is_causal=True)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    t = cuda_times({"ua": lambda: ua.scaled_dot_product_attention(q, k, v, segment_ids=ids, is_causal=True),
                    "native": lambda: flex(q, k, v, block_mask=bm)})
    row("torch", f"segments (8 packed documents) + causal, B{b} H{h} S{s} D{d} bf16", t["ua"][0], t["native"][0],
        "compiled flex_attention", first_call_s=round(first, 1))

    lq = 4096
    ql = q[:, :, :lq]
    bias = causal_lower_right(lq, s)
    t = cuda_times({"ua": lambda: ua.scaled_dot_product_attention(ql, k, v, is_causal=True),
                    "native": lambda: F.scaled_dot_product_attention(ql, k, v, attn_mask=bias)})
    row("torch", f"causal bottom-right L{lq} S{s}, H{h} D{d} bf16", t["ua"][0], t["native"][0],
        "SDPA causal_lower_right",
        kernel=ua.explain("scaled_dot_product_attention", ql, k, v, is_causal=True).kernel)

    off = s - lq

    def br_window(b_: Any, h_: Any, qi: Any, kv: Any) -> Any:
        return (kv <= qi + off) & (kv >= qi + off - w)

    bm = create_block_mask(br_window, None, None, lq, s)
    t = cuda_times({"ua": lambda: ua.scaled_dot_product_attention(ql, k, v, window=(w, 0)),
                    "native": lambda: flex(ql, k, v, block_mask=bm)})
    row("torch", f"window ({w}, 0) bottom-right L{lq} S{s}, H{h} D{d} bf16", t["ua"][0], t["native"][0],
        "compiled flex_attention")


def bench_dense_vs_structured() -> None:
    import torch

    import unarray as ua

    b, h, s, d, w = 1, 16, 32768, 128, 1024
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ids = _packed(torch, s, 16)
    forms = {
        f"window ({w}, 0)": ({"window": (w, 0)},
                             lambda: torch.ones(s, s, dtype=torch.bool, device="cuda").tril().triu(-w)),
        "segments (16 documents) + causal": ({"segment_ids": ids, "is_causal": True},
                                             lambda: (ids[0, :, None] == ids[0, None, :]).tril()),
    }
    for name, (kw, dense) in forms.items():
        ua.scaled_dot_product_attention(q, k, v, **kw)  # compile outside the timing
        mask = dense()
        mask_gib = mask.numel() * mask.element_size() / 2**30
        t = cuda_times({"structured": lambda: ua.scaled_dot_product_attention(q, k, v, **kw),
                        "dense": lambda: ua.scaled_dot_product_attention(q, k, v, mask=mask)}, inner=2, reps=5)
        p_dense = peak(lambda: ua.scaled_dot_product_attention(q, k, v, mask=mask)) + mask_gib
        kernel = ua.explain("scaled_dot_product_attention", q, k, v, mask=mask).kernel
        mask = None  # (freed before the structured call's peak is read)
        p_struct = peak(lambda: ua.scaled_dot_product_attention(q, k, v, **kw))
        ROWS.append({"section": "dense-vs-structured", "case": f"{name}, B{b} H{h} S{s} D{d} bf16",
                     "structured_ms": round(t["structured"][0], 3), "dense_ms": round(t["dense"][0], 3),
                     "speedup": round(t["dense"][0] / t["structured"][0], 2),
                     "structured_peak_gib": round(p_struct, 3), "dense_peak_gib_incl_mask": round(p_dense, 3),
                     "dense_kernel": kernel})
        print(json.dumps(ROWS[-1]), flush=True)


def bench_decode() -> None:
    import torch
    import torch.nn.functional as F

    import unarray as ua

    for b in (1, 8):
        for s in (8192, 32768, 131072):
            q = torch.randn(b, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
            k, v = (torch.randn(b, 8, s, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
            t = cuda_times({"ua": lambda: ua.scaled_dot_product_attention(q, k, v, is_causal=True),
                            "native": lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)}, reps=21)
            kernel = ua.explain("scaled_dot_product_attention", q, k, v, is_causal=True).kernel
            forced = {}
            for only in ("flash", "cudnn", "mem_efficient"):
                with _only_sdp(torch, only):
                    try:
                        forced[only] = round(cuda_times({"n": lambda: F.scaled_dot_product_attention(
                            q, k, v, enable_gqa=True)}, reps=11)["n"][0], 4)
                    except RuntimeError as e:
                        forced[only] = f"refused ({str(e)[:60]})"
            ROWS.append({"section": "decode", "case": f"L1 S{s} B{b} GQA 32/8 D128 bf16, causal",
                         "forced_native_loop_ms": forced,
                         "unarray_loop_ms": round(t["ua"][0], 4), "native_loop_ms": round(t["native"][0], 4),
                         "loop_x": round(t["ua"][0] / t["native"][0], 3),
                         "unarray_single_ms": round(t["ua"][1], 4), "native_single_ms": round(t["native"][1], 4),
                         "single_x": round(t["ua"][1] / t["native"][1], 3), "native": "SDPA unmasked, enable_gqa",
                         "kernel": kernel})
            print(json.dumps(ROWS[-1]), flush=True)
            w = 4096
            ks, vs = k[:, :, s - w - 1:], v[:, :, s - w - 1:]
            t = cuda_times({"ua": lambda: ua.scaled_dot_product_attention(q, k, v, window=(w, 0)),
                            "native": lambda: F.scaled_dot_product_attention(q, ks, vs, enable_gqa=True)}, reps=21)
            ROWS.append({"section": "decode", "case": f"L1 S{s} B{b} GQA 32/8 D128 bf16, window ({w}, 0)",
                         "unarray_loop_ms": round(t["ua"][0], 4), "native_loop_ms": round(t["native"][0], 4),
                         "loop_x": round(t["ua"][0] / t["native"][0], 3),
                         "unarray_single_ms": round(t["ua"][1], 4), "native_single_ms": round(t["native"][1], 4),
                         "single_x": round(t["ua"][1] / t["native"][1], 3),
                         "native": "SDPA unmasked on the window's keys, enable_gqa"})
            print(json.dumps(ROWS[-1]), flush=True)


class _only_sdp:
    # One SDPA kernel enabled for the block (torch's global flags, this process's own), restored after.
    def __init__(self, torch: Any, name: str) -> None:
        self.cuda, self.name = torch.backends.cuda, name

    def __enter__(self) -> None:
        names = ("flash", "cudnn", "mem_efficient", "math")
        self.saved = {n: getattr(self.cuda, f"{n}_sdp_enabled")() for n in names}
        for n in names:
            getattr(self.cuda, f"enable_{n}_sdp")(n == self.name)

    def __exit__(self, *exc: Any) -> None:
        for n, on in self.saved.items():
            getattr(self.cuda, f"enable_{n}_sdp")(on)


def _jax_time(fns: dict[str, Any], inner: int = 8, reps: int = 11) -> dict[str, float]:
    for fn in fns.values():
        for _ in range(3):
            fn().block_until_ready()
    out: dict[str, list[float]] = {n: [] for n in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(inner - 1):
                fn()
            fn().block_until_ready()
            out[name].append((time.perf_counter() - t0) * 1e3 / inner)
    return {n: statistics.median(x) for n, x in out.items()}


def bench_jax() -> None:
    try:
        import torch

        torch.cuda.empty_cache()  # (torch's cached blocks back to the device before JAX allocates)
    except ImportError:
        pass
    import jax
    import jax.numpy as jnp

    import unarray as ua

    b, h, s, d, w = 1, 16, 16384, 128, 1024
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    q, k, v = (jax.random.normal(kk, (b, h, s, d), jnp.bfloat16) for kk in keys)
    qs, ks, vs = (jnp.swapaxes(a, 1, 2) for a in (q, k, v))  # JAX's own layout for the native call
    native = jax.jit(lambda a, b_, c: jax.nn.dot_product_attention(a, b_, c, is_causal=True, local_window_size=(w, 0),
                                                                   implementation="cudnn"))
    t = _jax_time({"ua": lambda: ua.scaled_dot_product_attention(qs, ks, vs, window=(w, 0), layout="bshd"),
                   "native": lambda: native(qs, ks, vs)})
    row("jax", f"window ({w}, 0), B{b} H{h} S{s} D{d} bf16 (bshd)", t["ua"], t["native"], "cuDNN local_window_size",
        kernel=ua.explain("scaled_dot_product_attention", qs, ks, vs, window=(w, 0), layout="bshd").kernel)
    for s in (8192, 32768, 131072):
        q = jax.random.normal(keys[0], (1, 1, 32, 128), jnp.bfloat16)
        k, v = (jax.random.normal(kk, (1, s, 8, 128), jnp.bfloat16) for kk in keys[1:])
        native = jax.jit(lambda a, b_, c: jax.nn.dot_product_attention(a, b_, c, implementation="cudnn"))
        t = _jax_time({"ua": lambda: ua.scaled_dot_product_attention(q, k, v, is_causal=True, layout="bshd"),
                       "native": lambda: native(q, k, v)})
        row("jax", f"decode L1 S{s} B1 GQA 32/8 D128 bf16 (bshd), causal", t["ua"], t["native"], "cuDNN unmasked",
            kernel=ua.explain("scaled_dot_product_attention", q, k, v, is_causal=True, layout="bshd").kernel)


_CUPY = r"""
import json, statistics, sys
import cupy
import unarray as ua
from unarray._backends.cupy import attention_cudnn as ac
b, h, s, d, w = 1, 16, 16384, 128, 1024
q, k, v = (cupy.random.standard_normal((b, h, s, d), dtype=cupy.float32).astype(cupy.float16) for _ in range(3))
scale = d ** -0.5
p = ac.prepare(q, k, v, None, False, scale, "bhsd", (w, 0))
assert not isinstance(p, str), p
fns = {"ua": lambda: ua.scaled_dot_product_attention(q, k, v, window=(w, 0)),
       "native": lambda: ac.run(p, q, k, v, None, False)}
for f in fns.values():
    f()
cupy.cuda.Device().synchronize()
t = {n: [] for n in fns}
for _ in range(15):
    for n, f in fns.items():
        a, e = cupy.cuda.Event(), cupy.cuda.Event()
        a.record()
        for _ in range(8):
            f()
        e.record(); e.synchronize()
        t[n].append(cupy.cuda.get_elapsed_time(a, e) / 8)
assert "torch" not in sys.modules
kernel = ua.explain("scaled_dot_product_attention", q, k, v, window=(w, 0)).kernel
print("CUPY " + json.dumps({n: statistics.median(x) for n, x in t.items()} | {"kernel": kernel}))
"""


def bench_cupy() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _CUPY], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=max(30, int(left())))
    line = [x for x in done.stdout.splitlines() if x.startswith("CUPY ")]
    if not line:
        raise RuntimeError(done.stdout[-2000:] + done.stderr[-2000:])
    r = json.loads(line[0][5:])
    row("cupy", "window (1024, 0), B1 H16 S16384 D128 fp16 (no torch in the process)", r["ua"], r["native"],
        "cuDNN frontend graph executed directly (the same band)", kernel=r["kernel"])


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in ("torch", "jax", "cupy", "cudnn"):
        try:
            out[name] = __import__(name).__version__
        except Exception as e:
            out[name] = f"unavailable ({type(e).__name__})"
    try:
        import torch

        out["device"] = torch.cuda.get_device_name(0)
    except Exception:
        pass
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    info = versions()
    print(json.dumps(info), flush=True)
    for name in os.environ.get("SECTIONS", "decode,torch,dense,jax,cupy").split(","):
        fn = {"torch": bench_torch_forms, "dense": bench_dense_vs_structured, "decode": bench_decode,
              "jax": bench_jax, "cupy": bench_cupy}[name]
        section(name, fn)
        # (written after each section: a run stopped by its limit keeps what it measured)
        (OUT / "attention_masks.json").write_text(json.dumps({"versions": info, "rows": ROWS, "errors": ERRORS},
                                                             indent=1))
    print("errors:", ERRORS, flush=True)


if __name__ == "__main__":
    main()
