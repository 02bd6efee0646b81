"""Run a subset of SciPy's own array-API tests with its namespace lookup answering unarray's namespace.

``run(plugin=True)`` runs the subset in one pytest subprocess on NumPy, torch, JAX and dask with
:mod:`tests.client.scipy_plugin` loaded, and returns the plugin's report; ``run(plugin=False)`` runs the
same tests with SciPy's normal namespace (array-api-compat's), for comparison. ``KNOWN`` lists each
failure that is not unarray's, with the reason. ``python -m tests.client.scipy_run`` prints both runs'
counts per backend (pass ``--full`` for the larger set of tests listed in docs/clients.md).
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path
from typing import Any

from tests.client import runner
from tests.client.runner import Known

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
KNOWN: list[Known] = [
    Known(r"TestArrayAPI::test_array_namespace$", frozenset({"none"}),
     "asserts the lookup's answer by name ('array_api_compat.numpy' in xp.__name__): namespace identity"),
    Known(r"TestArrayAPI::test_array_and_array_likes_mix\[", frozenset({"numpy"}),
     "branches on is_numpy(xp): for any other namespace it expects SciPy's lookup to refuse a list next to "
     "an array, which is SciPy's rule for non-NumPy libraries, not one for unarray's NumPy namespace"),
    Known(r"TestArrayAPI::test_jax_zero_gradient_array$", frozenset({"none"}),
     "asserts array_namespace(zero_gradient) is jax.numpy (namespace identity) for JAX's float0 array, a "
     "JAX-internal NumPy array that SciPy's lookup special-cases"),
    Known(r"TestArrayAPI::test_strict_checks\[", frozenset({"numpy"}),
     "expects xp_assert_* to tell a 0-d array from a NumPy scalar, which SciPy checks only when is_numpy(xp)"),
    Known(r"TestArrayAPI::test_check_scalar(_no_0d)?\[", frozenset({"numpy"}),
     "calls xp.float64(1.0): NumPy's dtype-as-constructor, not in the standard (a dtype is not callable)"),
    Known(r"(TestSkewTest|TestKurtosisTest|TestPearsonr)::", frozenset({"jax.numpy", "dask.array"}), _SPECIAL),
    Known(r"TestZscore::test_zscore(_nan_omit_with)?_ddof\[", frozenset({"dask.array"}),
     "array-api-extra's apply_where maps over dask chunks only when is_dask_namespace(xp); its generic path's "
     "boolean-mask indexing raises IndexError inside dask"),
]


def backend_of(nodeid: str) -> str:
    """The ``xp`` fixture's backend in a test id, ``"none"`` for a test without it."""
    m = re.search(r"[\[-](numpy|torch|jax\.numpy|dask\.array|cupy)[\]-]", nodeid)
    return m.group(1) if m else "none"


def reason(nodeid: str) -> str | None:
    """The reason a failure of ``nodeid`` with unarray's namespace is not unarray's, or None."""
    return runner.reason(KNOWN, backend_of, nodeid)


def run(*, plugin: bool, full: bool = False, gpu: bool = False) -> dict[str, Any]:
    """Run the subset (or the full set) in one subprocess; the report: outcomes by test id and namespaces.

    ``gpu=True`` (the suite's GPU run) adds CuPy to SciPy's ``xp`` fixture.
    """
    files, keyword = FULL if full else SUBSET
    backends = [*BACKENDS, *(["cupy"] if gpu else [])]
    return runner.run("scipy", files, plugin="tests.client.scipy_plugin", ours=plugin,
                      env={"SCIPY_ARRAY_API": json.dumps(backends)}, keyword=keyword)


def counts(report: dict[str, Any]) -> dict[str, collections.Counter[str]]:
    """Outcomes per backend."""
    return runner.counts(report, backend_of)


if __name__ == "__main__":
    full, gpu = "--full" in sys.argv, "--gpu" in sys.argv
    runs = {"unarray": run(plugin=True, full=full, gpu=gpu), "normal": run(plugin=False, full=full, gpu=gpu)}
    if "--dump" in sys.argv:  # both runs' outcomes by test id, for reading the failures
        Path(sys.argv[sys.argv.index("--dump") + 1]).write_text(json.dumps(runs, indent=1))
    print(runner.table(runs, (*BACKENDS, *(("cupy",) if gpu else ())), KNOWN, backend_of))
