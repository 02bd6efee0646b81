"""Run a client library's own tests in a pytest subprocess, and read the run's report.

A client module (:mod:`tests.client.scipy_run`, :mod:`tests.client.sklearn_run`) names the package, its
test files, the selection, its lookup plugin and ``KNOWN``: the failures with unarray's namespace that
are not unarray's, each with its reason. The report (:mod:`tests.client.report_plugin`) holds every
test's outcome, its error line where it failed, and the unarray namespaces the client's lookup returned.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[2]
# A generous limit: the CI machine has two cores shared with nothing else, a loaded one far less.
TIMEOUT_S = 1800
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


class Known(NamedTuple):
    """Failures of the tests whose id matches ``pattern`` on ``backends`` (with an error line matching
    ``error`` where given: one test can fail for two reasons on two backends), and why."""

    pattern: str
    backends: frozenset[str]
    why: str
    error: str = ""


def gpu_run() -> bool:
    """Whether this is the suite's GPU run (``--devices gpu`` or ``UNARRAY_TEST_DEVICE=gpu``): CuPy joins."""
    return os.environ.get("UNARRAY_TEST_DEVICE") == "gpu"


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def run(package: str, files: Iterable[str], *, plugin: str, ours: bool, env: dict[str, str],
        keyword: str | None = None, select: str | None = None) -> dict[str, Any]:
    """Run ``package``'s test ``files`` in one subprocess with ``plugin``; its lookup on when ``ours``."""
    where = package_dir(package)
    with tempfile.TemporaryDirectory() as tmp:
        ini, report = Path(tmp) / "client.ini", Path(tmp) / "report.json"
        ini.write_text("[pytest]\n")  # the client's tests under their own defaults, not unarray's pytest settings
        full_env = {**os.environ, **env, "UA_CLIENT_REPORT": str(report), "UA_CLIENT_PLUGIN": "1" if ours else "0",
                    "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        if select:
            full_env["UA_CLIENT_SELECT"] = select
        cmd = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(where.parent), "-q", "-p",
               "no:cacheprovider", "-W", "ignore", "-p", "tests.client.report_plugin", "-p", plugin,
               *(["-k", keyword] if keyword else []), *(str(where / f) for f in files)]
        done = subprocess.run(cmd, cwd=tmp, env=full_env, capture_output=True, text=True, timeout=TIMEOUT_S)
        if not report.exists():
            raise RuntimeError(f"{package}'s test run wrote no report:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        out: dict[str, Any] = json.loads(report.read_text())
    out["tail"] = done.stdout[-2000:]
    return out


def failed(report: dict[str, Any]) -> list[str]:
    return [n for n, o in report["outcomes"].items() if o in ("failed", "error")]


def _selects(entry: Known, backend_of: Callable[[str], str], nodeid: str) -> bool:
    return re.search(entry.pattern, nodeid) is not None and backend_of(nodeid) in entry.backends


def reason(known: Sequence[Known], backend_of: Callable[[str], str], nodeid: str, message: str = "") -> str | None:
    """The reason listed for a failure of ``nodeid`` with error line ``message``, or None."""
    for entry in known:
        if _selects(entry, backend_of, nodeid) and re.search(entry.error, message, flags=re.S):
            return entry.why
    return None


def stale(known: Sequence[Known], backend_of: Callable[[str], str], report: dict[str, Any]) -> list[Known]:
    """The entries of ``known`` that select tests of this run, none of which failed so (a strict xfail's rule)."""
    messages = report["messages"]
    bad = {n for n in failed(report) if n in messages}
    out = []
    for entry in known:
        selected = [n for n in report["outcomes"] if _selects(entry, backend_of, n)]
        if selected and not [n for n in selected if n in bad and re.search(entry.error, messages[n], flags=re.S)]:
            out.append(entry)
    return out


def unexplained(known: Sequence[Known], backend_of: Callable[[str], str], report: dict[str, Any]) -> list[str]:
    """The failures of this run that ``known`` does not list, with their error lines."""
    return [f"{n}: {report['messages'].get(n, '')[:300]}" for n in failed(report)
            if reason(known, backend_of, n, report["messages"].get(n, "")) is None]


def counts(report: dict[str, Any], backend_of: Callable[[str], str]) -> dict[str, collections.Counter[str]]:
    """Outcomes per backend."""
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for nodeid, outcome in report["outcomes"].items():
        table[backend_of(nodeid)][outcome] += 1
    return table


def table(runs: dict[str, dict[str, Any]], backends: Sequence[str], known: Sequence[Known],
          backend_of: Callable[[str], str]) -> str:
    """Markdown counts per backend of each run ("unarray" first), then the failures by reason."""
    lines = ["| backend | namespace | " + " | ".join(OUTCOMES) + " | listed in `KNOWN` |",
             "|---" * (len(OUTCOMES) + 3) + "|"]
    for b in (*backends, "none"):
        for name, rep in runs.items():
            c = counts(rep, backend_of)[b]
            listed = sum(1 for n in failed(rep) if backend_of(n) == b
                         and reason(known, backend_of, n, rep["messages"].get(n, ""))) if name == "unarray" else ""
            lines.append(f"| {b} | {name} | " + " | ".join(str(c[k]) for k in OUTCOMES) + f" | {listed} |")
    ours = runs["unarray"]
    lines.append(f"\nunexplained failures with unarray's namespace: {unexplained(known, backend_of, ours)}")
    why = [reason(known, backend_of, n, ours["messages"].get(n, "")) for n in failed(ours)]
    by_reason = collections.Counter(w for w in why if w)
    lines.extend(f"listed ({k}): {why}" for why, k in by_reason.most_common())
    lines.append(f"stale entries (no failure left): {[e.pattern for e in stale(known, backend_of, ours)]}")
    lines.append(f"unarray namespaces returned: {ours['namespaces']}")
    return "\n".join(lines)
