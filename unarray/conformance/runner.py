"""Run every case on every installed backend and visible device, plus the handoff pairs.

``run()`` enumerates backends with ``ua.backends(probe=True)`` and devices with
each backend's ``devices()``; a backend whose import fails is reported as
``unavailable`` with its error (a failure only when it was asked for by name).
JAX runs with ``jax_enable_x64`` on so that float64 cases exercise float64
(TPUs refuse it: a listed deviation). One case runs in ``check.py``, each backend and
device's share in a worker process (``worker.py``); the result types are in ``results.py``.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import platform
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np

import unarray as ua
from unarray import _backends
from unarray._backends import LIBRARIES, NAMES
from unarray._devices import TPU_SETTINGS, no_driver, parse_device  # noqa: F401 - this module's names for the driver rule
from unarray.conformance.cases import Case, all_cases, select_cases
from unarray.conformance.check import handoff_case, handoff_form, owned_pair, run_case, short, to_numpy
from unarray.conformance.deviations import platform_of
from unarray.conformance.progress import remember
from unarray.conformance.results import Env, Result, RunReport
from unarray.conformance.worker import run_worker, setup
from unarray.introspection import BackendInfo

__all__ = ["Env", "Result", "RunReport", "no_driver", "nothing_to_run", "run", "run_case", "to_numpy",
           "unknown_backend"]

# Backends that only take part in handoff (no array namespace of their own).
HANDOFF_ONLY = frozenset(n for n, lib in LIBRARIES.items() if lib.handoff_only)


def _environment() -> dict[str, str]:
    return {"unarray": ua.__version__, "python": sys.version.split()[0], "machine": platform.machine(),
            "system": platform.system(), np.__name__: np.__version__}  # (the reference's version)


def plan(backends: Sequence[str] | None = None, devices: Sequence[str] | None = None, ask: bool = True,
         ) -> tuple[list[Env], list[dict[str, Any]], list[Result]]:
    """The (backend, device) pairs to run, the backend rows of the report, and unavailability results.

    With ``ask=False`` (the cases run in worker processes, which import their framework and report one that
    fails to) a framework whose devices the OS already tells is not imported here."""
    wanted = [b for b in backends or ()]
    envs: list[Env] = []
    rows: list[dict[str, Any]] = []
    unavailable: list[Result] = []
    for info in ua.backends(probe=False):
        if wanted and info.name not in wanted:
            continue
        info = _probe(info, ask)
        if ask and info.usable:  # loaded by the probe: its global modes for the cases (JAX's x64 mode)
            setup(info.name)
        rows.append({"name": info.name, "installed": info.installed, "version": info.version,
                     "usable": bool(info.usable), "devices": [str(d) for d in info.devices], "error": info.error})
        if not info.installed or not info.usable:
            if info.name in wanted or (info.installed and info.name not in HANDOFF_ONLY and _import_broken(info)):
                why = info.error or "not installed"
                unavailable.append(Result("(backend)", "import and devices", "-", info.name, "-", "-",
                                          "error" if info.name in wanted else "unavailable", None, short(why)))
            continue
        for d in info.devices:
            if devices and platform_of(d) not in devices and str(d) not in devices:
                continue
            envs.append(Env(info.name, d))
    return envs, rows, unavailable


def _probe(info: Any, ask: bool = True) -> Any:
    # Note: like ua.backends(probe=True) for one backend, so unselected frameworks are never imported.
    if not info.installed:
        return info
    known = None if ask else _backends.known_devices(info.name)
    if known is not None:
        return BackendInfo(info.name, True, info.version, info.loaded, True, known)
    try:
        devs = tuple(_backends.get(info.name).devices())
        return BackendInfo(info.name, True, info.version, True, True, devs)
    except Exception as e:  # a broken install is reported, not raised
        return BackendInfo(info.name, True, info.version, info.loaded, False, (), f"{type(e).__name__}: {e}")


def _import_broken(info: Any) -> bool:
    # Note: a backend module that does not exist yet in this version is "not supported", not broken.
    return "No module named 'unarray._backends." not in (info.error or "")


def run(profile: str = "quick", backends: Sequence[str] | None = None, devices: Sequence[str] | None = None,
        seed: int = 0, progress: Any = None, cases: Iterable[Case] | None = None, ops: Sequence[str] | None = None,
        isolate: bool = True, parallel: int | None = None,
        snapshot: Callable[[RunReport], None] | None = None, snapshot_every: float = 20.0) -> RunReport:
    """Run the conformance suite and return its report (nothing is written here).

    With ``isolate`` (the default) each backend and device runs in its own worker
    process, so a backend that aborts the process (a native crash) costs one case,
    reported as an error naming the case, not the run; the worker restarts after it.
    ``parallel`` workers run at once (each backend's cases are split into that many
    shards). ``ops`` filters cases by ``fnmatch`` patterns; ``cases`` (in-process only)
    replaces them. ``snapshot(report)`` is called with the partial report every ``snapshot_every`` s
    (the CLI writes it, so a run killed by a CI time limit still leaves a report).
    """
    t0 = time.perf_counter()
    if parallel is None:
        parallel = default_jobs()
    # Note: the workers import the frameworks; the parent imports one only where the OS cannot tell its devices.
    envs, rows, unavailable = plan(backends, devices, ask=not isolate or cases is not None)
    report = RunReport(profile, seed, list(unavailable), rows, environment=_environment())
    case_list = list(cases) if cases is not None else select_cases(profile, ops)
    op_envs = [e for e in envs if e.backend not in HANDOFF_ONLY]
    checks = handoff_checks(envs) if not ops or any(fnmatch.fnmatchcase("handoff", p) for p in ops) else []
    total = len(op_envs) * len(case_list) + len(checks)
    by_dev: dict[str, list[tuple[str, str, str, str, bool]]] = {}
    for src, dst, dev, dtype, strided in checks:
        by_dev.setdefault(str(dev), []).append((src, dst, str(dev), dtype, strided))
    blocks = {e.label: len(case_list) for e in op_envs} | {f"handoff@{d}": len(items) for d, items in by_dev.items()}
    if progress is not None:
        progress.start(total, blocks)

    lock = threading.Lock()
    last_snapshot = [time.perf_counter()]
    spans: dict[str, list[float]] = {}  # label -> [first start, last end] of its jobs

    pending: dict[str, int] = {}  # label -> its jobs not finished yet

    def timed(label: str, job: Callable[[], Any]) -> Callable[[], Any]:
        pending[label] = pending.get(label, 0) + 1

        def go() -> Any:
            t = time.perf_counter()
            if progress is not None:
                progress.begin(label)
            try:
                return job()
            finally:
                with lock:
                    span = spans.setdefault(label, [t, t])
                    span[0], span[1] = min(span[0], t), max(span[1], time.perf_counter())
                    pending[label] -= 1
                    if pending[label] == 0 and progress is not None:
                        progress.block_done(label, [r for r in report.results if r.block == label],
                                            span[1] - span[0])
        return go

    unavailable_seen: set[tuple[str, str]] = set()

    def record(r: Result) -> None:
        with lock:
            if r.op == "(backend)":  # every shard's worker finds the framework broken: one row says so
                if (r.backend, r.device) in unavailable_seen:
                    return
                unavailable_seen.add((r.backend, r.device))
            report.results.append(r)
            if snapshot is not None and time.perf_counter() - last_snapshot[0] >= snapshot_every:
                last_snapshot[0] = time.perf_counter()
                report.seconds = last_snapshot[0] - t0
                snapshot(report)
            if progress is not None:
                progress.step(r.block, r.op)
                if r.unexpected:
                    progress.note(f"{r.status.upper()} {r.backend}@{r.device} {r.op}[{r.form}|{r.dtype}]: "
                                  f"{r.message}")

    jobs: list[Callable[[], list[Result]]] = []
    labels = [(c.op, c.form, c.dtype) for c in case_list]
    if isolate and cases is None:
        n = max(1, parallel)
        for env in op_envs:
            for shard in range(n):
                spec = {"mode": "cases", "backend": env.backend, "device": str(env.device), "profile": profile,
                        "seed": seed, "ops": list(ops or ()), "shard": [shard, n]}
                jobs.append(timed(env.label, partial(run_worker, spec, labels[shard::n], env, record)))
        for dev_name, items in by_dev.items():
            spec = {"mode": "handoff", "checks": items, "seed": seed}
            h_labels = [(f"handoff->{d}", handoff_form(st, owned_pair(s, d)), dt) for s, d, _v, dt, st in items]
            job = partial(run_worker, spec, h_labels, Env(items[0][0], parse_device(dev_name)), record)
            jobs.append(timed(f"handoff@{dev_name}", job))
        with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
            list(pool.map(lambda job: job(), jobs))
    else:
        for env in op_envs:
            timed(env.label, partial(_record_cases, record, case_list, env, seed))()
        for src, dst, dev, dtype, strided in checks:
            timed(f"handoff@{dev}", partial(_record_handoff, record, src, dst, dev, dtype, strided, seed))()
    report.results.sort(key=_order(op_envs, labels))
    report.complete = True
    report.timings = {label: end - start for label, (start, end) in spans.items()}
    if progress is not None:
        progress.finish()
    report.seconds = time.perf_counter() - t0
    if cases is None and not ops:
        remember(profile, report.timings, blocks)  # the next run's estimates (not a filtered run's times)
    return report


def _record_handoff(record: Callable[[Result], None], *args: Any) -> None:
    record(handoff_case(*args))


def _record_cases(record: Callable[[Result], None], cases: list[Case], env: Env, seed: int) -> None:
    for case in cases:
        record(run_case(case, env, seed))


def default_jobs() -> int:
    """Worker processes at once: half the cores (each framework runs threads of its own), at most 8."""
    return max(1, min(8, (os.cpu_count() or 2) // 2))


def _order(envs: list[Env], labels: list[tuple[str, str, str]]) -> Callable[[Result], tuple[int, int, str]]:
    env_i = {(e.backend, str(e.device)): i for i, e in enumerate(envs)}
    case_i = {lab: i for i, lab in enumerate(labels)}

    def key(r: Result) -> tuple[int, int, str]:
        if r.device == "-":
            return (-1, 0, r.backend)
        if r.op.startswith("handoff"):
            return (len(envs), 0, f"{r.device} {r.op} {r.backend}")
        return (env_i.get((r.backend, r.device), len(envs)), case_i.get((r.op, r.form, r.dtype), 0), "")
    return key


def nothing_to_run(profile: str, backends: Sequence[str] | None = None, devices: Sequence[str] | None = None,
                   ops: Sequence[str] | None = None) -> str:
    """Why a run with these filters would check nothing it was asked to ("" when all is there).

    A ``--backends`` name that names no backend, an ``--ops`` pattern that matches no op, a ``--devices``
    name that matches no visible device (a GPU job whose GPU is gone; refused before any framework is
    imported where the machine has no driver for it), or no backend and device at all."""
    problem = unknown_backend(backends)
    if problem:
        return problem
    if ops:
        names = sorted({c.op for c in all_cases(profile)} | {"handoff"})
        for p in ops:
            if not any(fnmatch.fnmatchcase(n, p) for n in names):
                close = difflib.get_close_matches(p, names, n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else "; patterns are fnmatch, e.g. 'linalg.*'"
                return f"--ops {p!r} matches no op of the {profile!r} profile{hint}"
    for d in devices or ():
        why = no_driver(platform_of(d))
        if why:
            return (f"--devices {d}: no such device is visible here ({why}; python -m unarray env lists the "
                    "visible devices); nothing would run on it")
    envs, _rows, _unavailable = plan(backends, None, ask=False)
    if devices:
        for d in devices:
            if not any(platform_of(e.device) == d or str(e.device) == d for e in envs):
                seen = ", ".join(sorted({str(e.device) for e in envs})) or "none"
                return f"--devices {d}: no such device is visible here (visible: {seen}); nothing would run on it"
    if not any(e.backend not in HANDOFF_ONLY for e in envs) and not (backends and set(backends) <= HANDOFF_ONLY):
        return "no installed backend can run (see python -m unarray env)"
    return ""


def unknown_backend(backends: Sequence[str] | None) -> str:
    """The refusal of a ``--backends`` name that names no backend ("" when all are known)."""
    for b in backends or ():
        if b not in NAMES:
            close = difflib.get_close_matches(b, NAMES, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            return f"--backends: unknown backend {b!r} ({hint}known: {', '.join(NAMES)})"
    return ""


def handoff_checks(envs: list[Env]) -> list[tuple[str, str, Any, str, bool]]:
    """(source, target, device, dtype, strided) for every ordered pair of backends on one device."""
    return [(s, d, dev, dtype, strided) for s, d, dev in _handoff_pairs(envs)
            for dtype in ("float32", "int32", "bool") for strided in (False, True)]


def _handoff_pairs(envs: list[Env]) -> list[tuple[str, str, Any]]:
    by_device: dict[Any, list[str]] = {}
    for e in envs:
        by_device.setdefault(e.device, []).append(e.backend)
    # Note: a lazy library takes no part: its handoffs wrap (lazily) or compute (counted), checked in its tests.
    return [(s, d, dev) for dev, names in by_device.items() for s in names for d in names
            if s != d and not (LIBRARIES[s].lazy or LIBRARIES[d].lazy)]
