# The rules that shape a sequence-sharded attention call on torch DTensors, as pure functions of sizes: which route
# runs, from the local sequence length where a crossover is known for the device and world size, and the torch
# ring's bytes for ring_memory.head_groups (the rule shared with the JAX ring).
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from unarray._backends.ring_memory import head_groups


@dataclass(frozen=True)
class Crossover:
    # Local sequence lengths [lo, hi) where torch's context parallel is the faster ring: unarray's ring runs outside
    # (faster below; as fast above, with less memory), and below ``split`` the two-rank split where it applies.
    # ``source``: where the timings are recorded.

    lo: int
    hi: int
    source: str
    split: int = 0


# Keys: (a substring of the device's name, or "cpu"; ranks on the ring); the windows sit halfway (in log2) between
# the lengths timed in docs/scaling_torch.md; one not listed keeps torch's context parallel wherever it applies.
CROSSOVERS: dict[tuple[str, int], Crossover] = {
    ("H100", 2): Crossover(0, 32768, "docs/scaling_torch.md, two-GPU causal bf16 timings", split=262144),
    ("H200", 2): Crossover(0, 32768, "docs/scaling_torch.md, two-GPU causal bf16 timings (same chip as H100)",
                           split=262144),
}
_TABLE: contextvars.ContextVar[Mapping[tuple[str, int], Crossover] | None] = contextvars.ContextVar(
    "unarray_ring_crossovers", default=None)


@contextlib.contextmanager
def crossovers(table: Mapping[tuple[str, int], Crossover]) -> Iterator[None]:
    """Use ``table`` instead of :data:`CROSSOVERS` inside the block (tests, or a site's own timings)."""
    token = _TABLE.set(dict(table))
    try:
        yield
    finally:
        _TABLE.reset(token)


def crossover_for(device_name: str, ranks: int) -> tuple[str, Crossover] | None:
    """The (key, window) that applies to a device of that name on a ring of ``ranks``, or None."""
    table = _TABLE.get()
    for (key, n), window in (CROSSOVERS if table is None else table).items():
        if n == ranks and (key == device_name or (key != "cpu" and key in device_name)):
            return key, window
    return None


def choose_route(local_seq: int, device_name: str, ranks: int, split: bool = False,
                 torch_cp: bool = True) -> tuple[str, str]:
    # ("split", "torch-cp" or "ring", the reason); ``split`` and ``torch_cp``: whether those can take the call.
    found = crossover_for(device_name, ranks)
    if found is None:
        if not torch_cp:
            return "ring", ""
        return "torch-cp", f"no crossover known for {device_name} x {ranks} ranks: torch's context parallel"
    key, w = found
    where = f"local sequence {local_seq} per rank; crossover window [{w.lo}, {w.hi}) for {key} x {ranks} ranks " \
            f"({w.source})"
    if split and local_seq < w.split:
        return "split", f"local sequence {local_seq} per rank, below {w.split} for {key} x {ranks} ranks " \
                        f"({w.source}): the two-rank split is faster"
    if not torch_cp:
        return "ring", ""
    if w.lo <= local_seq < w.hi:
        return "torch-cp", f"{where}: inside, torch's context parallel is faster"
    side = "below" if local_seq < w.lo else "above"
    why = "faster" if side == "below" else "as fast with less memory"
    return "ring", f"{where}: {side}, unarray's ring is {why}"


def ring_extra_bytes(n: int, hq: int, hk: int, lq: int, lk: int, d: int, dv: int, itemsize: int, acc_itemsize: int,
                     zigzag: bool) -> int:
    # Bytes unarray's ring holds beyond its inputs and output, walking all heads at once (an upper bound): the
    # head-tail copies and exchanges (zigzag), accumulators, the block in flight and grouped-query widening.
    qb, kvb, ob = n * hq * lq * d * itemsize, n * hk * lk * (d + dv) * itemsize, n * hq * lq * dv * itemsize
    extra = kvb + ob + n * hq * lq * (dv + 1) * acc_itemsize
    if zigzag:
        extra += 2 * (qb + kvb) + ob + ob // 2
    if hq != hk:
        extra += n * hq * lk * (d + dv) * itemsize
    return extra


__all__ = ["CROSSOVERS", "Crossover", "choose_route", "crossover_for", "crossovers", "head_groups",
           "ring_extra_bytes"]
