"""Run every case on every installed backend and visible device, plus the handoff pairs.

``run()`` enumerates backends with ``ua.backends(probe=True)`` and devices with
each backend's ``devices()``; a backend whose import fails is reported as
``unavailable`` with its error (a failure only when it was asked for by name).
JAX runs with ``jax_enable_x64`` on so that float64 cases exercise float64
(TPUs refuse it: a listed deviation).
"""

from __future__ import annotations

import fnmatch
import math
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, cast

import numpy as np

from unarray.conformance.cases import Case, all_cases, arr, tolerance, upcast
from unarray.conformance.cases_hot import DT
from unarray.conformance.deviations import lookup, platform_of
from unarray.interop._paths import owned as _owned

__all__ = ["Env", "Result", "RunReport", "nothing_to_run", "run", "run_case", "to_numpy"]

_UP = {"float16": "float64", "float32": "float64", "complex64": "complex128"}
# Backends that only take part in handoff (no array namespace of their own).
HANDOFF_ONLY = frozenset({"numba"})


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
        out: dict[str, int] = {}
        for r in self.results:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def per_backend(self) -> dict[str, str]:
        """backend@device -> its counts and wall time ("250 pass, 3 known in 41.2s"); handoff checks by device."""
        counts: dict[str, dict[str, int]] = {}
        for r in self.results:
            label = f"handoff@{r.device}" if r.op.startswith("handoff") else f"{r.backend}@{r.device}"
            c = counts.setdefault(label, {})
            c[r.status] = c.get(r.status, 0) + 1
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


# -- conversions ----------------------------------------------------------------------------
def to_numpy(x: Any) -> Any:
    """A NumPy array (or a tuple of them) with the values of ``x``, from any backend and device."""
    if isinstance(x, (tuple, list)):
        return tuple(to_numpy(i) for i in x)
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex, str)):
        return np.asarray(x)
    root = type(x).__module__.partition(".")[0]
    if root == "torch":
        x = x.detach().cpu().resolve_conj().resolve_neg()
        return (x.float() if str(x.dtype) == "torch.bfloat16" else x).numpy()
    if root == "cupy":
        return x.get()
    if hasattr(x, "copy_to_host"):  # Numba CUDA device arrays
        return x.copy_to_host()
    if root in ("tensorflow", "tf_keras") or hasattr(x, "numpy") and root != "jax":
        return np.asarray(x.numpy())
    return np.asarray(x)


def _to_backend(ua: Any, a: Any, env: Env) -> Any:
    if isinstance(a, DT):
        return getattr(ua, str(a))
    if isinstance(a, np.ndarray):
        return ua.asarray(a, backend=env.backend, device=env.device)
    if isinstance(a, list) and a and all(isinstance(i, np.ndarray) for i in a):
        return [_to_backend(ua, i, env) for i in a]
    return a


def _to_ref(a: Any, up: bool) -> Any:
    if isinstance(a, DT):
        return np.dtype(_UP.get(str(a), str(a)) if up else str(a))
    return upcast(a) if up else a


def _reference(op: str) -> Callable[..., Any]:
    ns, _, name = op.rpartition(".")
    mod = {"": np, "linalg": np.linalg, "fft": np.fft}[ns]
    return cast(Callable[..., Any], getattr(mod, name))


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [leaf for i in x for leaf in _leaves(i)]
    return [x]


