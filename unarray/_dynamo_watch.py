"""Run a hook right after ``torch._dynamo`` is imported, without importing torch.

With the C ``ua.to``, torch.compile must know its Python polyfill before it traces a call to it,
but importing torch._dynamo eagerly costs about 2 s. A one-shot import hook registers the polyfill
when torch.compile itself imports torch._dynamo (or at once if it is loaded already).
"""

from __future__ import annotations

import importlib.machinery
import sys
from typing import Any

__all__ = ["install"]


def _register() -> None:
    try:
        from unarray._backends import torch as torch_backend

        torch_backend.register_traced_to()
    except Exception:  # noqa: BLE001 - a torch without substitute_in_graph: ua.to breaks the graph there
        pass


class _Watch:
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch._dynamo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _register()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install() -> None:
    if "torch._dynamo" in sys.modules:
        _register()
    elif not any(isinstance(f, _Watch) for f in sys.meta_path):
        sys.meta_path.insert(0, _Watch())
