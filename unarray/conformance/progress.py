"""Live progress: one updating line on a terminal, plain lines otherwise (CI logs)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class Progress:
    """Reports a run as it goes.

    On a TTY a single line is rewritten in place (``\\r``) with the count, the
    backend and device and the op; otherwise one plain line is printed per
    backend and device when it finishes, plus one per unexpected failure.
    """

    def __init__(self, stream: TextIO | None = None, tty: bool | None = None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = 0
        self.done = 0
        self._t0 = time.perf_counter()
        self._last = 0.0
        self._width = 0

    def start(self, total: int) -> None:
        self.total, self.done, self._t0 = total, 0, time.perf_counter()
        if not self.tty:
            self._line(f"conformance: {total} checks")

    def step(self, where: str, op: str) -> None:
        self.done += 1
        now = time.perf_counter()
        if self.tty and (now - self._last > 0.05 or self.done == self.total):
            self._last = now
            text = f"[{self.done:>5}/{self.total}] {now - self._t0:6.1f}s  {where}  {op}"
            pad = max(0, self._width - len(text))
            self._width = len(text)
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
        elif not self.tty and self.total and self.done * 10 // self.total != (self.done - 1) * 10 // self.total:
            self._line(f"[{self.done:>5}/{self.total}] {now - self._t0:6.1f}s  {where}  {op}")

    def note(self, text: str) -> None:
        self._line(text[:200])

    def block_done(self, where: str, results: list[Any], seconds: float | None = None) -> None:
        """One line per backend and device: its counts and its own wall time (``seconds``)."""
        counts: dict[str, int] = {}
        for r in results:
            counts[r.status] = counts.get(r.status, 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        self._line(f"{where}: {summary}" + ("" if seconds is None else f" in {seconds:.1f}s"))

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        self._line(f"conformance: {self.done} checks in {time.perf_counter() - self._t0:.1f}s")

    def _line(self, text: str) -> None:
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(text + "\n")
        self.stream.flush()
