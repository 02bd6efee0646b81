"""Where does a sequence-sharded attention call's time go on two GPUs, beyond one GPU's kernel?

Causal bf16, B=1, H=16, D=128, Shard(2) DTensors over 2 ranks (torchrun). For each route (unarray's ring,
torch's context parallel through unarray) and each size: the call's time by device events (median of 5 after
2 warm-up calls), and on rank 0 torch.profiler's table of one call (the CUDA kernels and the host ops by time).

    torchrun --nproc-per-node 2 benchmarks/gpu/ring_profile.py --sizes 32k,64k --out DIR
"""

from __future__ import annotations

import argparse
import functools
import os
import pathlib
import statistics

import sizes  # (this script's folder, first on sys.path)
import torch
import torch.distributed as dist


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="32k,64k")
    ap.add_argument("--routes", default="ring,torch")
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    a = ap.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Shard

    import unarray as ua
    from unarray._backends.torch import attention_ring as ring

    w, rank = dist.get_world_size(), dist.get_rank()
    mesh = init_device_mesh("cuda", (w,), mesh_dim_names=("cp",))
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for s in sizes.parse(a.sizes):
        torch.manual_seed(rank)
        qkv = [DTensor.from_local(torch.randn(1, 16, s // w, 128, device="cuda", dtype=torch.bfloat16), mesh,
                                  [Shard(2)], run_check=False) for _ in range(3)]
        for route in a.routes.split(","):
            with ring.prefer(route):
                call = functools.partial(ua.scaled_dot_product_attention, *qkv, is_causal=True)
                for _ in range(2):
                    call()
                times = []
                for _ in range(5):
                    dist.barrier()
                    torch.cuda.synchronize()
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    call()
                    e1.record()
                    e1.synchronize()
                    times.append(e0.elapsed_time(e1))
                dist.barrier()
                torch.cuda.synchronize()
                acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
                with torch.profiler.profile(activities=acts) as prof:
                    call()
                    torch.cuda.synchronize()
                if rank == 0:
                    head = f"S={s // 1024}k route={route}: median {statistics.median(times):.2f} ms ({times})"
                    print(head, flush=True)
                    ka = prof.key_averages()
                    text = "\n".join([head, ka.table(sort_by="cuda_time_total", row_limit=25),
                                      ka.table(sort_by="cpu_time_total", row_limit=25)])
                    (out / f"profile_{s // 1024}k_{route}.txt").write_text(text)
        qkv.clear()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
