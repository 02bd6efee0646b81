"""pytest plugin: scikit-learn's namespace lookup answers with unarray's bound namespace.

Loaded with ``-p tests.client.sklearn_plugin`` (and :mod:`tests.client.report_plugin`) into a pytest
run of scikit-learn's own tests, with ``SCIPY_ARRAY_API=1``. scikit-learn's ``get_namespace`` (behind
``set_config(array_api_dispatch=True)``) asks its vendored array-api-compat's ``get_namespace``, and
its vendored array-api-extra asks that module's ``array_namespace``; the test helper
``_array_api_for_tests`` (the tests' ``xp``) imports the same function when called. Before
scikit-learn's conftest imports anything, those lookups are replaced by one that keeps
array-api-compat's validation (its errors, its refusal of mixed libraries) and then answers
``ua.array_namespace`` of the arrays: scikit-learn's estimators, metrics and helpers, and its tests'
array creation, run on unarray's namespace bound to NumPy, torch or CuPy. ``array_api_strict``
arrays keep their own namespace (not a library unarray serves). Importing this module patches
nothing; only pytest's hook does.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from tests.client import report_plugin


def _lookup(original: Any) -> Any:
    import numpy as np
    from sklearn.externals import array_api_compat as compat

    import unarray as ua

    numpy_ns = ua.array_namespace(np.empty(0))

    def get_namespace(*arrays: Any, **kwargs: Any) -> Any:
        xp = original(*arrays, **kwargs)  # array-api-compat's validation first: its errors stay its own
        if compat.is_numpy_namespace(xp):  # NumPy arrays and scalars
            ns = numpy_ns
        elif compat.is_array_api_strict_namespace(xp):  # not a library unarray serves
            return xp
        else:
            ns = ua.array_namespace(*(a for a in arrays if compat.is_array_api_obj(a)))
        report_plugin.SEEN[ns.backend] += 1
        return ns

    get_namespace.__wrapped__ = original  # type: ignore[attr-defined]
    return get_namespace


def _rebind(original: Any, ours: Any) -> int:
    # Every scikit-learn module holding the original under either of array-api-compat's two names.
    n = 0
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] != "sklearn":
            continue
        for attr in ("get_namespace", "array_namespace"):
            if getattr(module, attr, None) is original:
                setattr(module, attr, ours)
                n += 1
    return n


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    # Before scikit-learn's conftest.py; array-api-extra's copy binds the lookup at its import.
    import sklearn.externals.array_api_extra._lib._compat  # noqa: F401
    from sklearn.externals import array_api_compat

    if os.environ.get("SCIPY_ARRAY_API") != "1":
        raise pytest.UsageError("tests.client.sklearn_plugin needs SCIPY_ARRAY_API=1")
    if os.environ.get("UA_CLIENT_PLUGIN") == "0":  # array-api-compat's namespace: only the report is written
        return
    original = array_api_compat.get_namespace
    report_plugin.STATE["sklearn"] = (original, _lookup(original))
    report_plugin.STATE["rebound"] += _rebind(*report_plugin.STATE["sklearn"])


def pytest_collection_finish(session: pytest.Session) -> None:
    if "sklearn" in report_plugin.STATE:
        report_plugin.STATE["rebound"] += _rebind(*report_plugin.STATE["sklearn"])