# -- comparison -------------------------------------------------------------------------------
def compare(case: Case, actual: Any, expected: Any, args64: tuple[Any, ...], kw64: dict[str, Any],
            n_terms: int) -> tuple[float, float, str]:
    """(largest relative error, tolerance, message); the message is empty when they agree."""
    if callable(case.compare):
        err = float(case.compare(actual, expected, args64))
        tol = tolerance(case.dtype, n_terms, case.precision) * case.tol_factor
        return err, tol, "" if err <= tol else "values differ from the reference"
    a_leaves, e_leaves = _leaves(actual), _leaves(expected)
    if len(a_leaves) != len(e_leaves):
        return math.inf, 0.0, f"returned {len(a_leaves)} arrays, expected {len(e_leaves)}"
    worst, tol = 0.0, 0.0
    for a, e in zip(a_leaves, e_leaves, strict=False):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape:
            return math.inf, 0.0, f"shape {a.shape}, expected {e.shape}"
        if case.compare == "shape":
            continue
        exact = case.compare == "exact" or e.dtype.kind in "biuUSO" or a.dtype.kind in "bUSO"
        if exact:
            same = np.array_equal(a, e, equal_nan=e.dtype.kind in "fc" and a.dtype.kind in "fc")
            if not same:
                return math.inf, 0.0, "values differ from the reference (exact comparison)"
            continue
        a64 = a.astype(np.complex128 if a.dtype.kind == "c" or e.dtype.kind == "c" else np.float64)
        finite = np.isfinite(e)
        if not np.array_equal(np.isfinite(a64), finite) or not np.array_equal(np.isnan(a64), np.isnan(e)):
            return math.inf, 0.0, "NaN/inf positions differ from the reference"
        if np.any(~finite & ~np.isnan(e)) and not np.array_equal(a64[~finite], e[~finite], equal_nan=True):
            return math.inf, 0.0, "infinities differ from the reference"
        if not finite.any():
            continue
        scale = case.scale(args64, kw64) if case.scale else float(np.max(np.abs(e[finite])))
        diff = float(np.max(np.abs(a64[finite] - e[finite])))
        worst = max(worst, diff / scale if scale > 0 else diff)
        tol = tolerance(case.dtype if case.dtype in ("float32", "float64", "complex64", "complex128")
                        else str(e.dtype), n_terms, case.precision) * case.tol_factor
    if worst > tol:
        return worst, tol, f"largest relative error {worst:.3g} exceeds the tolerance {tol:.3g}"
    return worst, tol, ""


def _dtype_of(ua: Any, x: Any) -> str:
    from unarray._dtypes import canonical_name

    d = getattr(x, "dtype", None)
    return (canonical_name(d) or str(d)) if d is not None else type(x).__name__


def _native_problem(ua: Any, out: Any, expected: Any, env: Env) -> str:
    for a, e in zip(_leaves(out), _leaves(expected), strict=False):
        if not isinstance(e, (np.ndarray, np.generic)):
            continue
        try:
            ok = ua.backend_of(a) == env.backend and (env.backend == "numpy" or ua.device(a) == env.device)
        except Exception:
            ok = False
        if not ok:
            return f"returned {type(a).__module__}.{type(a).__name__}, not a {env.backend} array on {env.device}"
    return ""


# -- one case -----------------------------------------------------------------------------------
def run_case(case: Case, env: Env, seed: int = 0) -> Result:
    """Run every example of ``case`` on ``env``; the first failing example decides the result."""
    import unarray as ua

    t0 = time.perf_counter()
    worst = 0.0
    status, message = "pass", ""
    for example in range(case.examples):
        try:
            args, kw = case.draw(case.rng(seed, example), case.dtype)
            ref = case.ref or _reference(case.op)
            args64 = tuple(_to_ref(a, case.ref_upcast) for a in args)
            kw64 = {k: _to_ref(v, case.ref_upcast) for k, v in kw.items()}
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                expected = ref(*args64, **kw64)
                orig = ref(*(_to_ref(a, False) for a in args), **{k: _to_ref(v, False) for k, v in kw.items()}) \
                    if case.check_dtype else None
            want_dtypes = None
            if case.check_dtype:
                want_dtypes = [_dtype_of(ua, e) for e in _leaves(orig) if isinstance(e, (np.ndarray, np.generic))]
            n_terms = case.n_terms((args, kw)) if callable(case.n_terms) else case.n_terms
        except Exception as e:  # a bug in the suite itself, not in the backend
            status, message = "error", f"suite could not build example {example}: {type(e).__name__}: {e}"
            break
        try:
            bargs = tuple(_to_backend(ua, a, env) for a in args)
            bkw = {k: _to_backend(ua, v, env) for k, v in kw.items()}
            if case.creation:
                bkw.update(backend=env.backend, device=env.device)
            if case.call is not None:
                out = case.call(ua, bargs, bkw, env) if case.with_env else case.call(ua, bargs, bkw)
            else:
                out = _reference_ua(ua, case.op)(*bargs, **bkw)
            problem = _native_problem(ua, out, expected, env)
            if want_dtypes is not None and not problem:
                got = [_dtype_of(ua, a) for a, e in zip(_leaves(out), _leaves(expected), strict=False)
                       if isinstance(e, (np.ndarray, np.generic))]
                if got != want_dtypes:
                    problem = f"result dtype {', '.join(got)}, expected {', '.join(want_dtypes)}"
            err, _tol, msg = compare(case, to_numpy(out), to_numpy(expected), args64, kw64, n_terms)
            worst = max(worst, err)
            if problem or msg:
                status, message = "fail", f"example {example}: {problem or msg}"
                break
        except Exception as e:
            status, message = "error", f"example {example}: {type(e).__name__}: {_short(str(e))}"
            break
    result = Result(case.op, case.form, case.dtype, env.backend, str(env.device), env.platform, status,
                    None if status == "error" else worst, message, seconds=time.perf_counter() - t0)
    return _apply_deviation(result)


