"""Collection rules for the doctest run over the package (``--doctest-modules``).

A backend module imports its framework at the top (the rule of ``unarray/_backends``), so
collecting it for doctests on a machine without that framework would stop the whole run with
``ModuleNotFoundError``. Such a module is skipped at collection, decided from
``importlib.util.find_spec`` only: nothing optional is imported while collecting.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_FRAMEWORKS = ("tensorflow", "cupy", "torch", "jax", "numba", "dask", "mlx", "triton")
# Packages whose modules import a framework at the top: the backends, and the GPU kernels (_kernels).
_FRAMEWORK_DIRS = tuple((Path(__file__).parent / "unarray" / d).resolve() for d in ("_backends", "_kernels"))


# A Triton kernel module imports torch too.
_ALSO = {"triton": ("torch",)}


def _needs(rel: Path) -> tuple[str, ...]:
    # A backend or kernel module is named after the frameworks it imports (attention_jax.py, dask_chunks.py,
    # transpose_triton.py, ...), or sits in a backend's own package, named after its framework
    # (torch/precision.py, tensorflow/linalg.py); ``rel`` is the path below _backends or _kernels.
    named = [name for name in _FRAMEWORKS if any(name in part for part in rel.with_suffix("").parts)]
    return tuple(dict.fromkeys(n for name in named for n in (name, *_ALSO.get(name, ()))))


def _below_framework_dir(path: Path) -> Path | None:
    resolved = path.resolve()
    for d in _FRAMEWORK_DIRS:
        if resolved != d and resolved.is_relative_to(d):
            return resolved.relative_to(d)
    return None


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    path = Path(collection_path)
    rel = _below_framework_dir(path) if path.suffix == ".py" or path.is_dir() else None
    if rel is None:
        return None
    if any(importlib.util.find_spec(name) is None for name in _needs(rel)):
        return True
    return None
