"""JAX's compiler under ``ua.jit``: ``jax.jit``, one fresh function per entry."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from unarray._backends._compiler import Compiler

__all__ = ["EAGER_OPTIONS", "JaxCompiler"]

# unarray's own eager programs compile without XLA's Triton GEMM: its autotuning is most of a float32-exact
# program's first compile on a GPU, and cuBLAS runs the same GEMMs as fast. Per program, never a global flag; top
# level only, since JAX refuses compiler options on a jit nested in the caller's.
EAGER_OPTIONS = {"xla_gpu_enable_triton_gemm": False}


class JaxCompiler(Compiler):
    label: ClassVar[str] = "jax.jit"
    flags: ClassVar[tuple[str, ...]] = ("inline", "keep_unused")
    bakes_state: ClassVar[bool] = True
    # backend= among others is checked at the first call only.
    checks_options_late: ClassVar[bool] = True

    def build(self, fn: Callable[..., Any], opts: dict[str, Any], *, device: Any, policy: str, nums: Sequence[int],
              names: Sequence[str], fullgraph: bool) -> Callable[..., Any]:
        import jax

        # A fresh function per cache entry: jax's trace cache is keyed on the function, and the
        # policy (read while tracing) differs between entries.
        @functools.wraps(fn)
        def traced(*a: Any, **k: Any) -> Any:
            return fn(*a, **k)

        return jax.jit(traced, static_argnums=nums or None, static_argnames=names or None, **opts)

    def shown(self, opts: dict[str, Any], *, fullgraph: bool, nums: Sequence[int],
              names: Sequence[str]) -> dict[str, Any]:
        if nums or names:
            return {"static_argnums": tuple(nums), "static_argnames": tuple(names), **opts}
        return dict(opts)
