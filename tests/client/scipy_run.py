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

_XP = r".*[\[-](numpy|torch|jax\.numpy|dask\.array|cupy)[\]-]"  # tests with SciPy's xp fixture
# File below scipy/ -> regular expression searched in the rest of the test id. The array-API helpers,
# k-means, the moment statistics and softmax (logsumexp's 1,600 cases run in the full set only, for the CI
# suite's time), and the xp tests of hierarchical clustering (array-api-extra's lazy_apply and nunique),
# the FFT, window functions and Savitzky-Golay filters (xpx.at), ndimage's Fourier filters and
# measurements (its NumPy delegation), and correlation, entropy and variation (xpx.apply_where, xpx.at).
_MORE = {"cluster/tests/test_hierarchy.py": _XP, "fft/tests/test_basic.py": _XP, "fft/tests/test_helper.py": _XP,
         "signal/tests/test_windows.py": _XP, "signal/tests/test_savitzky_golay.py": _XP,
         "ndimage/tests/test_fourier.py": _XP, "ndimage/tests/test_measurements.py": _XP,
         "stats/tests/test_correlation.py": _XP, "stats/tests/test_entropy.py": _XP,
         "stats/tests/test_variation.py": _XP}
SUBSET: dict[str, str] = {"_lib/tests/test_array_api.py": "TestArrayAPI", "cluster/tests/test_vq.py": "",
                          "stats/tests/test_stats.py": "TestMoments|TestSkew|TestKurtosis|TestZscore",
                          "special/tests/test_logsumexp.py": "TestSoftmax|TestLogSoftmax", **_MORE}
FULL: dict[str, str] = {"_lib/tests/test_array_api.py": "", "cluster/tests/test_vq.py": "",
                        "stats/tests/test_stats.py": "(?i:moment|skew|kurtosis|variation|zscore|test_array_api"
                                                     "|logsumexp|softmax)",
                        "special/tests/test_logsumexp.py": "", **_MORE}


def select(files: dict[str, str]) -> str:
    """The regular expression of the test ids run (``UA_CLIENT_SELECT``)."""
    return "|".join(f"scipy/{re.escape(f)}::.*(?:{pattern})" for f, pattern in files.items())


_ANY = frozenset(BACKENDS) | {"none"}
_LAZY = frozenset({"jax.numpy", "dask.array"})
_SPECIAL = ("scipy.special picks its JAX or dask implementation by is_jax(xp) / is_dask(xp) "
            "(special/_support_alternative_backends.py); for any other namespace it converts to NumPy with "
            "np.asarray, which a jitted JAX trace and SciPy's no-compute check on dask refuse")
_APPLY_WHERE = ("array-api-extra's apply_where maps over dask chunks only when is_dask_namespace(xp); its generic "
                "path's boolean-mask indexing and assignment fail inside dask on chunks of unknown size")
