"""Is the host slow right now? The machine's Python speed over time, sampled beside a benchmark.

The host's Python speed over time, from a process of its own: python benchmarks/gpu/host_speed.py SECONDS

Every half second, the median of 20 samples of 1,000 dict lookups in a loop (ns per lookup), the share of
all CPUs' time the hypervisor stole and the machine spent busy since the last sample (/proc/stat), and
the CPU this process ran on. Run beside a benchmark: where its slow spells show here too, they are the
machine's, not the benchmark process's. Writes $OUT/host_speed.json (OUT defaults to ./out).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def jiffies() -> list[int]:
    with open("/proc/stat") as f:
        return [int(v) for v in f.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal


def shares(j0: list[int], j1: list[int]) -> dict[str, float]:
    """The share of all CPUs' time between two jiffies() readings that the hypervisor stole and that
    the machine spent busy (neither idle, waiting on I/O, nor stolen), in percent."""
    d = [b - a for a, b in zip(j0, j1, strict=True)]
    total = sum(d) or 1
    return {"steal_pct": round(100 * d[7] / total, 2), "busy_pct": round(100 * (total - d[3] - d[4] - d[7]) / total, 2)}


def cpu() -> int:
    # Field 39 of /proc/self/stat: the CPU the process last ran on (after the command name's parentheses).
    with open("/proc/self/stat") as f:
        return int(f.read().rpartition(")")[2].split()[36])


def lookup_ns(d: dict[int, int], samples: int = 20, n: int = 1000) -> float:
    r = range(n)
    ts = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        for _ in r:
            d.get(1)
        ts.append((time.perf_counter_ns() - t0) / n)
    ts.sort()
    return ts[len(ts) // 2]


def main(seconds: float) -> None:
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    d = {1: 2}
    rows = []
    end = time.monotonic() + seconds
    j0 = jiffies()
    while time.monotonic() < end:
        ns = lookup_ns(d)
        j1 = jiffies()
        rows.append({"monotonic": round(time.monotonic(), 2), "dict_lookup_ns": round(ns, 1), **shares(j0, j1),
                     "cpu": cpu()})
        j0 = j1
        (out / "host_speed.json").write_text(json.dumps(rows))
        time.sleep(0.5)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 300)
