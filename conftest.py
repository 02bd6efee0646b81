"""Collection rules for the doctest run over the package (``--doctest-modules``).

A backend module imports its framework at the top (the rule of ``unarray/_backends``), so
collecting it for doctests on a machine without that framework would stop the whole run with
``ModuleNotFoundError``. Such a module is skipped at collection, decided from
``importlib.util.find_spec`` only: nothing optional is imported while collecting.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# Backend module (file stem) -> the distributions it imports at the top.
_NEEDS = {
    "cupy": ("cupy",),
    "torch": ("torch",),
    "attention_torch": ("torch",),
    "jax": ("jax",),
    "attention_jax": ("jax",),
    "tensorflow": ("tensorflow",),
    "numba": ("numba",),
}
_BACKENDS = Path(__file__).parent / "unarray" / "_backends"


def _needs(path: Path) -> tuple[str, ...]:
    if path.stem.startswith("_tensorflow"):
        return ("tensorflow",)
    return _NEEDS.get(path.stem, ())


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    path = Path(collection_path)
    if path.suffix != ".py" or path.parent.resolve() != _BACKENDS.resolve():
        return None
    if any(importlib.util.find_spec(name) is None for name in _needs(path)):
        return True
    return None
