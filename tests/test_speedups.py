"""ua.to's C hot path (unarray/_speedups.c): built, equivalent to the Python path, leak-free."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import unarray as ua
from unarray import _handoff, interop

pytestmark = pytest.mark.usefixtures("fresh_handoff")
PURE = bool(os.environ.get("UNARRAY_PURE_PYTHON"))
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(PURE, reason="UNARRAY_PURE_PYTHON=1 asks for the Python path")
def test_c_hot_path_is_built_and_is_ua_to() -> None:
    # pip builds the extension wherever a C compiler is found (CI has one): ua.to is then the C function.
    assert interop._speedups is not None
    assert inspect.isbuiltin(ua.to) and ua.to is interop.to
    assert str(inspect.signature(ua.to)) == "(x, backend, *, device=None, copy=None)"
    assert ua.to.__module__ == "unarray.interop" and ua.to.__doc__.startswith("Hand ``x`` to another library")


def test_python_path_passes_the_handoff_suite() -> None:
    # The same handoff, tracing and doc tests on the pure-Python path (a machine with no C compiler).
    if PURE:
        pytest.skip("already on the Python path")
    env = dict(os.environ, UNARRAY_PURE_PYTHON="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "tests/test_interop.py", "tests/test_tracing.py", "tests/test_speedups.py::test_counts_and_errors",
           "unarray/interop.py"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_counts_and_errors() -> None:
    # What the C function does itself: the route, keywords, counters, and handing the rest to Python.
    torch = pytest.importorskip("torch")
    x = np.arange(6.0).reshape(2, 3)
    ua.stats(reset=True)
    t = ua.to(x, "torch")
    assert t.data_ptr() == x.ctypes.data
    assert ua.to(x, "torch", device=None, copy=None).data_ptr() == x.ctypes.data  # None keywords: the route
    assert ua.stats()["zero_copy"] == 2
    assert ua.to(x, "torch", copy=True).data_ptr() != x.ctypes.data  # a keyword: the Python path
    assert ua.stats(reset=True)["copies"] == 1 and ua.stats()["handoffs"] == 0
    # The cached route: the first handoff converts, the second stores, the third is a hit.
    if _handoff.importlib.util.find_spec("jax"):
        t = torch.arange(6.0)
        views = [ua.to(t, "jax") for _ in range(3)]
        assert views[2] is views[1] and ua.stats()["cache_hits"] == 1
    # Errors come from the Python path, unchanged.
    with pytest.raises(TypeError, match="positional"):
        ua.to(x, "torch", "cpu")  # type: ignore[misc]
    with pytest.raises(ua.BackendNotAvailableError, match="unknown backend"):
        ua.to(x, ["torch"])  # an unhashable backend
    with pytest.raises(ua.HandoffError, match=r"ua\.matmul \[torch\].*negative strides"):
        ua.to(np.arange(3.0)[::-1], "torch", copy=False, _op="matmul")
    with pytest.raises(TypeError):
        ua.to(x)  # type: ignore[call-arg]
    # A refused native call (negative strides) is one counted copy on the route.
    ua.stats(reset=True)
    r = ua.to(np.arange(3.0)[::-1], "torch")
    assert r.tolist() == [2.0, 1.0, 0.0] and ua.stats()["copies"] == 1


def test_no_reference_leaks() -> None:
    # A leaked reference in the C path would grow these counts by one per call.
    torch = pytest.importorskip("torch")
    x = np.ones((4, 4), np.float32)
    t = torch.ones(4, 4)
    targets = [(t, "numpy")]
    if _handoff.importlib.util.find_spec("jax"):
        targets.append((t, "jax"))  # a cached route: the loop below is all cache hits
    ua.to(x, "torch")
    for src, dst in targets:
        for _ in range(3):
            ua.to(src, dst)
    views = [ua.to(src, dst) for src, dst in targets]  # a leaked cache hit would grow the view's count
    before = (sys.getrefcount(x), sys.getrefcount(t), sys.getrefcount("torch"), *map(sys.getrefcount, views))
    for _ in range(1000):
        ua.to(x, "torch")
        ua.to(x, "torch", device=None, _op="to")
        for src, dst in targets:
            ua.to(src, dst)
    assert (sys.getrefcount(x), sys.getrefcount(t), sys.getrefcount("torch"), *map(sys.getrefcount, views)) == before
