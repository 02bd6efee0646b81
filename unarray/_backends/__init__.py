"""Backend registry: one module (or package) per framework, imported on first use only.

A backend module imports its framework at its top. It is imported here only
when an array of that framework has been seen (so the framework is already in
``sys.modules``) or when the caller names the backend.

The rule of this package: a backend holds only what differs from the generic
array-API path (``_base.Backend``), each deviation with a one-line reason; the
semantics live in the front end. The rest of unarray reaches a backend through
:func:`get`, never by importing its module, and a backend imports nothing above
it (no front end, no dispatch, no handoff but the path table): where it needs a
step of the handoff (a graph break, a dask join) the caller passes it in.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import TYPE_CHECKING, Any

from unarray._devices import Device, accelerator_free
from unarray._errors import BackendNotAvailableError

if TYPE_CHECKING:
    from unarray._backends._base import Backend

NAMES = ("numpy", "torch", "jax", "cupy", "tensorflow", "numba", "dask", "mlx")
_ALIASES = {"tf": "tensorflow", "np": "numpy", "jnp": "jax", "pytorch": "torch", "cp": "cupy"}
# Distribution name per backend, for installed-version reports.
DISTRIBUTIONS = {
    "numpy": ("numpy",),
    "torch": ("torch",),
    "jax": ("jax",),
    "cupy": ("cupy-cuda13x", "cupy-cuda12x", "cupy-rocm-6-0", "cupy"),
    "tensorflow": ("tensorflow", "tensorflow-cpu"),
    "numba": ("numba",),
    "dask": ("dask",),
    "mlx": ("mlx",),
}

# Backends whose devices are accelerators only (Numba's are CUDA GPUs; CuPy is asked even so: it says why not).
_ACCELERATOR_ONLY = frozenset({"numba"})

_LOADED: dict[str, Backend] = {}


def known_devices(name: str) -> tuple[Device, ...] | None:
    """The devices backend ``name`` would list, where they are known without importing its framework: on a
    machine whose OS shows no GPU or TPU driver, the CPU (none for a GPU-only backend). None where only the
    framework can tell, where it is imported already, and for NumPy (the default backend): then it is asked."""
    if name in _LOADED or name in sys.modules or name in ("numpy", "cupy") or not accelerator_free():
        return None
    return () if name in _ACCELERATOR_ONLY else (Device("cpu"),)


def get(name: str, op: str | None = None) -> Backend:
    try:
        return _LOADED[name]
    except KeyError:
        pass
    canonical = _ALIASES.get(name, name)
    if canonical not in NAMES:
        raise BackendNotAvailableError(f"unknown backend {name!r}; known: {', '.join(NAMES)}", op=op)
    if canonical in _LOADED:
        return _LOADED[canonical]
    try:
        module = _import(canonical)
    except ImportError as e:
        raise BackendNotAvailableError(
            f"backend {canonical!r} is not installed or failed to import ({e}); "
            f"install it with: {_install_hint(canonical)}",
            op=op,
            backend=canonical,
        ) from e
    backend: Backend = module.BACKEND
    _LOADED[canonical] = _LOADED[name] = backend
    return backend


def _install_hint(name: str) -> str:
    from unarray._install import hint

    return hint(name)


def _import(name: str) -> Any:
    # Note: import statements, not importlib: torch.compile's tracer runs an import statement for real
    # at trace time, so a first unarray call inside a compiled function (cold process) loads its backend;
    # importlib.import_module is a function it refuses to trace.
    if name == "torch":
        from unarray._backends import torch as torch_module

        return torch_module
    if name == "numpy":
        from unarray._backends import numpy as numpy_module

        return numpy_module
    if name == "jax":
        from unarray._backends import jax as jax_module

        return jax_module
    if name == "cupy":
        from unarray._backends import cupy as cupy_module

        return cupy_module
    if name == "tensorflow":
        from unarray._backends import tensorflow as tensorflow_module

        return tensorflow_module
    if name == "dask":
        from unarray._backends import dask as dask_module

        return dask_module
    if name == "mlx":
        from unarray._backends.mlx import backend as mlx_module

        return mlx_module
    from unarray._backends import numba as numba_module

    return numba_module


def loaded() -> dict[str, Backend]:
    return {k: v for k, v in _LOADED.items() if k in NAMES}


def installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None
