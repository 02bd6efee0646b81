"""Run scikit-learn's own array-API tests with its namespace lookup answering unarray's namespace.

``run(plugin=True)`` runs the subset in one pytest subprocess with ``set_config(array_api_dispatch=True)``
on NumPy and torch (and CuPy and torch on CUDA too with ``gpu=True``, the suite's GPU run), with
:mod:`tests.client.sklearn_plugin` loaded, and returns the report; ``run(plugin=False)`` runs the same
tests with scikit-learn's normal namespace (its vendored array-api-compat's), for comparison. ``KNOWN``
lists each failure with its reason. ``python -m tests.client.sklearn_run`` prints both runs' counts per
backend (``--gpu`` adds CuPy and CUDA; ``--dump path`` writes both runs' outcomes by test id).

scikit-learn's tests parametrize NumPy, array-api-strict, CuPy, torch (CPU, CUDA, MPS, XPU) and dpnp;
array-api-strict is not a library unarray serves, dpnp, MPS and XPU are not backends of unarray.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from tests.client import runner
from tests.client.runner import Known

CPU = ("numpy", "torch")
GPU = ("cupy", "torch-cuda")
# The estimator checks with every input of one library (the estimators whose tags declare array-API
# support: linear models, PCA, scalers, naive Bayes, LDA, Nystroem...), the metrics' array-API tests and
# the helpers' (sklearn/utils/_array_api.py) own tests.
FILES = ["tests/test_common.py", "metrics/tests/test_common.py", "utils/tests/test_array_api.py"]
_TESTS = (r"(check_array_api_input\(array_namespace=({ns})|metrics/tests/test_common.py::test_array_api"
          r"|utils/tests/test_array_api.py)")
_NOT_SERVED = r"array_api_strict|dpnp|mps|xpu"


def select(gpu: bool = False) -> str:
    """The regular expression of the test ids run (``UA_CLIENT_SELECT``)."""
    ns = "numpy,device_name=None|torch,device_name=cpu" + ("|cupy|torch,device_name=cuda" if gpu else "")
    off = _NOT_SERVED + ("" if gpu else "|cupy|cuda")
    return rf"^(?!.*({off})).*" + _TESTS.format(ns=ns)


# (nodeid pattern, backends, reason): every failure with unarray's namespace, and why.
KNOWN: list[Known] = [
    Known(r"test_array_api.py::test_get_namespace_and_device$", frozenset({"none"}),
          "asserts get_namespace(torch_tensor) is array_api_compat.torch: namespace identity"),
    Known(r"test_get_namespace_ndarray_or_similar_default_with_dispatch\[X0\]", frozenset({"none"}),
          "asserts get_namespace(numpy_array) is array_api_compat.numpy: namespace identity"),
    Known(r"test_array_api.py::test_move_to_sparse$", frozenset({"none"}),
          "branches on namespace identity: move_to passes a sparse matrix through only when "
          "_is_numpy_namespace(xp), which reads xp.__name__ ('numpy' or array-api-compat's)"),
    Known(r"test_check_fitted_attribute_with_non_array_input\[", frozenset({"none"}),
          "branches on namespace identity: check_same_namespace accepts a list or a sparse matrix after a "
          "NumPy fit only when _is_numpy_namespace(xp), which reads xp.__name__"),
    Known(r"test_array_api_classification_(mixed_string_numeric|string)_input\[", frozenset({"numpy", "torch", "none"}),
          "NumPy string data (dtype <U1) through xp.asarray: not a dtype of the standard, refused with unarray's "
          "DTypeError; scikit-learn supports string labels only on NumPy's own namespace"),
    Known(r"check_array_api_input\(array_namespace=torch,device_name=cuda", frozenset({"torch-cuda"}),
          "scikit-learn's test helper asks xp.backends.cuda.is_built(): torch's module attribute through the "
          "namespace it got, not a standard name"),
]


def backend_of(nodeid: str) -> str:
    """The backend of a test id's array inputs, ``"none"`` for a test without a namespace parameter."""
    m = re.search(r"(?:array_namespace=|[\[-])(numpy|torch|cupy)(?:,device_name=(\w+)|-(cpu|cuda)\b)?", nodeid)
    if m is None:
        return "none"
    return "torch-cuda" if m.group(1) == "torch" and "cuda" in (m.group(2), m.group(3)) else m.group(1)


def reason(nodeid: str, message: str = "") -> str | None:
    """The reason listed for a failure of ``nodeid`` with error line ``message``, or None."""
    return runner.reason(KNOWN, backend_of, nodeid, message)


def run(*, plugin: bool, gpu: bool = False) -> dict[str, Any]:
    """Run the subset in one subprocess; the report: outcomes and error lines by test id, and namespaces."""
    return runner.run("sklearn", FILES, plugin="tests.client.sklearn_plugin", ours=plugin,
                      env={"SCIPY_ARRAY_API": "1"}, select=select(gpu))


if __name__ == "__main__":
    gpu = "--gpu" in sys.argv
    runs = {"unarray": run(plugin=True, gpu=gpu), "normal": run(plugin=False, gpu=gpu)}
    if "--dump" in sys.argv:
        import json

        Path(sys.argv[sys.argv.index("--dump") + 1]).write_text(json.dumps(runs, indent=1))
    print(runner.table(runs, (*CPU, *(GPU if gpu else ())), KNOWN, backend_of))
