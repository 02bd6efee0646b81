"""What do torch attention, a matmul and a sum gain on 2 GPUs (DTensors) through unarray against 1 GPU?

Scaling out with torch DTensors: 1 GPU vs 2 GPUs (NCCL), bf16.

    torchrun --nproc-per-node 2 benchmarks/gpu/scale_torch.py     # writes $OUT/scale_torch.{json,md,png}
    python benchmarks/gpu/scale_torch.py                          # the 1-GPU baseline alone
    torchrun --nproc-per-node 2 benchmarks/gpu/scale_torch.py --sizes 32k,64k,128k,1M --sections attention
        # just those sizes (no doubling), every route, fewer repeats from 512k; a summary line per size

Sections (each records its error and goes on; the whole run keeps to BUDGET_S):

1. Causal attention, B=1, H=16, D=128, bf16, S = 32k, 64k, 128k, ... doubling:
   - 1 GPU: torch SDPA with cuDNN and with flash (the faster is "1 GPU best");
   - 2 GPUs, q/k/v sequence-sharded DTensors (Shard(2)) through ua.scaled_dot_product_attention:
     "ua auto" (the route unarray's crossover rule picks per call, named by ua.explain), "ua split"
     (unarray's two-rank split, prefer("split")), "ua torch" (torch's context-parallel ring as ua calls
     it, prefer("torch")) and "ua ring" (unarray's own P2P ring,
     unarray._backends.torch.attention_ring.prefer("ring"));
   - 2 GPUs, torch's own context_parallel(...) context manager on the same sizes (reference).
   The doubling stops once one GPU runs out of memory (recorded; 2 GPUs run that size and one more)
   or when the next size would not fit the time left (recorded as the stop reason).
2. A 16k x 16k bf16 matmul: 1 GPU vs a row-sharded DTensor (Shard(0)) @ a replicated one on 2 GPUs.
3. A sum over 8 GiB of float32: 1 GPU vs a Shard(0) DTensor on 2 GPUs (ua.sum, then the all-reduce
   that makes the Partial result whole, timed separately).

Timing: CUDA events around N calls after warm-up, median of the repeats; on 2 GPUs every rank times
its own events after a barrier and the slowest rank counts. TFLOP/s: causal attention 2*B*H*S*S*D
(forward), matmul 2*M*N*K; TB/s: bytes read / time. Peak memory: torch.cuda.max_memory_allocated,
reset before each configuration, per rank. NVLink multicast stays off (NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1, set here before NCCL starts).
"""

# ruff: noqa: B023  (timed closures run inside the iteration that binds their loop variables)
from __future__ import annotations

import os

os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"

import json  # noqa: E402
import pathlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

import sizes  # noqa: E402 (this script's folder, first on sys.path)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

OUT = pathlib.Path(os.environ.get("OUT", "out"))
BUDGET_S = float(os.environ.get("UA_BENCH_BUDGET_S", "330"))
START = time.perf_counter()
B, H, D = 1, 16, 128
GIB = 2**30
ROWS: list[dict[str, Any]] = []
ERRORS: list[str] = []
NOTES: list[str] = []
SIZES: list[int] = []  # --sizes: just these sequence lengths, in this order (default: doubling from 32k)


def left() -> float:
    return BUDGET_S - (time.perf_counter() - START)


def rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def world() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


SOLO = [False]  # rank 0 timing a 1-GPU baseline while the other ranks wait: no collectives


def together() -> bool:
    return world() > 1 and not SOLO[0]


class solo:
    def __enter__(self) -> None:
        SOLO[0] = True

    def __exit__(self, *exc: object) -> None:
        SOLO[0] = False


def sync() -> None:
    torch.cuda.synchronize()
    if together():
        dist.barrier()


def timed(fn: Callable[[], Any], reps: int, warmup: int = 2, inner: int = 1) -> float:
    # Median seconds per call; the slowest rank's time on 2 GPUs.
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        sync()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3 / inner)
    t = torch.tensor([statistics.median(times)], device="cuda")
    if together():
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def peaks(now: bool = False) -> list[float]:
    # max_memory_allocated (now: memory_allocated, e.g. the inputs alone) of every rank, GiB.
    got = torch.cuda.memory_allocated() if now else torch.cuda.max_memory_allocated()
    p = torch.tensor([got / GIB], device="cuda")
    if not together():
        return [round(float(p.item()), 3)]
    out = [torch.zeros_like(p) for _ in range(world())]
    dist.all_gather(out, p)
    return [round(float(x.item()), 3) for x in out]


