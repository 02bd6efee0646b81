"""How long is the first call of a transformer block under ``ua.jit`` against the block compiled natively?

``jit_block.py``'s blocks, one side per fresh process: ``ua.jit`` of the block written with unarray, and
the block written natively under ``torch.compile`` / ``jax.jit``. Before the clock each process has
imported its framework, put the inputs on the device and run one small op there (so the device's
start-up is not counted); the clock covers the first call until its result is ready. The sides
alternate within each round. ``--cache cold`` gives every process an empty Inductor cache directory (torch)
and no persistent JAX cache; ``--cache warm`` shares one directory per side across its rounds, after a
first unrecorded run fills it.

    python benchmarks/first_call_jit.py --framework torch --rounds 3
    python benchmarks/first_call_jit.py --framework torch,jax --device cuda --rounds 3 --out $OUT/first_jit
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
SIDES = ("ua.jit", "native compiled")


def child(framework: str, device: str, side: str) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import jit_block as jb

    import unarray as ua

    size = jb.SIZES[device]
    x_h, p_h = jb.host_inputs(size)
    heads = size["heads"]
    if framework == "torch":
        import torch

        dev = torch.device(device)
        x = torch.from_numpy(x_h).to(dev)
        p = {k: torch.from_numpy(v).to(dev) for k, v in p_h.items()}
        (x[:1, :1] + 1).sum().item()

        def sync(r: Any) -> None:
            r.sum().item()

        fn = (lambda: ua.jit(jb.ua_block, static_argnames="heads")(x, p, heads=heads)) if side == "ua.jit" else \
            (lambda: torch.compile(jb.torch_block)(x, p, heads))
    else:
        import jax

        d = jax.devices("gpu" if device == "cuda" else "cpu")[0]
        x = jax.device_put(x_h, d)
        p = {k: jax.device_put(v, d) for k, v in p_h.items()}
        (x[:1, :1] + 1).block_until_ready()

        def sync(r: Any) -> None:
            r.block_until_ready()

        def native(x: Any, p: Any) -> Any:
            with jax.default_matmul_precision("float32"):  # unarray's "highest", as jit_block.py compares
                return jb.jax_block(x, p, heads)

        fn = (lambda: ua.jit(jb.ua_block, static_argnames="heads")(x, p, heads=heads)) if side == "ua.jit" else \
            (lambda: jax.jit(native)(x, p))
    t = time.perf_counter()
    sync(fn())
    return {"first_call_s": time.perf_counter() - t}


def run_side(framework: str, device: str, side: str, cache_dir: str | None) -> float:
    env = dict(os.environ)
    tmp = None
    if cache_dir is None:
        tmp = tempfile.mkdtemp(prefix="inductor-cold-")
        cache_dir = tmp
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    env["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")
    proc = subprocess.run([sys.executable, __file__, "--child", framework, device, side], env=env,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{framework} {side}: {proc.stderr[-2000:]}")
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["first_call_s"])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(*sys.argv[2:5])))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framework", default="torch")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", choices=("cold", "warm"), default="cold")
    ap.add_argument("--out", type=pathlib.Path)
    a = ap.parse_args()
    rows = []
    for fw in a.framework.split(","):
        dirs = {s: (tempfile.mkdtemp(prefix="inductor-warm-") if a.cache == "warm" else None) for s in SIDES}
        if a.cache == "warm":
            for s in SIDES:
                run_side(fw, a.device, s, dirs[s])
        times: dict[str, list[float]] = {s: [] for s in SIDES}
        for r in range(a.rounds):
            for s in (SIDES if r % 2 == 0 else SIDES[::-1]):
                times[s].append(run_side(fw, a.device, s, dirs[s]))
                print(f"{fw} {a.device} round {r} {s}: {times[s][-1]:.2f} s", flush=True)
        med = {s: statistics.median(v) for s, v in times.items()}
        rows.append({"framework": fw, "device": a.device, "cache": a.cache, "runs": times, "median_s": med,
                     "ratio": med["ua.jit"] / med["native compiled"]})
        print(f"{fw} {a.device} ({a.cache} cache): ua.jit {med['ua.jit']:.2f} s, native compiled "
              f"{med['native compiled']:.2f} s, ratio {rows[-1]['ratio']:.2f}  runs {times}", flush=True)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "first_call_jit.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
