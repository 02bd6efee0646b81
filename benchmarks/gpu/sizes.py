"""Sequence lengths as the GPU benchmarks take them on the command line: ``32k,64k,1M`` (k = 1024, M = 1024**2)."""

from __future__ import annotations

UNIT = {"k": 1024, "K": 1024, "M": 1 << 20, "m": 1 << 20}


def parse(text: str) -> list[int]:
    """The lengths of a comma-separated list, e.g. ``"32k,64k,1M"`` -> ``[32768, 65536, 1048576]``."""
    return [int(x[:-1]) * UNIT[x[-1]] if x[-1] in UNIT else int(x) for x in text.split(",") if x]
