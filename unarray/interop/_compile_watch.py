"""Run a hook right after a library's tracer module is imported, without importing the library.

With the C ``ua.to``, a tracer that runs Python (torch.compile) must know its Python polyfill before it
traces a call to it, but importing the tracer eagerly costs seconds. A one-shot import hook registers
the polyfill when the tracer itself is imported (or at once if it is loaded already); the module is the
library's fact (``Library.tracer_module``).
"""

from __future__ import annotations

import importlib.machinery
import sys
from typing import Any

from unarray import _backends

__all__ = ["install"]


def _register(lib: str, to: Any, traced_to: Any) -> None:
    try:
        _backends.get(lib).register_traced_to(to, traced_to)
    except Exception:  # noqa: BLE001 - a torch without substitute_in_graph: ua.to breaks the graph there
        pass


class _Watch:
    def __init__(self, lib: str, module: str, to: Any, traced_to: Any) -> None:
        self.lib, self.module, self.to, self.traced_to = lib, module, to, traced_to

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != self.module:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run, lib, to, traced_to = spec.loader.exec_module, self.lib, self.to, self.traced_to

        def exec_module(module: Any) -> None:
            run(module)
            _register(lib, to, traced_to)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(to: Any, traced_to: Any) -> None:
    """Register ``traced_to`` as what a library's tracer traces in place of ``to`` (the C ua.to), now or once
    the tracer's module (its Library record's ``tracer_module``) is imported."""
    for lib in _backends.LIBRARIES.values():
        module = lib.tracer_module
        if not module:
            continue
        if module in sys.modules:
            _register(lib.name, to, traced_to)
        elif not any(isinstance(f, _Watch) and f.module == module for f in sys.meta_path):
            sys.meta_path.insert(0, _Watch(lib.name, module, to, traced_to))