# (nodeid pattern, backends, reason[, error line pattern]): every failure with unarray's namespace, and why.
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
    Known(r"(TestSkewTest|TestKurtosisTest|TestPearsonr)::", _LAZY, _SPECIAL),
    Known(r"TestZscore::test_zscore(_nan_omit_with)?_ddof\[", frozenset({"dask.array"}), _APPLY_WHERE),
    Known(r"cluster/tests/test_hierarchy.py::", _LAZY,
          "array-api-extra's lazy_apply (SciPy's vendored copy) runs its NumPy kernel inside dask.map_blocks only "
          "when is_dask_namespace(xp) and inside jax.pure_callback only when is_jax_namespace(xp); for any other "
          "namespace it calls np.asarray on the inputs, which SciPy's no-compute check on dask and a jitted JAX "
          "trace refuse", r"dask\.compute|TracerArrayConversionError"),
    Known(r"cluster/tests/test_hierarchy.py::", frozenset({"jax.numpy"}),
          "array-api-extra's nunique calls xp.unique_counts(x, size=n) whenever x is a JAX array: jax.numpy's own "
          "keyword, assuming the namespace of a JAX array is jax.numpy (namespace identity)",
          r"ua\.unique_counts \[jax\]: unexpected keyword size="),
    Known(r"signal/tests/test_windows.py::.*(Kaiser|kaiser|test_array_as_window)", _LAZY,
          "the Kaiser windows call scipy.special.i0: " + _SPECIAL),
    Known(r"TestGetWindow::test_xp_default\[", frozenset({"numpy"}),
          "branches on is_numpy(xp): for any other namespace it asserts the window is not a NumPy array"),
    Known(r"TestVariation::test_(neg_inf_nan|combined_edge_cases|more_nan_policy_omit_tests)\[", frozenset({"numpy"}),
          "NumPy-only tests of nan_policy='omit': SciPy's axis_nan_policy decorator implements it (and warns of "
          "small samples) only when is_numpy(xp); other namespaces take its plain path"),
    Known(r"TestVariation::test_scalar\[", frozenset({"numpy"}),
          "NumPy-only test of a Python scalar input: SciPy asks xp.result_type(1.0, 1.0), Python scalars only, "
          "which the standard does not define (it needs an array or a dtype) and unarray refuses with DTypeError"),
    Known(r"(TestEntropy|TestVariation)::", frozenset({"dask.array"}), _APPLY_WHERE),
    Known(r"test_measurements.py::test_histogram03\[", frozenset({"numpy"}),
          "ndimage.histogram with several label indices returns a NumPy object array, which SciPy hands to "
          "xp.asarray: not a dtype of the standard, refused with unarray's DTypeError"),
    Known(r"test_measurements.py::test_standard_deviation07\[", frozenset({"torch"}),
          "branches on is_torch(xp): xfails torch's uint8 overflow (`value cannot be converted to type uint8`) "
          "only for torch's own namespace; through unarray's the same torch error is raised as ArgumentError"),
    Known(r"test_measurements.py::test_value_indices0\d\[", frozenset({"dask.array"}),
          "SciPy's xp_assert_equal computes dask's unknown chunk sizes only when is_dask(xp), so the shapes "
          "compared are (1,) and dask's (nan,)"),
    Known(r"TestChatterjeeXi::test_input_validation\[", frozenset({"jax.numpy"}),
          "branches on is_jax(xp): expects the out-of-bounds axis error for every namespace but jax.numpy's"),
]


def backend_of(nodeid: str) -> str:
    """The ``xp`` fixture's backend in a test id, ``"none"`` for a test without it."""
    m = re.search(r"[\[-](numpy|torch|jax\.numpy|dask\.array|cupy)[\]-]", nodeid)
    return m.group(1) if m else "none"


def reason(nodeid: str, message: str = "") -> str | None:
    """The reason listed for a failure of ``nodeid`` with error line ``message``, or None."""
    return runner.reason(KNOWN, backend_of, nodeid, message)


def run(*, plugin: bool, full: bool = False, gpu: bool = False) -> dict[str, Any]:
    """Run the subset (or the full set) in one subprocess; the report: outcomes by test id and namespaces.

    ``gpu=True`` (the suite's GPU run) adds CuPy to SciPy's ``xp`` fixture.
    """
    files = FULL if full else SUBSET
    backends = [*BACKENDS, *(["cupy"] if gpu else [])]
    return runner.run("scipy", files, plugin="tests.client.scipy_plugin", ours=plugin,
                      env={"SCIPY_ARRAY_API": json.dumps(backends)}, select=select(files))


def counts(report: dict[str, Any]) -> dict[str, collections.Counter[str]]:
    """Outcomes per backend."""
    return runner.counts(report, backend_of)


if __name__ == "__main__":
    full, gpu = "--full" in sys.argv, "--gpu" in sys.argv
    runs = {"unarray": run(plugin=True, full=full, gpu=gpu), "normal": run(plugin=False, full=full, gpu=gpu)}
    if "--dump" in sys.argv:  # both runs' outcomes by test id, for reading the failures
        Path(sys.argv[sys.argv.index("--dump") + 1]).write_text(json.dumps(runs, indent=1))
    print(runner.table(runs, (*BACKENDS, *(("cupy",) if gpu else ())), KNOWN, backend_of))
