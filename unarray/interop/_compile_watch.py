"""Run a hook right after a library's tracer module is imported, without importing the library.

With the C ``ua.to`` and the C hot calls of the front end (unarray/_hot.py), a tracer that runs Python
(torch.compile) must know each one's Python polyfill before it traces a call to it, but importing the
tracer eagerly costs seconds. A one-shot import hook registers the polyfills when the tracer itself is
imported (or at once if it is loaded already); the module is the library's fact (``Library.tracer_module``).
"""

from __future__ import annotations

import importlib.machinery
import sys
from typing import Any

from unarray import _backends, _lookup

__all__ = ["install"]


# (the C callable, its polyfill, the backend method that registers it), in the order installed
_PENDING: list[tuple[Any, Any, str]] = []


def _register(lib: str, to: Any, traced_to: Any, how: str) -> None:
    for dotted in _backends.LIBRARIES[lib].trace_types:  # types its tracer cannot resolve inside a trace
        top, *path = dotted.split(".")
        t = sys.modules.get(top)
        for name in path if t is not None else ():
            t = getattr(t, name)
        if isinstance(t, type):
            _lookup.resolve_type(t)
    try:
        getattr(_backends.get(lib), how)(to, traced_to)
    except Exception:  # noqa: BLE001 - a torch without substitute_in_graph: the C callable breaks the graph there
        pass


class _Watch:
    def __init__(self, lib: str, module: str) -> None:
        self.lib, self.module = lib, module

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != self.module:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run, lib = spec.loader.exec_module, self.lib

        def exec_module(module: Any) -> None:
            run(module)
            # Note: the library's array types registered before its tracer's first trace, which would otherwise
            # register them itself and guard on the registry as it was (the function compiles again next call).
            _lookup.register_imported()
            for to, traced_to, how in _PENDING:
                _register(lib, to, traced_to, how)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(to: Any, traced_to: Any, how: str = "register_traced_to") -> None:
    """Register ``traced_to`` as what a library's tracer traces in place of ``to`` (a C callable: ua.to, a hot
    front-end call), through the backend's method ``how``, now or once the tracer's module (its Library
    record's ``tracer_module``) is imported."""
    _PENDING.append((to, traced_to, how))
    for lib in _backends.LIBRARIES.values():
        module = lib.tracer_module
        if not module:
            continue
        if module in sys.modules:
            _register(lib.name, to, traced_to, how)
        elif not any(isinstance(f, _Watch) and f.module == module for f in sys.meta_path):
            sys.meta_path.insert(0, _Watch(lib.name, module))
