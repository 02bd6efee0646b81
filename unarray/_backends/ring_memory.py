# The memory rule every backend's sequence-sharded ring shares, as a pure function of sizes: how many head
# groups the ring walks one after the other so that a rank's peak stays under one device's peak for the
# whole sequence. Each backend counts its own ring's extra bytes (its buffers differ) and asks this rule.
from __future__ import annotations


def head_groups(hk: int, extra_bytes: int, io_bytes: int, ranks: int) -> int:
    """How many head groups a ring walks one after the other: the fewest (a divisor of ``hk``) whose extra
    memory per group, ``extra_bytes / groups``, fits in what one device would hold beyond this rank's inputs
    and output for the whole sequence, ``(ranks - 1) * io_bytes``.

    So a rank's peak (its inputs and output, plus one group's extra) stays under one device's peak for the
    whole sequence (``ranks * io_bytes``). Where no divisor fits, every kv head is its own group.
    """
    budget = max(ranks - 1, 0) * io_bytes
    for g in range(1, hk + 1):
        if hk % g == 0 and extra_bytes <= g * budget:
            return g
    return max(hk, 1)


__all__ = ["head_groups"]
