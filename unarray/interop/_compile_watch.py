"""Run a hook right after ``torch._dynamo`` is imported, without importing torch.

With the C ``ua.to``, torch.compile must know its Python polyfill before it traces a call to it,
but importing torch._dynamo eagerly costs about 2 s. A one-shot import hook registers the polyfill
when torch.compile itself imports torch._dynamo (or at once if it is loaded already).
"""

from __future__ import annotations

import importlib.machinery
import sys
from typing import Any

from unarray import _backends

__all__ = ["install"]


def _register(to: Any, traced_to: Any) -> None:
    try:
        _backends.get("torch").register_traced_to(to, traced_to)
    except Exception:  # noqa: BLE001 - a torch without substitute_in_graph: ua.to breaks the graph there
        pass


class _Watch:
    def __init__(self, to: Any, traced_to: Any) -> None:
        self.to, self.traced_to = to, traced_to

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch._dynamo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run, to, traced_to = spec.loader.exec_module, self.to, self.traced_to

        def exec_module(module: Any) -> None:
            run(module)
            _register(to, traced_to)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(to: Any, traced_to: Any) -> None:
    """Register ``traced_to`` as what torch.compile traces in place of ``to`` (the C ua.to), now or once
    torch._dynamo is imported."""
    if "torch._dynamo" in sys.modules:
        _register(to, traced_to)
    elif not any(isinstance(f, _Watch) for f in sys.meta_path):
        sys.meta_path.insert(0, _Watch(to, traced_to))