def _reference_ua(ua: Any, op: str) -> Callable[..., Any]:
    ns, _, name = op.rpartition(".")
    return cast(Callable[..., Any], getattr(getattr(ua, ns) if ns else ua, name))


def _short(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _apply_deviation(r: Result) -> Result:
    if r.status in ("fail", "error"):
        dev = lookup(r.op, r.backend, r.platform, r.dtype)
        if dev is not None:
            r.status, r.reason = "known", dev.reason
    return r


# -- handoff --------------------------------------------------------------------------------------
def _handoff_form(strided: bool, owned: bool = False) -> str:
    if owned:  # an immutable source (JAX, TF) and a target without read-only arrays (torch, CuPy, Numba)
        return "immutable source, one counted copy"
    return "strided view, copy only if counted" if strided else "contiguous, zero-copy"


def handoff_case(src: str, dst: str, device: Any, dtype: str, strided: bool, seed: int = 0) -> Result:
    """``ua.to`` from ``src`` to ``dst`` on one device: zero-copy by data pointer, or a counted copy."""
    import unarray as ua
    from unarray import _backends

    owned = _owned(src, dst)
    form = _handoff_form(strided, owned)
    env = Env(src, device)
    t0 = time.perf_counter()
    status, message = "pass", ""
    counted_copy = False
    try:
        base = arr(np.random.default_rng([seed, len(src), len(dst)]), (64, 34), dtype)
        x = ua.asarray(base, backend=src, device=device)
        if strided:
            x = x[:, ::2]
            base = base[:, ::2]
        ua.stats(reset=True)
        y = ua.to(x, dst)
        st = ua.stats()
        if ua.backend_of(y) != dst or ua.device(y) != device:
            status, message = "fail", f"returned {type(y).__name__} on {ua.device(y)}, not {dst} on {device}"
        elif not np.array_equal(to_numpy(y), base):
            status, message = "fail", "values changed in the handoff"
        else:
            same = _backends.get(src).data_ptr(x) == _backends.get(dst).data_ptr(y)
            if owned:
                if same or st.get("copies", 0) != 1:
                    status, message = "fail", (f"a writable alias of an immutable {src} array" if same else
                                               f"{st.get('copies', 0)} copies counted where one is due")
            elif not same and not st.get("copies", 0):
                status, message = "fail", "copied (data pointers differ) but ua.stats() counted no copy"
            elif not same and not strided:
                status, message = "fail", f"copied (data pointers differ; {st.get('copies', 0)} copies counted)"
                counted_copy = True
    except Exception as e:
        status, message = "error", f"{type(e).__name__}: {_short(str(e))}"
    r = Result(f"handoff->{dst}", form, dtype, src, str(device), env.platform, status, None, message,
               seconds=time.perf_counter() - t0)
    # Note: a listed handoff deviation excuses a counted copy only; a silent copy or an error is a bug.
    return _apply_deviation(r) if counted_copy else r


# -- the whole run ------------------------------------------------------------------------------------
def _enable_x64() -> None:
    # Note: float64 cases need JAX's x64 mode; float32 cases are unaffected (inputs carry their dtype).
    try:
        import jax

        jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]
    except Exception:
        pass


def _environment() -> dict[str, str]:
    import platform

    import unarray as ua

    return {"unarray": ua.__version__, "python": sys.version.split()[0], "machine": platform.machine(),
            "system": platform.system(), "numpy": np.__version__}


def plan(backends: Sequence[str] | None = None, devices: Sequence[str] | None = None,
         ) -> tuple[list[Env], list[dict[str, Any]], list[Result]]:
    """The (backend, device) pairs to run, the backend rows of the report, and unavailability results."""
    import unarray as ua

    wanted = [b for b in backends or ()]
    if "jax" in (wanted or ["jax"]):
        from unarray import _backends

        if _backends.installed("jax"):
            _enable_x64()
    envs: list[Env] = []
    rows: list[dict[str, Any]] = []
    unavailable: list[Result] = []
    for info in ua.backends(probe=False):
        if wanted and info.name not in wanted:
            continue
        info = _probe(info)
        rows.append({"name": info.name, "installed": info.installed, "version": info.version,
                     "usable": bool(info.usable), "devices": [str(d) for d in info.devices], "error": info.error})
        if not info.installed or not info.usable:
            if info.name in wanted or (info.installed and info.name not in HANDOFF_ONLY and _import_broken(info)):
                why = info.error or "not installed"
                unavailable.append(Result("(backend)", "import and devices", "-", info.name, "-", "-",
                                          "error" if info.name in wanted else "unavailable", None, _short(why)))
            continue
        for d in info.devices:
            if devices and platform_of(d) not in devices and str(d) not in devices:
                continue
            envs.append(Env(info.name, d))
    return envs, rows, unavailable


