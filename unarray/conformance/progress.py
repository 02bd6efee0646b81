"""Live progress of a conformance run, per backend and device.

On a terminal: a line before a slow backend and device starts (its checks, and how long its last run here took, or
on a first run the project's recorded time for it), one
status line rewritten in place (``\\r``) with that backend's own count and elapsed time and the run's, redrawn
every second by a ticker thread while a check runs (a JAX compilation can hold one check for seconds), and a
line when it finishes. Elsewhere (a CI log): the start of a slow backend and the end of each, unexpected failures,
and a line for a backend still running after each half minute without output.

The wall time of each backend's last complete run is kept in the user's cache directory
(``$XDG_CACHE_HOME/unarray/check-times.json``), so that the next run can say how long a backend will take
before it starts, and ``--help`` can give the quick profile's time on this machine.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from unarray._backends import LIBRARIES

__all__ = ["Progress", "last_times", "remember"]

TICK = 1.0  # seconds between redraws of the status line on a terminal
QUIET = 30.0  # seconds without output after which a plain stream gets a line
SLOW = 10.0  # a backend whose last run here took this long gets a line before it starts


def _times_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "unarray" / "check-times.json"


def _last(profile: str) -> dict[str, tuple[float, int]]:
    try:
        data = json.loads(_times_file().read_text(encoding="utf-8"))
        return {str(k): (float(v[0]), int(v[1])) for k, v in data.get(profile, {}).items()}
    except (OSError, ValueError, AttributeError, TypeError, IndexError, KeyError):
        return {}


def last_times(profile: str) -> dict[str, float]:
    """The wall time of each backend@device's last complete run of ``profile`` here ({} where none was kept)."""
    return {label: seconds for label, (seconds, _) in _last(profile).items()}


def remember(profile: str, timings: dict[str, float], checks: dict[str, int]) -> None:
    """Keep ``timings`` (backend@device -> seconds of a complete run of ``checks[label]`` checks) as the last of
    ``profile``; best effort."""
    path = _times_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        data = data if isinstance(data, dict) else {}
        kept = {k: [round(v, 1), checks[k]] for k, v in timings.items() if checks.get(k)}
        before = data.get(profile)
        data[profile] = {**(before if isinstance(before, dict) else {}), **kept}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
    except (OSError, ValueError, TypeError):
        pass  # a read-only home costs the estimate, not the run


@dataclass
class _Block:
    total: int
    done: int = 0
    t0: float | None = None  # when its first check started
    finished: bool = False


