"""How to install each backend's framework: the hint printed where a backend is missing.

CPU builds first, so that a user without a GPU is never sent into a multi-GB CUDA download
(PyPI's default torch wheel on Linux bundles CUDA); the GPU build is named after it. unarray
itself is installed from its clone (``pip install -e .``); these commands add a framework to it.
The platform pages (``unarray.conformance.deviations.INSTALL``) take their CPU column from the same facts.
"""

from __future__ import annotations

from unarray import _backends

__all__ = ["CPU", "hint"]

# The CPU build of each framework ("" where the backend has no CPU build), from each backend package's facts.
CPU: dict[str, str] = {n: lib.install_cpu for n, lib in _backends.LIBRARIES.items()}


def hint(name: str) -> str:
    """The install command for backend ``name``: the CPU build, then the GPU build (one line)."""
    return _backends.install_hint(name)
