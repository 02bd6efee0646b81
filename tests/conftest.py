"""One backend fixture for the whole suite.

Every installed backend runs by default; ``--backends numpy,torch`` narrows
the run. ``--devices gpu`` (or ``UNARRAY_TEST_DEVICE=gpu``) runs the same
tests on torch-CUDA, CuPy and JAX-GPU arrays; GPU-only backends are skipped
cleanly where no GPU is visible.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from tests._support import BACKEND_PARAMS, KNOWN_FAILURES, ONLY_IN, TestBackend, make_backend


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--backends", default=os.environ.get("UNARRAY_TEST_BACKENDS", ""),
                     help="comma-separated backends to test (default: every installed one)")
    parser.addoption("--devices", default=os.environ.get("UNARRAY_TEST_DEVICE", "cpu"),
                     help="'cpu' (default) or 'gpu': where the backend fixture puts arrays")


def pytest_configure(config: pytest.Config) -> None:
    # Modules that read the device class at import (and child processes) see the one this run asks for.
    os.environ["UNARRAY_TEST_DEVICE"] = config.getoption("--devices")


def _selected(config: pytest.Config, module: str) -> list[str]:
    wanted = [b.strip() for b in config.getoption("--backends").split(",") if b.strip()]
    device = config.getoption("--devices")
    names = [p for p in BACKEND_PARAMS[device] if not wanted or p.partition("-")[0] in wanted]
    return [p for p in names if module in ONLY_IN.get(p.partition("-")[0], (module,))]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        module = metafunc.module.__name__.rpartition(".")[2]
        metafunc.parametrize("backend", _selected(metafunc.config, module), indirect=True)


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


@pytest.fixture
def fresh_handoff() -> Iterator[None]:
    """An empty handoff cache and zeroed ``ua.stats()`` before the test, the cache emptied after it."""
    import unarray as ua
    from unarray.interop import _cache

    _cache.clear()
    ua.stats(reset=True)
    yield
    _cache.clear()
