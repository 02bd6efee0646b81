"""pytest plugin: SciPy's namespace lookup answers with unarray's bound namespace.

Loaded with ``-p tests.client.scipy_plugin`` into a pytest run of SciPy's own tests (with
``SCIPY_ARRAY_API`` set). Before SciPy's conftest and test modules import it, SciPy's
``array_namespace`` is replaced, in every SciPy module that holds it, by a lookup that keeps SciPy's
own validation (sparse, masked and object arrays refused, lists coerced) and then answers
``ua.array_namespace`` of the arrays: SciPy's generic code, and its test fixture ``xp``, run on
unarray's namespace bound to NumPy, torch, JAX or dask. Importing this module patches nothing; only
pytest's hook does.

Load :mod:`tests.client.report_plugin` with it: it writes the run's report (every test's outcome, and
how many times SciPy's lookup returned unarray's namespace, per backend).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from tests.client import report_plugin

_STATE: dict[str, Any] = {}
VERSION = "2024.12"


def _lookup(original: Any) -> Any:
    import numpy as np
    from scipy._lib import array_api_compat as compat

    import unarray as ua

    # SciPy is written against 2024.12 (its conftest sets array-api-strict to it), whose devices() is a list its
    # devices fixture extends: it asks for that version, as a client written against an older one does.
    numpy_ns = ua.array_namespace(np.empty(0), api_version=VERSION)

    def array_namespace(*arrays: Any) -> Any:
        xp = original(*arrays)  # SciPy's own validation and coercion first: its errors stay its own
        if compat.is_numpy_namespace(xp):  # NumPy arrays, NumPy scalars, lists and Python scalars
            ns = numpy_ns
        elif compat.is_array_api_strict_namespace(xp):  # not a library unarray serves
            return xp
        else:
            ns = ua.array_namespace(*(a for a in arrays if compat.is_array_api_obj(a)), api_version=VERSION)
        report_plugin.SEEN[ns.backend] += 1
        return ns

    array_namespace.__wrapped__ = original  # type: ignore[attr-defined]
    return array_namespace


def _rebind() -> int:
    # Every SciPy module that bound the original at its import (``from ... import array_namespace``).
    original, ours, n = _STATE["original"], _STATE["ours"], 0
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] == "scipy" and getattr(module, "array_namespace", None) is original:
            module.array_namespace = ours
            n += 1
    return n


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    # Before SciPy's conftest.py, which binds array_namespace at its import.
    import scipy._lib._array_api  # noqa: F401 - imports the override and array-api-extra's vendored copy
    import scipy._lib._array_api_override as override

    if not override.SCIPY_ARRAY_API:
        raise pytest.UsageError("tests.client.scipy_plugin needs SCIPY_ARRAY_API set")
    if os.environ.get("UA_CLIENT_PLUGIN") == "0":  # SciPy's normal namespace: only the report is written
        return
    _STATE["original"] = override.array_namespace
    _STATE["ours"] = _lookup(override.array_namespace)
    report_plugin.STATE["rebound"] += _rebind()


def pytest_collection_finish(session: pytest.Session) -> None:
    if "ours" in _STATE:
        report_plugin.STATE["rebound"] += _rebind()  # a module that imported it by another path before the hook ran
