"""What ``ua.to`` refuses before any converter runs: the source library's own refusals, asked of it.

A handoff that would lose information (the autograd graph), reinterpret bytes (a structured dtype read
as another) or end in a framework's own error (a sparse layout, a dtype the target has no code for)
raises a typed error naming the fix instead; each library declares its refusals (its handoff's
``check_source``). These checks run on the slow paths only (a first handoff of a pair, a cache miss, a
refusal of the native call); a cache hit or an accepted native call never reaches them.
"""

from __future__ import annotations

from typing import Any

from unarray._backends._handoff import Handoff
from unarray._errors import DTypeError, HandoffError

__all__ = ["check_source"]


def check_source(src: Handoff, x: Any, dst: str, op: str) -> None:
    """Raise the typed error ``ua.to`` gives for a source it refuses to hand to ``dst`` (nothing else).

    A handoff within one library (a device move, a copy) keeps what the library keeps: nothing is
    checked there. (A NumPy masked array never gets this far: the dispatcher refuses its type, for
    ua.to as for every op.)"""
    if src.name == dst:
        return
    try:
        src.check_source(x, dst)
    except (DTypeError, HandoffError) as e:
        raise type(e)(str(e), op=op, backend=dst) from None  # the checks name no op
