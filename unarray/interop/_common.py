"""What every handoff module shares: the counters and their lock, the refusals a converter raises
(NeedsCopy and its kinds), module lookup through sys.modules and NumPy on first use. They are defined
with the handoff contract (unarray/_backends/_handoff.py), since the backends' converters raise and count
them; the library-agnostic steps here read them from there."""

from __future__ import annotations

from unarray._backends._handoff import (
    HOST,
    STATS,
    Gather,
    Immutable,
    LazyNumpy,
    NeedsCopy,
    OtherDevice,
    Snapshot,
    lock,
    mod,
)

__all__ = ["HOST", "STATS", "Gather", "Immutable", "LazyNumpy", "NeedsCopy", "OtherDevice", "Snapshot", "lock",
           "mod"]
