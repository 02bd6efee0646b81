"""What a run produces: ``Env`` (what a case runs on), ``Result`` (one case's outcome on one
backend and device) and ``RunReport`` (the whole run's)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from unarray.conformance.deviations import platform_of

__all__ = ["Env", "Result", "RunReport"]


@dataclass(frozen=True)
class Env:
    """What a case runs on."""

    backend: str
    device: Any  # ua.Device

    @property
    def platform(self) -> str:
        return platform_of(self.device)

    @property
    def label(self) -> str:
        return f"{self.backend}@{self.device}"


@dataclass
class Result:
    """The outcome of one case on one backend and device."""

    op: str
    form: str
    dtype: str
    backend: str
    device: str
    platform: str
    status: str  # pass | fail | error | known | unavailable
    error: float | None = None
    message: str = ""
    reason: str = ""
    seconds: float = 0.0

    @property
    def unexpected(self) -> bool:
        return self.status in ("fail", "error")

    @property
    def block(self) -> str:
        """The part of the run it belongs to: its backend@device, or handoff@device for a handoff check."""
        return f"handoff@{self.device}" if self.op.startswith("handoff") else f"{self.backend}@{self.device}"


@dataclass
class RunReport:
    profile: str
    seed: int
    results: list[Result] = field(default_factory=list)
    backends: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    environment: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    timings: dict[str, float] = field(default_factory=dict)  # backend@device -> wall seconds of its checks

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if r.unexpected]

    def counts(self) -> dict[str, int]:
        return dict(Counter(r.status for r in self.results))

    def per_backend(self) -> dict[str, str]:
        """backend@device -> its counts and wall time ("250 pass, 3 known in 41.2s"); handoff checks by device."""
        counts: dict[str, Counter[str]] = {}
        for r in self.results:
            counts.setdefault(r.block, Counter())[r.status] += 1
        out = {}
        for label, c in counts.items():
            secs = self.timings.get(label)
            out[label] = ", ".join(f"{n} {s}" for s, n in sorted(c.items())) + \
                ("" if secs is None else f" in {secs:.1f}s")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"profile": self.profile, "seed": self.seed, "complete": self.complete,
                "seconds": round(self.seconds, 2), "timings": {k: round(v, 2) for k, v in self.timings.items()},
                "environment": self.environment, "backends": self.backends, "summary": self.counts(),
                "results": [asdict(r) for r in self.results]}
