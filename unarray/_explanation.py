"""What ``ua.explain`` returns: the record of what a call would do (``ua.jit``'s explanation extends it).

A module of its own so that the explaining modules (introspection, jit) share it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from unarray._devices import Device

__all__ = ["PLANNERS", "Explanation"]

# op name -> its front end's planner (the op's arguments -> (backend, plan), ``plan.label`` naming the kernel):
# the call runs that plan and ua.explain prints its kernel, so the report is the decision, not a re-derivation.
PLANNERS: dict[str, Callable[..., tuple[Any, Any]]] = {}


@dataclass(frozen=True)
class Explanation:
    """What a call would do: backend, device, kernel, precision, handoffs and copies."""

    op: str
    backend: str
    device: Device
    kernel: str
    precision: str | None
    handoffs: tuple[str, ...] = field(default_factory=tuple)
    copies: int = 0

    def __str__(self) -> str:
        lines = [f"ua.{self.op}: backend={self.backend} device={self.device}", f"  kernel: {self.kernel}"]
        if self.precision is not None:
            lines.append(f"  precision: {self.precision}")
        lines += [f"  handoff: {h}" for h in self.handoffs]
        lines.append(f"  copies: {self.copies}")
        return "\n".join(lines)
