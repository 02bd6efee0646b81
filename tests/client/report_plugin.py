"""pytest plugin: the report of a client's test run (every test's outcome, the namespaces it got).

Loaded with ``-p tests.client.report_plugin`` next to a client's lookup plugin
(:mod:`tests.client.scipy_plugin`, :mod:`tests.client.sklearn_plugin`), which counts in ``SEEN`` each
unarray namespace it returns. With ``UA_CLIENT_REPORT=path`` the run writes a JSON report there:
``outcomes`` (test id below the client's package -> outcome), ``messages`` (test id -> its error's
line, for failures), ``namespaces`` (backend -> lookups
answered) and ``rebound`` (client modules whose lookup the plugin replaced). With ``UA_CLIENT_SELECT``
set, only the collected tests whose id matches that regular expression run (the others are deselected,
so a subset can name tests that ``-k`` cannot spell: ``check_array_api_input(array_namespace=torch,...)``).
"""

from __future__ import annotations

import collections
import json
import os
import re
from typing import Any

import pytest

SEEN: collections.Counter[str] = collections.Counter()
STATE: dict[str, Any] = {"rebound": 0}
_OUTCOMES: dict[str, str] = {}
_MESSAGES: dict[str, str] = {}
_PACKAGE = re.compile(r"(scipy|sklearn)/.*")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    select = os.environ.get("UA_CLIENT_SELECT")
    if not select:
        return
    pattern = re.compile(select)
    keep = [item for item in items if pattern.search(item.nodeid)]
    config.hook.pytest_deselected(items=[item for item in items if not pattern.search(item.nodeid)])
    items[:] = keep


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # One outcome per test: the call's, or the setup's where setup skipped or failed; a teardown error wins.
    m = _PACKAGE.search(report.nodeid)
    nodeid = m.group(0) if m else report.nodeid
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    elif report.failed:
        outcome = "failed" if report.when == "call" else "error"
    else:
        outcome = report.outcome
    if report.when == "call" or outcome != "passed":
        _OUTCOMES[nodeid] = outcome
    if report.failed:  # the error's own line, for reading a failure's cause from the report
        crash = getattr(report.longrepr, "reprcrash", None)
        _MESSAGES[nodeid] = (crash.message if crash is not None else str(report.longrepr))[:400]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("UA_CLIENT_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump({"outcomes": _OUTCOMES, "messages": _MESSAGES, "namespaces": dict(SEEN),
                       "rebound": STATE["rebound"]}, f)
