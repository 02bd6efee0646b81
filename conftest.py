"""Collection rules for the doctest run over the package (``--doctest-modules``).

A backend module imports its framework at the top (the rule of ``unarray/_backends``), so
collecting it for doctests on a machine without that framework would stop the whole run with
``ModuleNotFoundError``. Such a module is skipped at collection, decided from
``importlib.util.find_spec`` only: nothing optional is imported while collecting.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_FRAMEWORKS = ("tensorflow", "cupy", "torch", "jax", "numba", "dask", "triton")
# Packages whose modules import a framework at the top: the backends, and the GPU kernels (_kernels).
_FRAMEWORK_DIRS = tuple((Path(__file__).parent / "unarray" / d).resolve() for d in ("_backends", "_kernels"))


# A Triton kernel module imports torch too.
_ALSO = {"triton": ("torch",)}


def _needs(path: Path) -> tuple[str, ...]:
    # A backend or kernel module is named after the frameworks it imports (torch.py, attention_torch.py,
    # _torch_precision.py, _tensorflow_ops.py, transpose_triton.py, ...).
    named = [name for name in _FRAMEWORKS if name in path.stem]
    return tuple(dict.fromkeys(n for name in named for n in (name, *_ALSO.get(name, ()))))


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    path = Path(collection_path)
    if path.suffix != ".py" or path.parent.resolve() not in _FRAMEWORK_DIRS:
        return None
    if any(importlib.util.find_spec(name) is None for name in _needs(path)):
        return True
    return None
