# What the positions of a structured mask (MaskSpec) still ask once K/V is sliced to the keys some query reaches:
# the fact every backend's native route is chosen by (an unmasked call, causal on the slice, or a band).
from __future__ import annotations

from typing import Any


def rest(spec: Any, sq: int, sk: int, lo: int, hi: int) -> str:
    """What the positions still ask of keys lo..hi-1 once K/V is sliced to them: "none" (every query may attend
    every one), "causal" (causal aligned bottom-right on the slice) or "band" (a left bound still cuts rows)."""
    off = sk - sq
    left_free = spec.left is None or (sq - 1 + off) - spec.left <= lo
    if left_free and (spec.right is None or off + spec.right >= hi - 1):
        return "none"
    if left_free and spec.right == 0 and hi == sk:
        return "causal"
    return "band"
