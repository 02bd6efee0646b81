"""Run a subset of SciPy's own array-API tests with its namespace lookup answering unarray's namespace.

``run(plugin=True)`` runs the subset in one pytest subprocess on NumPy, torch, JAX and dask with
:mod:`tests.client.scipy_plugin` loaded, and returns the plugin's report; ``run(plugin=False)`` runs the
same tests with SciPy's normal namespace (array-api-compat's), for comparison. ``KNOWN`` lists each
failure that is not unarray's, with the reason. ``python -m tests.client.scipy_run`` prints both runs'
counts per backend (pass ``--full`` for the larger set of tests listed in docs/clients.md).
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ("numpy", "torch", "jax.numpy", "dask.array")

# Files below scipy/ and the -k expression: the array-API helpers, k-means, the moment statistics and
# softmax; logsumexp's 1,600 cases run in the full set only (for the CI suite's time).
SUBSET = (["_lib/tests/test_array_api.py", "cluster/tests/test_vq.py", "stats/tests/test_stats.py",
           "special/tests/test_logsumexp.py"],
          "TestArrayAPI or test_vq or TestMoments or TestSkew or TestKurtosis or TestZscore "
          "or TestSoftmax or TestLogSoftmax")
FULL = (["_lib/tests/test_array_api.py", "cluster/tests/test_vq.py", "stats/tests/test_stats.py",
         "special/tests/test_logsumexp.py"],
        "TestArrayAPI or test_vq or moment or skew or kurtosis or variation or zscore or test_array_api "
        "or LogSumExp or Softmax")

_ANY = frozenset(BACKENDS) | {"none"}
_SPECIAL = ("scipy.special picks its JAX or dask implementation by is_jax(xp) / is_dask(xp) "
            "(special/_support_alternative_backends.py); for any other namespace it converts to NumPy with "
            "np.asarray, which a jitted JAX trace and SciPy's no-compute check on dask refuse")
# (nodeid pattern, backends, reason): every failure with unarray's namespace that is not unarray's fault.
KNOWN: list[tuple[str, frozenset[str], str]] = [
    (r"TestArrayAPI::test_array_namespace$", frozenset({"none"}),
     "asserts the lookup's answer by name ('array_api_compat.numpy' in xp.__name__): namespace identity"),
    (r"TestArrayAPI::test_array_and_array_likes_mix\[", frozenset({"numpy"}),
     "branches on is_numpy(xp): for any other namespace it expects SciPy's lookup to refuse a list next to "
     "an array, which is SciPy's rule for non-NumPy libraries, not one for unarray's NumPy namespace"),
    (r"TestArrayAPI::test_jax_zero_gradient_array$", frozenset({"none"}),
     "asserts array_namespace(zero_gradient) is jax.numpy (namespace identity) for JAX's float0 array, a "
     "JAX-internal NumPy array that SciPy's lookup special-cases"),
    (r"TestArrayAPI::test_strict_checks\[", frozenset({"numpy"}),
     "expects xp_assert_* to tell a 0-d array from a NumPy scalar, which SciPy checks only when is_numpy(xp)"),
    (r"TestArrayAPI::test_check_scalar(_no_0d)?\[", frozenset({"numpy"}),
     "calls xp.float64(1.0): NumPy's dtype-as-constructor, not in the standard (a dtype is not callable)"),
    (r"(TestSkewTest|TestKurtosisTest|TestPearsonr)::", frozenset({"jax.numpy", "dask.array"}), _SPECIAL),
    (r"TestZscore::test_zscore(_nan_omit_with)?_ddof\[", frozenset({"dask.array"}),
     "array-api-extra's apply_where maps over dask chunks only when is_dask_namespace(xp); its generic path's "
     "boolean-mask indexing raises IndexError inside dask"),
]


def backend_of(nodeid: str) -> str:
    """The ``xp`` fixture's backend in a test id, ``"none"`` for a test without it."""
    m = re.search(r"[\[-](numpy|torch|jax\.numpy|dask\.array)[\]-]", nodeid)
    return m.group(1) if m else "none"


def reason(nodeid: str) -> str | None:
    """The reason a failure of ``nodeid`` with unarray's namespace is not unarray's, or None."""
    for pattern, backends, why in KNOWN:
        if re.search(pattern, nodeid) and backend_of(nodeid) in backends:
            return why
    return None


def run(*, plugin: bool, full: bool = False) -> dict[str, Any]:
    """Run the subset (or the full set) in one subprocess; the report: outcomes by test id and namespaces."""
    spec = importlib.util.find_spec("scipy")
    assert spec is not None and spec.origin is not None
    scipy_dir = Path(spec.origin).parent
    files, keyword = FULL if full else SUBSET
    with tempfile.TemporaryDirectory() as tmp:
        ini, report = Path(tmp) / "scipy.ini", Path(tmp) / "report.json"
        ini.write_text("[pytest]\n")  # SciPy's tests under their own defaults, not unarray's pytest settings
        env = {**os.environ, "SCIPY_ARRAY_API": json.dumps(list(BACKENDS)), "UA_CLIENT_REPORT": str(report),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        # Without unarray's plugin the report comes from the same plugin module, loaded with its lookup off.
        env["UA_CLIENT_PLUGIN"] = "1" if plugin else "0"
        cmd = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(scipy_dir.parent), "-q", "-p",
               "no:cacheprovider", "-p", "tests.client.scipy_plugin", "-k", keyword,
               *(str(scipy_dir / f) for f in files)]
        done = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=1200)
        if not report.exists():
            raise RuntimeError(f"SciPy's test run wrote no report:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        out: dict[str, Any] = json.loads(report.read_text())
    out["tail"] = done.stdout[-2000:]
    return out


def counts(report: dict[str, Any]) -> dict[str, collections.Counter[str]]:
    """Outcomes per backend."""
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for nodeid, outcome in report["outcomes"].items():
        table[backend_of(nodeid)][outcome] += 1
    return table


def _table(full: bool, dump: str | None = None) -> str:
    runs = {"unarray": run(plugin=True, full=full), "normal": run(plugin=False, full=full)}
    if dump:  # both runs' outcomes by test id, for reading the failures
        Path(dump).write_text(json.dumps(runs, indent=1))
    cols = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
    lines = ["| backend | namespace | " + " | ".join(cols) + " | known failures |", "|---" * (len(cols) + 3) + "|"]
    for b in (*BACKENDS, "none"):
        for name, rep in runs.items():
            c = counts(rep)[b]
            known = sum(1 for n, o in rep["outcomes"].items() if backend_of(n) == b and o in ("failed", "error")
                        and reason(n)) if name == "unarray" else ""
            lines.append(f"| {b} | {name} | " + " | ".join(str(c[k]) for k in cols) + f" | {known} |")
    failed = [n for n, o in runs["unarray"]["outcomes"].items() if o in ("failed", "error")]
    lines.append(f"\nunexplained failures with unarray's namespace: {[n for n in failed if not reason(n)]}")
    by_reason = collections.Counter(reason(n) for n in failed if reason(n))
    lines.extend(f"listed ({k}): {why}" for why, k in by_reason.most_common())
    lines.append(f"unarray namespaces returned to SciPy: {runs['unarray']['namespaces']}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(_table("--full" in sys.argv, dump=sys.argv[sys.argv.index("--dump") + 1] if "--dump" in sys.argv else None))
