"""The ``distributed`` profile of ``python -m unarray check``: the engines that spread one array over
workers or devices, on one machine.

- dask: the quick cases on dask arrays, computed by a ``distributed`` local cluster (``Client(processes=False)``,
  the default scheduler while it is open), plus a laziness check (ops under a scheduler that refuses to run);
- sharded JAX and torch DTensor: the modules ``unarray.conformance.sharded_jax`` and
  ``unarray.conformance.sharded_torch`` where this version has them, each ``main() -> int`` (0: passed) run in
  its own process with the environment it needs (JAX: 4 fake host devices through ``XLA_FLAGS``).

Everything runs on the CPU, so CI runs it: ``python -m unarray check --profile distributed``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import unarray as ua
from unarray.conformance import runner
from unarray.conformance.results import Result, RunReport

__all__ = ["SHARDED", "nothing_to_run", "run"]

# module -> (backend it checks, environment it needs on top of the caller's)
SHARDED: dict[str, tuple[str, dict[str, str]]] = {
    "unarray.conformance.sharded_jax": ("jax", {"XLA_FLAGS": "--xla_force_host_platform_device_count=4",
                                                "JAX_PLATFORMS": "cpu"}),
    "unarray.conformance.sharded_torch": ("torch", {}),
}
_TIMEOUT = 900


def nothing_to_run(backends: Sequence[str] | None, ops: Sequence[str] | None) -> str:
    """Why the profile with these filters would check nothing it was asked to ("" when all is there)."""
    return runner.unknown_backend(backends) or (
        runner.nothing_to_run("quick", ["dask"], None, ops) if not backends or "dask" in backends else "")


def run(seed: int = 0, ops: Sequence[str] | None = None, progress: Any = None,
        backends: Sequence[str] | None = None) -> RunReport:
    """Run the profile and return its report (nothing is written here).

    Args:
        seed: seed of the input draws of the dask cases.
        ops: ``fnmatch`` patterns selecting dask cases (the sharded modules always run).
        progress: a ``Progress`` line, as for the other profiles.
        backends: the parts to run: ``"dask"``, ``"jax"`` (sharded JAX), ``"torch"`` (DTensor); all by default.

    Returns:
        A :class:`RunReport` of profile ``"distributed"``.
    """
    t0 = time.perf_counter()
    report = RunReport("distributed", seed)
    if not backends or "dask" in backends:
        dask_report = _dask(seed, ops, progress)
        report.results += dask_report.results
        report.backends, report.environment = dask_report.backends, dask_report.environment
        report.timings = {f"{k} (distributed)": v for k, v in dask_report.timings.items()}
    for module, (backend, env) in SHARDED.items():
        if backends and backend not in backends:
            continue
        t = time.perf_counter()
        report.results.append(_sharded(module, backend, env))
        report.timings[module.rpartition(".")[2]] = time.perf_counter() - t
    report.complete = True
    report.seconds = time.perf_counter() - t0
    return report


def _dask(seed: int, ops: Sequence[str] | None, progress: Any) -> RunReport:
    try:
        distributed: Any = importlib.import_module("distributed")
    except ImportError as e:
        r = RunReport("distributed", seed)
        r.results.append(Result("(backend)", "distributed local cluster", "-", "dask", "-", "-", "error", None,
                                f"{e}; install it with: pip install 'dask[array]' distributed"))
        return r
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None):
        out = runner.run("quick", backends=["dask"], seed=seed, progress=progress, ops=ops, isolate=False)
        out.results.append(_lazy_check())
    return out


def _lazy_check() -> Result:
    # Every hot op and attention builds a graph under a scheduler that refuses to run; the cluster computes it.
    import dask

    def refuse(*a: Any, **k: Any) -> Any:
        raise RuntimeError("computed while building the graph")

    t = time.perf_counter()
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, (2, 2, 24, 8))
    try:
        with dask.config.set(scheduler=refuse):
            x = ua.to(a, "dask", chunks=(1, 2, 7, 8))
            outs = [ua.matmul(x, ua.matrix_transpose(x)), ua.sum(x, axis=(0, 2)), ua.var(x, axis=(1, 3), correction=1),
                    ua.permute_dims(x, (3, 2, 1, 0)), ua.argmax(x, axis=2), ua.add(a, x),
                    ua.scaled_dot_product_attention(x, x, x, is_causal=True)]
        refs = [a @ np.swapaxes(a, -1, -2), a.sum((0, 2)), a.var((1, 3), ddof=1), a.transpose(3, 2, 1, 0),
                a.argmax(2), 2 * a, ua.scaled_dot_product_attention(a, a, a, is_causal=True)]
        got = [ua.to(o, "numpy") for o in outs]
        worst = max(float(np.max(np.abs(g - r) / (1 + np.abs(r)))) for g, r in zip(got, refs, strict=True))
        status, msg = ("pass", "") if worst < 1e-12 else ("fail", f"largest relative error {worst:.2e}")
        worst_err: float | None = worst
    except Exception as e:
        status, msg, worst_err = "error", f"{type(e).__name__}: {e}", None
    return Result("dask laziness", "7 ops under a refusing scheduler, then computed", "float64", "dask", "cpu", "cpu",
                  status, worst_err, msg, seconds=time.perf_counter() - t)


def _sharded(module: str, backend: str, env: dict[str, str]) -> Result:
    row = functools.partial(Result, module.rpartition(".")[2], "main() in its own process", "-", backend, "cpu", "cpu")
    if importlib.util.find_spec(module) is None:
        return row("unavailable", None, f"{module} is not part of this version")
    child = dict(os.environ)
    for k, v in env.items():
        child[k] = f"{child[k]} {v}" if k == "XLA_FLAGS" and child.get(k) else v
    code = f"import sys, {module} as m; sys.exit(m.main())"
    t = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", code], env=child, capture_output=True, text=True,
                              timeout=_TIMEOUT)
    except subprocess.TimeoutExpired:
        return row("error", None, f"did not finish in {_TIMEOUT}s", seconds=time.perf_counter() - t)
    tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])[-400:]
    status = "pass" if proc.returncode == 0 else "fail"
    return row(status, None, "" if status == "pass" else f"exit status {proc.returncode}: {tail}",
               seconds=time.perf_counter() - t)
