"""The quality tools gate the suite: ruff (lint) and mypy (types) must be clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    pytest.importorskip("ruff", reason="ruff comes with the test extra (CI installs it)")
    r = _run(sys.executable, "-m", "ruff", "check", "unarray", "tests", "tools", "benchmarks")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy", reason="mypy comes with the test extra (CI installs it)")
    r = _run(sys.executable, "-m", "mypy")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
