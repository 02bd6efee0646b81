"""What a backend reaches above itself, by name, without importing it: another backend, another library's
handoff declaration, the type lookup's cache and the inspection API.

A backend imports nothing above the registry (DESIGN.md section 7), yet torch's blocked-attention route borrows
torch's kernels, TensorFlow's namespace assembles itself through its backend, and torch.compile must know NumPy's
array type before it traces. The layers above install their function here when they are imported (the registry
``get`` and ``handoff``, the lookup ``resolve_type``, the front end ``namespace_info``), so the import graph has
no edge from a backend up to them and a backend still reaches them at call time. Every such layer is imported by
``import unarray`` before any backend runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from unarray._backends._base import Backend
    from unarray._backends._handoff import Handoff

__all__ = ["get", "handoff", "namespace_info", "resolve_type"]


def _missing(what: str) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        raise RuntimeError(f"unarray's {what} is not installed: import unarray first")

    return call


# The registry's unarray._backends.get: backend ``name``, loaded on first use.
get: Callable[[str], Backend] = _missing("registry")
# The registry's unarray._backends.handoff: library ``name``'s handoff declaration.
handoff: Callable[[str], Handoff] = _missing("registry")
# The lookup's unarray._lookup.resolve_type: the backend of an array type, cached for dispatch.
resolve_type: Callable[[type], Any] = _missing("type lookup")
# The front end's inspection API for backend ``name`` (a namespace's __array_namespace_info__).
namespace_info: Callable[[str], Any] = _missing("inspection API")