class Progress:
    """Reports a run as it goes (see the module's doc): ``start``, then ``begin``/``step``/``block_done`` per
    backend and device (from any thread), ``note`` for a failure, ``finish``."""

    def __init__(self, stream: TextIO | None = None, tty: bool | None = None, profile: str = "quick",
                 tick: float = TICK, quiet: float = QUIET):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.profile, self.tick, self.quiet = profile, tick, quiet
        self.total = 0
        self.done = 0
        self.blocks: dict[str, _Block] = {}
        self.estimates: dict[str, float] = {}
        self._t0 = time.perf_counter()
        self._last_write = self._t0
        self._status = ("", "")  # the backend and op the status line shows
        self._width = 0
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # -- the run ---------------------------------------------------------------------------------------------
    def start(self, total: int, blocks: dict[str, int] | None = None) -> None:
        with self._lock:
            self.total, self.done, self._t0 = total, 0, time.perf_counter()
            self.blocks = {label: _Block(n) for label, n in (blocks or {}).items()}
            # A backend's last time, scaled to this run's share of its checks (a run of a few ops is short).
            self.estimates = {label: seconds * (self.blocks[label].total / n if label in self.blocks and
                                                self.blocks[label].total else 1.0)
                              for label, (seconds, n) in _last(self.profile).items()}
            about = ""
            if self.blocks and self.blocks.keys() <= self.estimates.keys():
                about = f", {_about(sum(self.estimates[label] for label in self.blocks))} (the last run here)"
            where = next(iter(self.blocks)) if len(self.blocks) == 1 else f"{len(self.blocks)} backends and devices"
            self._line(f"conformance: {total} checks on {where}{about}")
        if self._ticker is None:
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick, name="unarray-progress", daemon=True)
            self._ticker.start()

    def begin(self, label: str) -> None:
        """A backend and device's first check starts: say so, with how long its last run here took."""
        with self._lock:
            block = self.blocks.setdefault(label, _Block(0))
            if block.t0 is not None:
                return
            block.t0 = time.perf_counter()
            self._status = (label, "")
            last = self.estimates.get(label)
            count = f"{block.total} checks" if block.total else "starting"
            if last is not None and last >= SLOW:
                self._line(f"{label}: {count}, {_about(last)} (the last run here)")
            elif last is None and self.profile == "quick" and (seconds := _recorded(label.partition("@")[0])) > SLOW:
                self._line(f"{label}: {count}; its whole quick run took {_about(seconds)} on a 2-core machine")

    def step(self, where: str, op: str) -> None:
        with self._lock:
            self.done += 1
            block = self.blocks.setdefault(where, _Block(0))
            block.done += 1
            if block.t0 is None:
                block.t0 = time.perf_counter()
            self._status = (where, op)
            if self.tty and (time.perf_counter() - self._last_write > 0.05 or block.done == block.total):
                self._draw()

    def note(self, text: str) -> None:
        with self._lock:
            self._line(text[:200])

    def block_done(self, where: str, results: list[Any], seconds: float | None = None) -> None:
        """One line per backend and device: its counts and its own wall time (``seconds``)."""
        with self._lock:
            block = self.blocks.setdefault(where, _Block(0))
            if block.finished:
                return
            block.finished = True
            summary = ", ".join(f"{n} {s}" for s, n in sorted(Counter(r.status for r in results).items()))
            self._line(f"{where}: {summary}" + ("" if seconds is None else f" in {seconds:.1f}s"))

    def finish(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
            self._ticker = None
        with self._lock:
            self._clear()
            self._line(f"conformance: {self.done} checks in {time.perf_counter() - self._t0:.1f}s")

    # -- drawing ---------------------------------------------------------------------------------------------
    def status(self) -> str:
        """The status line: the run's count and time, then each running backend's own."""
        where, op = self._status
        running = [label for label, b in self.blocks.items() if b.t0 is not None and not b.finished]
        tail = f"  {op}" if op and len(running) <= 1 else ""
        return (f"[{self.done:>5}/{self.total}] {time.perf_counter() - self._t0:6.1f}s  "
                + self._running(running or [where]) + tail)

    def _running(self, labels: list[str]) -> str:
        now, parts = time.perf_counter(), []
        for label in labels:
            b = self.blocks.get(label)
            if b is None:
                continue
            spent = now - (b.t0 or now)
            left = ""
            last = self.estimates.get(label)
            if last is not None and last > spent:
                left = f", {_about(last - spent)} left"
            elif b.total and 3 <= b.done < b.total:
                left = f", {_about(spent / b.done * (b.total - b.done))} left"
            parts.append(f"{label} {b.done}{f'/{b.total}' if b.total else ''} in {spent:.0f}s{left}")
        return "; ".join(parts)

    def _tick(self) -> None:
        while not self._stop.wait(self.tick if self.tty else min(self.tick, self.quiet)):
            with self._lock:
                if self.tty:
                    self._draw()
                elif time.perf_counter() - self._last_write >= self.quiet and self.total:
                    running = [label for label, b in self.blocks.items() if b.t0 is not None and not b.finished]
                    if running:
                        self._line("  ... " + self._running(running))

    def _draw(self) -> None:
        text = self.status()
        pad = max(0, self._width - len(text))
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._last_write = time.perf_counter()

    def _clear(self) -> None:
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0

    def _line(self, text: str) -> None:
        self._clear()
        self.stream.write(text + "\n")
        self.stream.flush()
        self._last_write = time.perf_counter()


def _recorded(name: str) -> float:
    # A first run (none kept here): the library's time in the project's recorded quick run (its package's fact).
    lib = LIBRARIES.get(name)
    return lib.check_seconds if lib is not None else 0


def _about(seconds: float) -> str:
    if seconds < 1:
        return "under 1 s"
    return f"about {seconds:.0f} s" if seconds < 120 else f"about {seconds / 60:.1f} min"
