"""Which route should CuPy attention take first, by size, where several apply?

For bf16 causal attention of growing size, times each route unarray has for CuPy inputs on the same
arrays: cuDNN's SDPA through nvidia-cudnn-frontend (attention_cudnn.sdpa), torch's fused kernels
through a zero-copy DLPack handoff (the front end's borrowed plan, unarray._lending._borrowed; needs torch
imported), the blocked online-softmax path (_attention.blocked), and ua.scaled_dot_product_attention as routed. CuPy
events around back-to-back calls, median of 30 samples after 5 warm-up calls.

    python3 benchmarks/gpu/cupy_attention_routes.py --out DIR     (writes cupy_attention_routes.{json,md})
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import statistics

import cupy
import torch  # noqa: F401 - the torch route needs torch imported (unarray never imports it itself)

import unarray as ua
from unarray import _backends, _lending
from unarray._backends import attention_blocked as _attention
from unarray._backends.attention_masks import CAUSAL
from unarray._backends.cupy import attention_cudnn

SHAPES = [(1, 2, 128, 64), (1, 8, 256, 64), (1, 8, 512, 64), (2, 16, 1024, 128), (4, 16, 2048, 128),
          (4, 16, 4096, 128)]


def _time(fn, reps: int) -> float:
    for _ in range(5):
        fn()
    samples = []
    for _ in range(30):
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(a, b) * 1000 / reps)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = pathlib.Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    b = _backends.get("cupy")
    rows = []
    for shape in SHAPES:
        B, H, S, D = shape
        rng = cupy.random.default_rng(0)
        q, k, v = (rng.standard_normal(shape, dtype=cupy.float32).astype(cupy.dtype("bfloat16")) for _ in range(3))
        scale = 1 / math.sqrt(D)
        reps = 20 if S <= 1024 else 3
        # (each route runs within this iteration: the closures read this iteration's arrays)
        routes = {
            "ua (as routed)": lambda: ua.scaled_dot_product_attention(q, k, v, is_causal=True),  # noqa: B023
            "cudnn": lambda: attention_cudnn.sdpa(q, k, v, None, True, scale, "bhsd"),  # noqa: B023
            "torch via dlpack": lambda: _lending._borrowed(b, "torch", q, k, v, None, CAUSAL, scale, "bhsd",  # noqa: B023
                                                         "highest").run(),
        }
        if S <= 1024:
            routes["blocked"] = lambda: _attention.blocked(b, q, k, v, None, CAUSAL, scale, "bhsd", None)  # noqa: B023
        row = {"shape": list(shape), "routed": ua.explain("scaled_dot_product_attention", q, k, v,
                                                           is_causal=True).kernel}
        for name, fn in routes.items():
            try:
                row[name] = round(_time(fn, reps), 2)
            except Exception as e:  # a route that refuses this shape
                row[name] = f"{type(e).__name__}: {e}"[:120]
        rows.append(row)
        print(json.dumps(row), flush=True)
    meta = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cupy": cupy.__version__,
            "torch": torch.__version__, "cudnn": attention_cudnn.versions(),
            "command": "python3 benchmarks/gpu/cupy_attention_routes.py --out DIR"}
    (out / "cupy_attention_routes.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    names = ["ua (as routed)", "cudnn", "torch via dlpack", "blocked"]
    lines = ["# CuPy bf16 causal attention by route (microseconds per call, median)\n",
             f"{meta}\n", "| B, H, S, D | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for r in rows:
        lines.append(f"| {tuple(r['shape'])} | " + " | ".join(str(r.get(n, "-")) for n in names) + " |")
    (out / "cupy_attention_routes.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
