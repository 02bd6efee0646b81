"""Register a C callable's Python polyfill with each library's tracer as the tracer loads, without importing it.

With the C ``ua.to`` and the C hot calls of the front end (unarray/_hot.py), a tracer that runs Python
(torch.compile) must know each one's Python polyfill before it traces a call to it, but importing the
tracer eagerly costs seconds. Each library that has such a tracer declares one watch on it (``Library.tracer_watch``,
reached through the registry's ``after_tracer``); the polyfills are registered through it when the tracer itself
is imported, or at once if it is loaded already.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from unarray import _backends, _lookup

__all__ = ["install"]


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


# the libraries whose watch has the lookup's hook already
_WATCHED: set[str] = set()


def install(to: Any, traced_to: Any, how: str = "register_traced_to") -> None:
    """Register ``traced_to`` as what a library's tracer traces in place of ``to`` (a C callable: ua.to, a hot
    front-end call), through the backend's method ``how``, now or once the tracer is imported (the library's
    declared watch)."""
    for lib in _backends.LIBRARIES.values():
        if not lib.tracer_watch:
            continue
        if lib.name not in _WATCHED:
            _WATCHED.add(lib.name)
            # Note: the library's array types registered before its tracer's first trace, which would otherwise
            # register them itself and guard on the registry as it was (the function compiles again next call).
            _backends.after_tracer(lib.name, _lookup.register_imported)
        _backends.after_tracer(lib.name, functools.partial(_register, lib.name, to, traced_to, how))
