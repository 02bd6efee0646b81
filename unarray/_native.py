"""The optional C extensions (``unarray.interop._speedups``: ``ua.to``'s hot path; ``unarray._gate``: the
precision switch's fast path; ``unarray._fast``: the front end's hot calls, unarray/_hot.py). pip builds them
where a C compiler is found; without them, or with ``UNARRAY_PURE_PYTHON=1``, the same steps run in Python."""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def pure_python_requested() -> bool:
    """Whether ``UNARRAY_PURE_PYTHON`` asks for the Python path (1, true, yes, on; not 0, false, no, off)."""
    return os.environ.get("UNARRAY_PURE_PYTHON", "").strip().lower() not in ("", "0", "false", "no", "off")


def load(name: str) -> ModuleType | None:
    """The C extension ``unarray.<name>`` (a dotted name: ``"interop._speedups"``), or None where it is not
    built or the Python path is asked for."""
    if pure_python_requested():
        return None
    try:
        return importlib.import_module(f"unarray.{name}")
    except ImportError:
        return None
