"""Where ua.jit's remaining gaps to native compiled code come from, on a GPU (issue 19, point 3).

Four probes, each timed side by side in one process, results as JSON under ``--out``:

- ``jax_tf32``: JAX float32 under the "tf32" policy. One matmul and the whole block, with the policy's dots
  as ``Precision.HIGH`` (unarray's mapping), ``Precision.DEFAULT`` and ``DotAlgorithmPreset.TF32_TF32_F32``,
  against native JAX at its default; each variant's max relative error against float64 NumPy, and the
  custom calls of the compiled matmul (which GEMM XLA picked).
- ``sdpa``: torch SDPA at the block's attention shape, per kernel (cuDNN, flash, memory-efficient): host
  time per call (no sync in the loop) and GPU time per call (CUDA events around the loop).
- ``torch_block``: the block under ua.jit and native torch.compile with unarray's CUDA kernel order as it
  is (cuDNN first) and with flash first.
- ``overhead``: host time per call of a one-op function: ua.jit against torch.compile and jax.jit.

    python3 benchmarks/gpu/jit_gaps.py --out $OUT/jit_gaps
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import jit_block  # noqa: E402

import unarray as ua  # noqa: E402


def host_per_call(fn: Any, n: int = 200, rounds: int = 7, sync: Any = None) -> float:
    # Median over rounds of the host time per call of n calls issued back to back (microseconds).
    for _ in range(20):
        fn()
    if sync:
        sync()
    res = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        res.append((time.perf_counter() - t) / n * 1e6)
        if sync:
            sync()
    return statistics.median(res)


def jax_tf32(out: dict[str, Any]) -> None:
    import jax
    import jax.numpy as jnp

    from unarray._backends.jax import attention as attention_jax
    from unarray._backends.jax import backend as ujax

    dev = jax.devices("gpu")[0]
    rng = np.random.default_rng(0)
    a_h = rng.standard_normal((8192, 1024)).astype(np.float32)
    b_h = rng.standard_normal((1024, 4096)).astype(np.float32)
    a, b = jax.device_put(a_h, dev), jax.device_put(b_h, dev)
    exact = a_h.astype(np.float64) @ b_h.astype(np.float64)
    P = jax.lax.Precision
    choices: dict[str, Any] = {"HIGH": P.HIGH, "DEFAULT": P.DEFAULT, "HIGHEST": P.HIGHEST, "None": None}
    preset = getattr(jax.lax, "DotAlgorithmPreset", None)
    if preset is not None:
        choices["TF32_TF32_F32"] = preset.TF32_TF32_F32
    mm: dict[str, Any] = {}
    for name, p in choices.items():
        try:
            f = jax.jit(lambda x, y, p=p: jnp.matmul(x, y, precision=p))
            hlo = f.lower(a, b).compile().as_text()
            calls = sorted({line.split('custom_call_target="')[1].split('"')[0]
                            for line in hlo.splitlines() if 'custom_call_target="' in line})
            fusions = sorted({line.split("kind=")[1].split(",")[0] for line in hlo.splitlines() if "kind=k" in line})
            r = f(a, b)
            err = float(np.abs(np.asarray(r, np.float64) - exact).max() / np.abs(exact).max())
            ms = host_per_call(lambda f=f: f(a, b).block_until_ready(), n=20, rounds=7) / 1e3
            mm[name] = {"ms": ms, "max_rel_err_vs_float64": err, "custom_calls": calls, "fusion_kinds": fusions,
                        "hlo_dot_lines": [ln.strip()[:300] for ln in hlo.splitlines()
                                          if "custom-call(" in ln or " dot(" in ln][:4]}
        except Exception as e:  # noqa: BLE001 - a preset this JAX or GPU refuses is a finding, not a crash
            mm[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    out["jax_tf32_matmul"] = mm

    # The whole block: unarray's "tf32" dots as each choice (the policy maps patched for the run).
    block: dict[str, Any] = {}
    saved = (dict(ujax._JAX_PRECISION), dict(attention_jax._JAX_PRECISION))
    scoped = {"HIGH": "high", "DEFAULT": "default", "TF32_TF32_F32": "TF32_TF32_F32"}
    try:
        for name in ("HIGH", "DEFAULT", "TF32_TF32_F32", "HIGH"):
            if name not in choices:
                continue
            ujax._JAX_PRECISION["tf32"] = choices[name]
            attention_jax._JAX_PRECISION["tf32"] = scoped[name]
            attention_jax._JITTED.clear()
            try:
                r = jit_block.run("jax", "cuda", jit_block.SIZES["cuda"], "float32", 5, 30, "tf32",
                                  ("ua.jit", "native compiled"))
                block.setdefault(name, []).append({k: r[k] for k in ("ua.jit / native compiled",
                                                                     "ua.jit / native compiled (min)",
                                                                     "variants", "dot_precisions")})
            except Exception as e:  # noqa: BLE001
                block.setdefault(name, []).append({"error": f"{type(e).__name__}: {str(e)[:400]}"})
    finally:
        ujax._JAX_PRECISION.update(saved[0])
        attention_jax._JAX_PRECISION.update(saved[1])
        attention_jax._JITTED.clear()
    out["jax_tf32_block"] = block


def sdpa(out: dict[str, Any]) -> None:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    res: dict[str, Any] = {}
    for dt in (torch.bfloat16, torch.float32):
        q, k, v = (torch.randn(8, 16, 1024, 64, device="cuda", dtype=dt) for _ in range(3))
        for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
                         ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
            key = f"{str(dt).removeprefix('torch.')} {name}"
            try:
                with sdpa_kernel([be]):
                    def call(q: Any = q, k: Any = k, v: Any = v) -> Any:
                        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

                    call()
                    host = host_per_call(call, n=50, rounds=7, sync=torch.cuda.synchronize)
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    gpu = []
                    for _ in range(7):
                        torch.cuda.synchronize()
                        s.record()
                        for _ in range(50):
                            call()
                        e.record()
                        e.synchronize()
                        gpu.append(s.elapsed_time(e) / 50 * 1e3)
                    res[key] = {"host_us_per_call": host, "gpu_us_per_call": statistics.median(gpu)}
            except Exception as ex:  # noqa: BLE001
                res[key] = {"error": f"{type(ex).__name__}: {str(ex)[:200]}"}
    out["sdpa"] = res


def torch_block(out: dict[str, Any]) -> None:
    from torch.nn.attention import SDPBackend

    from unarray._backends.torch import attention as tatt

    saved = list(tatt._CUDA_ORDER)
    flash_first = [SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                   SDPBackend.MATH]
    res: dict[str, Any] = {}
    try:
        for dtype in ("bfloat16", "float32"):
            for name, order in (("cudnn first", saved), ("flash first", flash_first), ("cudnn first", saved)):
                tatt._CUDA_ORDER[:] = order
                tatt._FULL_ORDER.clear()
                tatt._FUSED_GQA.clear()
                import torch._dynamo

                torch._dynamo.reset()
                r = jit_block.run("torch", "cuda", jit_block.SIZES["cuda"], dtype, 5, 30)
                res.setdefault(f"{dtype} {name}", []).append(
                    {k: r[k] for k in ("ua.jit / native compiled", "ua.jit / native compiled (min)",
                                       "ua eager / native eager", "variants")})
    finally:
        tatt._CUDA_ORDER[:] = saved
        tatt._FULL_ORDER.clear()
    out["torch_block"] = res


def overhead(out: dict[str, Any]) -> None:
    import jax
    import torch

    def f(x: Any) -> Any:
        return x + 1

    res: dict[str, Any] = {}
    for dev in ("cpu", "cuda"):
        x = torch.ones(4, device=dev)
        nat, uj = torch.compile(f), ua.jit(f)
        sync = torch.cuda.synchronize if dev == "cuda" else None
        res[f"torch {dev}"] = {"torch.compile": host_per_call(lambda nat=nat, x=x: nat(x), 2000, 7, sync),
                               "ua.jit": host_per_call(lambda uj=uj, x=x: uj(x), 2000, 7, sync),
                               "eager": host_per_call(lambda x=x: f(x), 2000, 7, sync)}
    for dev in ("cpu", "gpu"):
        x = jax.device_put(np.ones(4, np.float32), jax.devices(dev)[0])
        nat, uj = jax.jit(f), ua.jit(f)
        res[f"jax {dev}"] = {"jax.jit": host_per_call(lambda nat=nat, x=x: nat(x), 2000, 7),
                             "ua.jit": host_per_call(lambda uj=uj, x=x: uj(x), 2000, 7)}
    out["overhead_us"] = res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--probes", default="overhead,sdpa,jax_tf32,torch_block")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    import jax
    import torch

    out: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                           "jax": jax.__version__, "python": sys.version.split()[0]}
    for name in args.probes.split(","):
        t = time.perf_counter()
        try:
            globals()[name](out)
        except Exception as e:  # noqa: BLE001 - one probe failing leaves the others' results
            out[f"{name}_error"] = f"{type(e).__name__}: {str(e)[:500]}"
        out[f"{name}_s"] = time.perf_counter() - t
        (args.out / "jit_gaps.json").write_text(json.dumps(out, indent=1, default=str))
        print(name, "done", round(out[f"{name}_s"], 1), "s", flush=True)


if __name__ == "__main__":
    main()