def reset() -> None:
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def record(section: str, config: str, gpus: int, **kw: Any) -> None:
    row = {"section": section, "config": config, "gpus": gpus, **kw}
    ROWS.append(row)
    if rank() == 0:
        print(json.dumps(row), flush=True)


def error(where: str, e: BaseException) -> None:
    msg = f"{where}: {type(e).__name__}: {str(e)[:400]}"
    ERRORS.append(msg)
    if rank() == 0:
        print("ERROR", msg, flush=True)
        traceback.print_exc()


def is_oom(e: BaseException) -> bool:
    return isinstance(e, torch.OutOfMemoryError) or "out of memory" in str(e).lower()


# -- attention -------------------------------------------------------------------------------------------

def attn_flops(s: int) -> float:
    return 2.0 * B * H * s * s * D


def reps_for(s: int) -> int:
    if SIZES and s >= 524288:
        return 2
    return 5 if s <= 65536 else 3


def warmup_for(s: int) -> int:
    return 1 if SIZES and s >= 524288 else 2


def one_gpu_attention(s: int) -> bool:
    """Returns False where one GPU ran out of memory."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    import unarray as ua

    reset()
    try:
        qkv = [torch.randn(B, H, s, D, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    except torch.OutOfMemoryError as e:
        record("attention", "1 GPU", 1, S=s, oom=True, error=str(e)[:200])
        return False
    best = None
    for name, kern in (("cuDNN", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        reset()
        try:
            def call() -> Any:
                with sdpa_kernel([kern]):
                    return torch.nn.functional.scaled_dot_product_attention(*qkv, is_causal=True)
            t = timed(call, reps_for(s), warmup_for(s))
            row = {"S": s, "kernel": name, "seconds": t, "tflops": attn_flops(s) / t / 1e12, "peak_gib": peaks(),
                   "inputs_gib": peaks(now=True)}
            record("attention", f"1 GPU torch SDPA {name}", 1, **row)
            if best is None or t < best["seconds"]:
                best = row
        except Exception as e:
            if is_oom(e):
                record("attention", f"1 GPU torch SDPA {name}", 1, S=s, oom=True, error=str(e)[:200])
                qkv.clear()
                return False
            error(f"attention 1 GPU {name} S={s}", e)
    reset()
    try:
        if SIZES:
            raise StopIteration  # a sized run times the GPU's own kernels only
        t = timed(lambda: ua.scaled_dot_product_attention(*qkv, is_causal=True), reps_for(s))
        record("attention", "1 GPU ua", 1, S=s, seconds=t, tflops=attn_flops(s) / t / 1e12, peak_gib=peaks())
    except StopIteration:
        pass
    except Exception as e:
        error(f"attention 1 GPU ua S={s}", e)
    if best is not None:
        record("attention", "1 GPU best", 1, **best)
    qkv.clear()
    reset()
    return True


def two_gpu_attention(s: int, mesh: Any) -> None:
    from torch.distributed.tensor import DTensor, Shard

    import unarray as ua
    from unarray._backends.torch import attention_ring as ring

    reset()
    torch.manual_seed(1234 + rank())
    local = s // world()
    try:
        qkv = [DTensor.from_local(torch.randn(B, H, local, D, device="cuda", dtype=torch.bfloat16), mesh,
                                  [Shard(2)], run_check=False) for _ in range(3)]
    except torch.OutOfMemoryError as e:
        record("attention", "2 GPUs inputs", world(), S=s, oom=True, error=str(e)[:200])
        return
    for route in ("auto", "split", "ring", "torch"):
        reset()
        try:
            with ring.prefer(route):
                label = str(ua.explain("scaled_dot_product_attention", *qkv, is_causal=True).kernel)
                t = timed(lambda: ua.scaled_dot_product_attention(*qkv, is_causal=True), reps_for(s),
                          warmup_for(s))
            record("attention", f"2 GPUs ua {route}", world(), S=s, seconds=t, tflops=attn_flops(s) / t / 1e12,
                   peak_gib=peaks(), inputs_gib=peaks(now=True), route=label)
        except Exception as e:
            if is_oom(e):
                record("attention", f"2 GPUs ua {route}", world(), S=s, oom=True, error=str(e)[:200])
            else:
                error(f"attention 2 GPUs ua {route} S={s}", e)
    qkv.clear()
    torch_context_parallel(s, mesh)


def torch_context_parallel(s: int, mesh: Any) -> None:
    # torch's own: full q/k/v on every rank, sharded in place (head-tail load balancing) by the context.
    from torch.distributed.tensor.experimental import context_parallel

    reset()
    try:
        torch.manual_seed(99)
        qkv = [torch.randn(B, H, s, D, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
        torch.cuda.reset_peak_memory_stats()
        with context_parallel(mesh, buffers=qkv, buffer_seq_dims=[2, 2, 2]):
            t = timed(lambda: torch.nn.functional.scaled_dot_product_attention(*qkv, is_causal=True),
                      reps_for(s), warmup_for(s))
            pk = peaks()
        record("attention", "2 GPUs torch context_parallel", world(), S=s, seconds=t,
               tflops=attn_flops(s) / t / 1e12, peak_gib=pk,
               note="inputs allocated whole on each rank before sharding: peak includes them")
        qkv.clear()
    except Exception as e:
        if is_oom(e):
            record("attention", "2 GPUs torch context_parallel", world(), S=s, oom=True, error=str(e)[:200])
        else:
            error(f"attention torch context_parallel S={s}", e)
    reset()


def attention_sizes(mesh: Any) -> None:
    for s in SIZES:
        if left() < 30:
            NOTES.append(f"attention stopped before S={s}: no time left")
            break
        one_gpu_fits(s)
        if world() > 1 and mesh is not None:
            two_gpu_attention(s, mesh)
        summary(s)


def one_gpu_fits(s: int) -> bool:
    # Rank 0 times one GPU alone on S; every rank learns whether it fit in memory.
    flag = torch.tensor([0], device="cuda")
    if rank() == 0:
        with solo():
            flag[0] = 0 if one_gpu_attention(s) else 1
    if world() > 1:
        dist.broadcast(flag, 0)
    return not bool(flag.item())


def summary(s: int) -> None:
    # One line per size: speed-up against one GPU's best and peak GiB per GPU, for every configuration.
    if rank() != 0:
        return
    base = next((r["seconds"] for r in ROWS if r.get("S") == s and r["config"] == "1 GPU best"), None)
    parts = []
    for r in ROWS:
        if r.get("S") != s or r["section"] != "attention" or "seconds" not in r or r["config"] == "1 GPU best":
            continue
        speed = f"{base / r['seconds']:.2f}x" if base else "-"
        parts.append(f"{r['config']}: {speed}, peak {max(r.get('peak_gib') or [0]):.1f} GiB")
    print(f"SUMMARY S={s // 1024}k | " + " | ".join(parts), flush=True)


def attention_section(mesh: Any) -> None:
    if SIZES:
        attention_sizes(mesh)
        return
    s, one_fits, beyond = 32768, True, 0
    last = 0.0
    while True:
        est = last * 4.5  # four times the work, and some
        if est and est > left() - 60:
            NOTES.append(f"attention stopped before S={s}: the next size (about {est:.0f} s) would not fit the budget")
            break
        t0 = time.perf_counter()
        if one_fits:
            one_fits = one_gpu_fits(s)
            if not one_fits:
                NOTES.append(f"one GPU ran out of memory at S={s}")
        if world() > 1 and mesh is not None:
            two_gpu_attention(s, mesh)
        last = time.perf_counter() - t0
        if not one_fits:
            beyond += 1
            if beyond > 1:
                break
        s *= 2


def check_section(mesh: Any) -> None:
    # Correctness first, on the GPUs' own kernels: every 2-GPU route against a float32 reference of the
    # whole sequence (bf16 inputs; causal and not; grouped-query; a mask, which takes unarray's ring).
    if world() < 2 or mesh is None:
        return
    from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor

    import unarray as ua
    from unarray._backends.torch import attention_ring as ring

    s, w, r = 8192, world(), rank()
    g = torch.Generator(device="cuda").manual_seed(0)
    for causal, hk, masked in ((True, H, False), (False, H, False), (True, 4, False), (True, H, True)):
        q = torch.randn(B, H, s, D, device="cuda", dtype=torch.bfloat16, generator=g)
        k, v = (torch.randn(B, hk, s, D, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2))
        mask = torch.rand(s, s, device="cuda", generator=g) > 0.2 if masked else None
        ref = ua.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal, mask=mask)
        parts = [DTensor.from_local(t.chunk(w, dim=2)[r].contiguous(), mesh, [Shard(2)], run_check=False)
                 for t in (q, k, v)]
        dmask = None if mask is None else distribute_tensor(mask, mesh, [Replicate()])
        for route in ("auto", "split", "ring", "torch"):
            try:
                with ring.prefer(route):
                    label = str(ua.explain("scaled_dot_product_attention", *parts, is_causal=causal, mask=dmask).kernel)
                    out = ua.scaled_dot_product_attention(*parts, is_causal=causal, mask=dmask).full_tensor()
                err = float((out.float() - ref).abs().max())
                record("check", f"2 GPUs ua {route}", w, S=s, causal=causal, Hk=hk, mask=masked, max_abs_err=err,
                       ok=err < 3e-2, route=label)
                if not err < 3e-2:
                    ERRORS.append(f"check: route {route} causal={causal} Hk={hk} mask={masked}: max error {err:.3g}")
            except Exception as e:
                error(f"check route {route} causal={causal} Hk={hk} mask={masked}", e)
        del q, k, v, ref, parts, mask, dmask
    reset()


# -- matmul and sum --------------------------------------------------------------------------------------

def matmul_section(mesh: Any) -> None:
    import unarray as ua

    n = 16384
    flops = 2.0 * n * n * n
    if rank() == 0:
        reset()
        try:
            SOLO[0] = True
            ab = [torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2)]
            t = timed(lambda: ua.matmul(*ab), 10, inner=5)
            record("matmul", "1 GPU ua.matmul", 1, n=n, seconds=t, tflops=flops / t / 1e12, peak_gib=peaks())
            ab.clear()
        except Exception as e:
            error("matmul 1 GPU", e)
        finally:
            SOLO[0] = False
    if world() > 1 and mesh is not None:
        from torch.distributed.tensor import DTensor, Replicate, Shard

        reset()
        try:
            torch.manual_seed(7)
            b_full = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            a = DTensor.from_local(torch.randn(n // world(), n, device="cuda", dtype=torch.bfloat16), mesh,
                                   [Shard(0)], run_check=False)
            b = DTensor.from_local(b_full, mesh, [Replicate()], run_check=False)
            out = ua.matmul(a, b)
            t = timed(lambda: ua.matmul(a, b), 10, inner=5)
            record("matmul", "2 GPUs ua.matmul Shard(0) @ Replicate", world(), n=n, seconds=t,
                   tflops=flops / t / 1e12, peak_gib=peaks(), out_placements=str(tuple(out.placements)))
            del a, b, b_full, out
        except Exception as e:
            error("matmul 2 GPUs", e)


def sum_section(mesh: Any) -> None:
    import unarray as ua

    nbytes = 8 * GIB
    n = nbytes // 4
    if rank() == 0:
        reset()
        try:
            SOLO[0] = True
            xs = [torch.rand(n, device="cuda", dtype=torch.float32)]
            t = timed(lambda: ua.sum(xs[0]), 10, inner=5)
            record("sum", "1 GPU ua.sum", 1, gib=8, seconds=t, tbps=nbytes / t / 1e12, peak_gib=peaks())
            xs.clear()
        except Exception as e:
            error("sum 1 GPU", e)
        finally:
            SOLO[0] = False
    if world() > 1 and mesh is not None:
        from torch.distributed.tensor import DTensor, Replicate, Shard

        reset()
        try:
            x = DTensor.from_local(torch.rand(n // world(), device="cuda", dtype=torch.float32), mesh, [Shard(0)],
                                   run_check=False)
            part = ua.sum(x)
            t = timed(lambda: ua.sum(x), 10, inner=5)
            record("sum", "2 GPUs ua.sum (Partial result)", world(), gib=8, seconds=t, tbps=nbytes / t / 1e12,
                   peak_gib=peaks(), out_placements=str(tuple(part.placements)))
            t2 = timed(lambda: ua.sum(x).redistribute(mesh, [Replicate()]).to_local(), 10, inner=5)
            record("sum", "2 GPUs ua.sum + all-reduce", world(), gib=8, seconds=t2, tbps=nbytes / t2 / 1e12,
                   peak_gib=peaks())
            del x, part
        except Exception as e:
            error("sum 2 GPUs", e)


def fits_on_two_section(mesh: Any) -> None:
    # One H200 holds every S this run has time for (flash kernels need O(S) memory), so a smaller GPU is
    # simulated: each process may use CAP_GIB (torch.cuda.set_per_process_memory_fraction), which one GPU
    # cannot fit at S=256k (q, k, v and the output: 4 x 128 MiB per 16k of sequence) and two GPUs can.
    if left() < 45:
        NOTES.append("fits-on-two check skipped: no time left")
        return
    cap, s = 3.5, 262144
    reset()
    torch.cuda.set_per_process_memory_fraction(cap * GIB / torch.cuda.get_device_properties(0).total_memory)
    NOTES.append(f"fits-on-two: each process capped at {cap} GiB of GPU memory (simulated smaller GPU), S={s}")
    try:
        if rank() == 0:
            with solo():
                one_gpu_attention(s)
        if world() > 1:
            dist.barrier()
            two_gpu_attention(s, mesh)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        reset()


# -- report ------------------------------------------------------------------------------------------------

def plot(env: dict[str, Any]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        for cfg in sorted({r["config"] for r in ROWS if r["section"] == "attention"}):
            pts = [(r["S"], r["tflops"]) for r in ROWS if r["config"] == cfg and "tflops" in r]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=cfg)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sequence length S")
        ax.set_ylabel("TFLOP/s (causal, 2*B*H*S*S*D)")
        ax.set_title(f"bf16 causal attention, B=1 H=16 D=128, {env['device']}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(OUT / "scale_torch.png", dpi=120)
    except Exception as e:  # no matplotlib: the table and JSON stand
        NOTES.append(f"no plot: {type(e).__name__}: {e}")


def write() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    env = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "gpus": world(),
           "nccl": ".".join(map(str, torch.cuda.nccl.version())) if world() > 1 else None,
           "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE"),
           "TORCH_SYMM_MEM_DISABLE_MULTICAST": os.environ.get("TORCH_SYMM_MEM_DISABLE_MULTICAST"),
           "seconds": round(time.perf_counter() - START, 1)}
    plot(env)
    (OUT / "scale_torch.json").write_text(json.dumps({"env": env, "rows": ROWS, "notes": NOTES, "errors": ERRORS},
                                                     indent=1))
    lines = [f"# Scaling out with torch DTensors ({env['device']}, torch {env['torch']}, {world()} GPU(s))", ""]
    lines += ["| section | config | size | time (ms) | TFLOP/s or TB/s | speed-up vs 1 GPU best | peak GiB per GPU "
              "| inputs GiB per GPU |", "|---|---|---|---|---|---|---|---|"]
    base = {r["S"]: r["seconds"] for r in ROWS if r["config"] == "1 GPU best" and "seconds" in r}
    for r in ROWS:
        size = r.get("S", r.get("n", r.get("gib", "")))
        if r["section"] == "check":
            verdict = "ok" if r["ok"] else "WRONG"
            lines.append(f"| check | {r['config']} causal={r['causal']} Hk={r['Hk']} mask={r['mask']} | {size} | "
                         f"max abs error {r['max_abs_err']:.3g} ({verdict}) | | | | |")
            continue
        if r.get("oom"):
            lines.append(f"| {r['section']} | {r['config']} | {size} | out of memory | | | | |")
            continue
        rate = r.get("tflops", r.get("tbps"))
        unit = "TFLOP/s" if "tflops" in r else "TB/s"
        speed = ""
        if r["section"] == "attention" and r["gpus"] > 1 and r.get("S") in base:
            speed = f"{base[r['S']] / r['seconds']:.2f}x"
        lines.append(f"| {r['section']} | {r['config']} | {size} | {r['seconds'] * 1e3:.2f} | {rate:.1f} {unit} | "
                     f"{speed} | {', '.join(map(str, r.get('peak_gib', [])))} | "
                     f"{', '.join(map(str, r.get('inputs_gib', [])))} |")
    lines += ["", *(f"- {n}" for n in NOTES), *(f"- error: {e}" for e in ERRORS)]
    routes = sorted({r["route"] for r in ROWS if "route" in r})
    lines += ["", "Routes (ua.explain):", *(f"- {r}" for r in routes)]
    (OUT / "scale_torch.md").write_text("\n".join(lines) + "\n")


def parse(argv: list[str]) -> list[str]:
    # --sizes 32k,64k,128k,1M (k = 1024, M = 1024k); --sections attention,check (default: all).
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="", help="sequence lengths, e.g. 32k,64k,128k,1M (default: doubling)")
    ap.add_argument("--sections", default="check,attention,matmul,sum,fits on two",
                    help="comma-separated sections to run")
    a = ap.parse_args(argv)
    SIZES[:] = sizes.parse(a.sizes)
    return [x.strip() for x in a.sections.split(",") if x.strip()]


def main() -> None:
    sections = parse(sys.argv[1:])
    mesh = None
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dist.init_process_group("nccl", device_id=torch.device("cuda", int(os.environ["LOCAL_RANK"])))
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh("cuda", (world(),), mesh_dim_names=("cp",))
    for name, section in (("check", check_section), ("attention", attention_section), ("matmul", matmul_section),
                          ("sum", sum_section),
                          ("fits on two", fits_on_two_section)):
        if name not in sections:
            continue
        try:
            section(mesh)
        except Exception as e:
            error(name, e)
        if world() > 1:
            dist.barrier()
    if rank() == 0:
        write()
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
