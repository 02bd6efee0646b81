"""The one watch on torch's compiler: hooks run right after ``torch._dynamo`` is imported, without importing it
(seconds), so that what torch.compile must learn before it traces is registered as it loads. Imports no framework:
the layers above reach it through the registry (``Library.tracer_watch``, ``unarray._backends.after_tracer``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["MODULE", "after_import"]

MODULE = "torch._dynamo"
_HOOKS: list[Callable[[], None]] = []


def after_import(hook: Callable[[], None]) -> None:
    """Run ``hook()`` once torch._dynamo is imported: now where it is loaded, else right after its import."""
    if MODULE in sys.modules:
        hook()
        return
    _HOOKS.append(hook)
    if not any(isinstance(f, _Watch) for f in sys.meta_path):
        sys.meta_path.insert(0, _Watch())


class _Watch:
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != MODULE:
            return None
        import importlib.util  # (torch has imported it by now; import unarray need not)

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)  # (what the other finders give: another tool's wrapped loader)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            while _HOOKS:  # (a hook may register another: it runs too, in order)
                _HOOKS.pop(0)()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