def _probe(info: Any) -> Any:
    # Note: like ua.backends(probe=True) for one backend, so unselected frameworks are never imported.
    from unarray import _backends
    from unarray.introspection import BackendInfo

    if not info.installed:
        return info
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
    envs, rows, unavailable = plan(backends, devices)
    report = RunReport(profile, seed, list(unavailable), rows, environment=_environment())
    case_list = list(cases) if cases is not None else select_cases(profile, ops)
    op_envs = [e for e in envs if e.backend not in HANDOFF_ONLY]
    checks = handoff_checks(envs) if not ops or any(fnmatch.fnmatchcase("handoff", p) for p in ops) else []
    total = len(op_envs) * len(case_list) + len(checks)
    if progress is not None:
        progress.start(total)

    lock = threading.Lock()
    last_snapshot = [time.perf_counter()]
    spans: dict[str, list[float]] = {}  # label -> [first start, last end] of its jobs

    def timed(label: str, job: Callable[[], Any]) -> Callable[[], Any]:
        def go() -> Any:
            t = time.perf_counter()
            try:
                return job()
            finally:
                with lock:
                    span = spans.setdefault(label, [t, t])
                    span[0], span[1] = min(span[0], t), max(span[1], time.perf_counter())
        return go

    def record(r: Result) -> None:
        with lock:
            report.results.append(r)
            if snapshot is not None and time.perf_counter() - last_snapshot[0] >= snapshot_every:
                last_snapshot[0] = time.perf_counter()
                report.seconds = last_snapshot[0] - t0
                snapshot(report)
            if progress is not None:
                progress.step(f"{r.backend}@{r.device}", r.op)
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
                jobs.append(timed(env.label, partial(_run_worker, spec, labels[shard::n], env, record)))
        by_dev: dict[str, list[tuple[str, str, str, str, bool]]] = {}
        for src, dst, dev, dtype, strided in checks:
            by_dev.setdefault(str(dev), []).append((src, dst, str(dev), dtype, strided))
        for dev_name, items in by_dev.items():
            spec = {"mode": "handoff", "checks": items, "seed": seed}
            h_labels = [(f"handoff->{d}", _handoff_form(st, _owned(s, d)), dt) for s, d, _v, dt, st in items]
            job = partial(_run_worker, spec, h_labels, Env(items[0][0], _parse_device(dev_name)), record)
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
        for env in op_envs:
            progress.block_done(env.label, [r for r in report.results if r.backend == env.backend
                                            and r.device == str(env.device) and not r.op.startswith("handoff")],
                                report.timings.get(env.label))
    if progress is not None:
        progress.finish()
    report.seconds = time.perf_counter() - t0
    return report


def _record_handoff(record: Callable[[Result], None], *args: Any) -> None:
    record(handoff_case(*args))


def _record_cases(record: Callable[[Result], None], cases: list[Case], env: Env, seed: int) -> None:
    for case in cases:
        record(run_case(case, env, seed))


