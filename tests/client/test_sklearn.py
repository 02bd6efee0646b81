"""scikit-learn's own array-API tests, run with its namespace lookup answering ``ua.array_namespace``.

A second real client: with ``set_config(array_api_dispatch=True)``, scikit-learn's estimators (their
array-API estimator checks), metrics and helpers run through unarray's namespace bound to NumPy and
torch (CuPy and torch on CUDA too in the suite's GPU run, ``--devices gpu``), in one pytest subprocess
(:mod:`tests.client.sklearn_run`). Every failure must be listed in ``KNOWN`` with its reason; a listed
entry that no longer fails fails here, so the list stays current.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from tests.client import runner, sklearn_run

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("sklearn", "scipy", "torch")),
    reason="needs scikit-learn, scipy and torch")


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return sklearn_run.run(plugin=True, gpu=runner.gpu_run())


def test_every_failure_is_known(report: dict[str, Any]) -> None:
    assert runner.unexplained(sklearn_run.KNOWN, sklearn_run.backend_of, report) == [], report["tail"]


def test_each_known_failure_still_fails(report: dict[str, Any]) -> None:
    assert [e.pattern for e in runner.stale(sklearn_run.KNOWN, sklearn_run.backend_of, report)] == []


def test_scikit_learn_saw_unarrays_namespace_on_every_backend(report: dict[str, Any]) -> None:
    assert report["rebound"] > 0  # scikit-learn modules that held array-api-compat's lookup now hold unarray's
    table = runner.counts(report, sklearn_run.backend_of)
    for b in sklearn_run.CPU:
        assert table[b]["passed"] >= 100, (b, dict(table[b]))
        assert report["namespaces"][b] >= table[b]["passed"]
