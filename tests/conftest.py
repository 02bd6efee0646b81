"""One backend fixture for the whole suite.

Every installed backend runs by default; ``--backends numpy,torch`` narrows the run. ``--devices gpu`` (or
``UNARRAY_TEST_DEVICE=gpu``) runs the same tests on the GPU's arrays instead (torch-CUDA, CuPy, JAX-GPU, and
Numba's CUDA arrays in the handoff tests); a backend whose device is not visible is skipped cleanly.

- ``backend``: one parameter per backend of the run's device class (``BACKEND_PARAMS`` in ``tests/_support.py``).
  A handoff-only library (``Library.handoff_only``: its arrays are handed over, never computed on) joins only
  the tests marked ``handoff``. A backend that fails a test known to fail runs it as a strict xfail
  (``KNOWN_FAILURES``).
- ``cuda``: the CUDA libraries of a ``--devices gpu`` run, for tests that need CUDA arrays of several libraries
  at once (``cuda("cupy")`` gives the module, or skips where it is missing or sees no device). A CPU run
  deselects the tests that take it: they are GPU tests, not skips.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests._support import BACKEND_PARAMS, GPU_PARAMS, KNOWN_FAILURES, TestBackend, compute_params, make_backend


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--backends", default=os.environ.get("UNARRAY_TEST_BACKENDS", ""),
                     help="comma-separated backends to test (default: every installed one)")
    parser.addoption("--devices", default=os.environ.get("UNARRAY_TEST_DEVICE", "cpu"),
                     help="'cpu' (default) or 'gpu': where the backend fixture puts arrays")


def pytest_configure(config: pytest.Config) -> None:
    # Modules that read the device class at import (and child processes) see the one this run asks for.
    os.environ["UNARRAY_TEST_DEVICE"] = config.getoption("--devices")


def _selected(config: pytest.Config, handoff: bool) -> list[str]:
    wanted = [b.strip() for b in config.getoption("--backends").split(",") if b.strip()]
    device = config.getoption("--devices")
    names = BACKEND_PARAMS[device] if handoff else compute_params(device)
    return [p for p in names if not wanted or p.partition("-")[0] in wanted]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        handoff = metafunc.definition.get_closest_marker("handoff") is not None
        metafunc.parametrize("backend", _selected(metafunc.config, handoff), indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--devices") == "gpu":
        return
    # Tests of CUDA arrays exist in a --devices gpu run only: a CPU run leaves them out rather than skip them.
    gpu = [item for item in items if "cuda" in getattr(item, "fixturenames", ())]
    if gpu:
        config.hook.pytest_deselected(items=gpu)
        items[:] = [item for item in items if "cuda" not in getattr(item, "fixturenames", ())]


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> TestBackend:
    name = request.param
    module = name.partition("-")[0]
    where = (module, request.module.__name__.rpartition(".")[2])
    reason = KNOWN_FAILURES.get((*where, request.function.__name__)) or KNOWN_FAILURES.get((*where, request.node.name))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    tb = make_backend(name)
    if tb is None:
        pytest.skip(f"{name}: no such device here")
    return tb


@pytest.fixture(scope="session")
def cuda() -> Callable[[str], Any]:
    """``cuda(name)``: the module of CUDA library ``name`` (torch, jax, cupy or numba) in a ``--devices gpu``
    run; the test skips where that library is missing or sees no device."""

    def need(name: str) -> Any:
        pytest.importorskip(name)
        tb = make_backend(GPU_PARAMS[name])
        if tb is None:
            pytest.skip(f"no CUDA device visible to {name}")
        return tb.module

    return need


@pytest.fixture
def fresh_handoff() -> Iterator[None]:
    """An empty handoff cache and zeroed ``ua.stats()`` before the test, the cache emptied after it."""
    import unarray as ua
    from unarray.interop import _cache

    _cache.clear()
    ua.stats(reset=True)
    yield
    _cache.clear()