def default_jobs() -> int:
    """Worker processes at once: half the cores (each framework runs threads of its own), at most 4."""
    import os

    return max(1, min(4, (os.cpu_count() or 2) // 2))


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

    An ``--ops`` pattern that matches no op, a ``--devices`` name that matches no visible device (a
    GPU job whose GPU is gone), or no backend and device at all."""
    import difflib

    if ops:
        names = sorted({c.op for c in all_cases(profile)} | {"handoff"})
        for p in ops:
            if not any(fnmatch.fnmatchcase(n, p) for n in names):
                close = difflib.get_close_matches(p, names, n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else "; patterns are fnmatch, e.g. 'linalg.*'"
                return f"--ops {p!r} matches no op of the {profile!r} profile{hint}"
    envs, _rows, _unavailable = plan(backends, None)
    if devices:
        for d in devices:
            if not any(platform_of(e.device) == d or str(e.device) == d for e in envs):
                seen = ", ".join(sorted({str(e.device) for e in envs})) or "none"
                return f"--devices {d}: no such device is visible here (visible: {seen}); nothing would run on it"
    if not any(e.backend not in HANDOFF_ONLY for e in envs) and not (backends and set(backends) <= HANDOFF_ONLY):
        return "no installed backend can run (see python -m unarray env)"
    return ""


def select_cases(profile: str, ops: Sequence[str] | None = None) -> list[Case]:
    return [c for c in all_cases(profile) if not ops or any(fnmatch.fnmatchcase(c.op, p) for p in ops)]


def handoff_checks(envs: list[Env]) -> list[tuple[str, str, Any, str, bool]]:
    """(source, target, device, dtype, strided) for every ordered pair of backends on one device."""
    return [(s, d, dev, dtype, strided) for s, d, dev in _handoff_pairs(envs)
            for dtype in ("float32", "int32", "bool") for strided in (False, True)]


def _parse_device(name: str) -> Any:
    from unarray._devices import parse_device

    return parse_device(name)


# -- worker processes -------------------------------------------------------------------------------
def _run_worker(spec: dict[str, Any], labels: list[tuple[str, str, str]], env: Env,
                record: Callable[[Result], None]) -> list[Result]:
    """Run ``spec`` in a child process, resuming after a case that kills it."""
    import json
    import os
    import subprocess

    out: list[Result] = []
    # Note: several workers may share one GPU; JAX must not grab most of its memory up front.
    # TensorFlow's C++ log lines (start-up notices, warnings) are silenced: a crash's tail stays readable.
    child_env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false", "TF_CPP_MIN_LOG_LEVEL": "3"}
    start = barren = 0
    while start < len(labels):
        cmd = [sys.executable, "-m", "unarray.conformance.runner", json.dumps({**spec, "start": start})]
        # Note: stderr goes to a file, not a pipe: a chatty framework would fill a pipe and stall the worker.
        with tempfile.TemporaryFile("w+") as errfile:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errfile, text=True, env=child_env)
            current, started = start, False
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("START "):
                    current, started = int(line.split()[1]), True
                elif line.startswith("RESULT "):
                    out.append(Result(**json.loads(line[7:])))
                    record(out[-1])
                    current += 1
            rc = proc.wait()
            errfile.seek(0)
            err = errfile.read()[-20000:]
        if current >= len(labels):
            return out
        op, form, dtype = labels[current]
        lines = err.strip().splitlines()
        key = [ln for ln in lines if any(w in ln for w in ("Check failed", "Error", "Fatal", "Segmentation",
                                                            "Aborted", "terminate"))]
        tail = _short(" | ".join((key or lines)[-3:]), 400)
        backend = env.backend if spec["mode"] == "cases" else spec["checks"][current][0]
        r = Result(op, form, dtype, backend, str(env.device), env.platform, "error", None,
                   f"the process died (exit status {rc}) running this case: {tail}")
        out.append(r)
        record(r)
        start = current + 1
        # Note: a worker that dies twice before finishing any case would die for every case; stop there.
        barren = 0 if started else barren + 1
        if barren >= 2:
            for op, form, dtype in labels[start:]:
                rest = Result(op, form, dtype, backend, str(env.device), env.platform, "error", None,
                              f"not run: the worker process dies before its first case ({tail})")
                out.append(rest)
                record(rest)
            break
    return out


def _worker(spec: dict[str, Any]) -> None:
    import json

    start = int(spec.get("start", 0))
    if spec["mode"] == "cases":
        if spec["backend"] == "jax":
            _enable_x64()
        env = Env(spec["backend"], _parse_device(spec["device"]))
        shard, n = spec.get("shard", (0, 1))
        chosen = select_cases(spec["profile"], spec["ops"] or None)[shard::n]
        items: list[Callable[[], Result]] = [partial(run_case, c, env, spec["seed"]) for c in chosen]
    else:
        if any("jax" in (c[0], c[1]) for c in spec["checks"]):
            _enable_x64()
        items = [partial(handoff_case, c[0], c[1], _parse_device(c[2]), c[3], c[4], spec["seed"])
                 for c in spec["checks"]]
    # Note: the protocol gets its own copy of stdout; anything a framework prints goes to stderr.
    import os

    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for i in range(start, len(items)):
        print(f"START {i}", file=proto, flush=True)
        print("RESULT " + json.dumps(asdict(items[i]()), default=str), file=proto, flush=True)


def _handoff_pairs(envs: list[Env]) -> list[tuple[str, str, Any]]:
    by_device: dict[Any, list[str]] = {}
    for e in envs:
        by_device.setdefault(e.device, []).append(e.backend)
    # Note: dask takes no part: its handoffs wrap (lazily) or compute (counted), checked in tests/test_dask.py.
    return [(s, d, dev) for dev, names in by_device.items() for s in names for d in names
            if s != d and "dask" not in (s, d)]


if __name__ == "__main__":
    import json

    _worker(json.loads(sys.argv[1]))
