"""Is ``ua.ascontiguousarray`` of a tiny transposed array ever slower than the native call on the GPU?

A 512 x 384 float32 transpose (and 64 x 48) is launch-bound: the call's host cost is its time. Each sample is a
loop of ``--loop`` back-to-back calls between two device events (the GPU waits on the host, so host cost
shows); unarray and native alternate within each round; medians of ``--rounds`` rounds, microseconds per call.
``--tree`` times another checkout's unarray in the same way (run once per tree, alternating, for an A/B).

    python benchmarks/gpu/layout_tiny.py                 # torch and CuPy
    python benchmarks/gpu/layout_tiny.py --tree OTHER    # another checkout's unarray
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--loop", type=int, default=200)
    a = ap.parse_args()
    if a.tree:
        sys.path.insert(0, a.tree)
    import cupy
    import torch

    import unarray as ua

    rows: list[dict[str, Any]] = []
    for shape in ((512, 384), (64, 48)):
        t = torch.randn(shape, device="cuda").T
        c = cupy.random.standard_normal(shape, dtype=cupy.float32).T
        cases = {
            "torch": {"native": lambda t=t: t.contiguous(), "ua": lambda t=t: ua.ascontiguousarray(t)},
            "cupy": {"native": lambda c=c: cupy.ascontiguousarray(c), "ua": lambda c=c: ua.ascontiguousarray(c)},
        }
        for lib, fns in cases.items():
            assert bool((fns["ua"]() == fns["native"]()).all())
            times: dict[str, list[float]] = {k: [] for k in fns}
            for r in range(a.rounds + 2):
                for name in (list(fns) if r % 2 else list(fns)[::-1]):
                    fn = fns[name]
                    torch.cuda.synchronize()
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    for _ in range(a.loop):
                        fn()
                    end.record()
                    end.synchronize()
                    if r >= 2:
                        times[name].append(start.elapsed_time(end) * 1e3 / a.loop)
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append({"lib": lib, "shape": f"{shape[0]}x{shape[1]} transposed", "native_us": med["native"],
                         "ua_us": med["ua"], "ratio": med["ua"] / med["native"]})
            print(f"{lib:6s} {rows[-1]['shape']:22s} native {med['native']:6.2f} us  ua {med['ua']:6.2f} us  "
                  f"ratio {rows[-1]['ratio']:.3f}", flush=True)
    print("JSON " + json.dumps({"tree": a.tree or ".", "unarray": ua.__file__, "rows": rows}))


if __name__ == "__main__":
    main()
