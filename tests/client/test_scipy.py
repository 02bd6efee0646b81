"""SciPy's own array-API tests, run with its namespace lookup answering ``ua.array_namespace``.

A real client's generic code (SciPy's stats, cluster, special and array-API helpers) runs through
unarray's namespace bound to NumPy, torch, JAX and dask, in one pytest subprocess
(:mod:`tests.client.scipy_run`). Every failure must be listed in ``KNOWN`` with the reason it is not
unarray's; a listed entry that no longer fails is reported too, so the list stays current.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from tests.client import runner, scipy_run

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("scipy", "torch", "jax", "dask")),
    reason="needs scipy, torch, jax and dask")


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return scipy_run.run(plugin=True, gpu=runner.gpu_run())


def test_every_failure_is_known_and_not_unarrays(report: dict[str, Any]) -> None:
    assert runner.unexplained(scipy_run.KNOWN, scipy_run.backend_of, report) == [], report["tail"]
    assert not [n for n, o in report["outcomes"].items() if o == "xpassed"]


def test_each_known_failure_still_fails(report: dict[str, Any]) -> None:
    # An entry for tests outside the subset is checked by the full run (docs/clients.md).
    assert [e.pattern for e in runner.stale(scipy_run.KNOWN, scipy_run.backend_of, report)] == []


def test_scipy_saw_unarrays_namespace_on_every_backend(report: dict[str, Any]) -> None:
    assert report["rebound"] > 0  # SciPy modules that had bound the original lookup now hold unarray's
    assert set(report["namespaces"]) >= {"numpy", "torch", "jax", "dask"}
    table = scipy_run.counts(report)
    for b in scipy_run.BACKENDS:
        assert table[b]["passed"] >= 100, (b, dict(table[b]))
        assert report["namespaces"][b.partition(".")[0]] >= table[b]["passed"]
