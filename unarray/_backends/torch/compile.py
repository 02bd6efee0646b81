"""torch's compiler under ``ua.jit``: ``torch.compile``, run inside unarray's precision switch.

The heavy part (the held call, the guard filter, Dynamo's graph-break counters) is in ``compiled``, imported when
the first entry is built: importing this module imports nothing of torch's compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from unarray._backends._compiler import Compiler

__all__ = ["TorchCompiler"]


def _compiled() -> Any:
    from unarray._backends.torch import compiled

    return compiled


class TorchCompiler(Compiler):
    label: ClassVar[str] = "torch.compile"
    flags: ClassVar[tuple[str, ...]] = ("dynamic",)
    # Note: the arguments come packed (a tuple and a dict): no repacking at each of the call's levels.
    packed: ClassVar[bool] = True
    breaks_graphs: ClassVar[bool] = True

    def build(self, fn: Callable[..., Any], opts: dict[str, Any], *, device: Any, policy: str, nums: Sequence[int],
              names: Sequence[str], fullgraph: bool) -> Callable[..., Any]:
        # Note: the compiled call runs inside unarray's precision switch, held at this entry's policy
        # for the device of its leading array, and the ops under that policy trace as plain torch ops
        # (fusable); see precision.py, "ua.jit's boundary". No device (no array argument): the graph
        # carries the policy in its custom ops, as under torch.compile.
        kind = getattr(device, "kind", None)
        want = None if kind is None else ("cpu" if kind == "cpu" else "cuda", policy)
        return _compiled().compile_held(fn, want, fullgraph=fullgraph, **opts)  # type: ignore[no-any-return]

    def shown(self, opts: dict[str, Any], *, fullgraph: bool, nums: Sequence[int],
              names: Sequence[str]) -> dict[str, Any]:
        return {"fullgraph": fullgraph, **opts}

    def graph_breaks(self) -> dict[str, int]:
        return _compiled().graph_breaks()  # type: ignore[no-any-return]

    def breaks_since(self, before: dict[str, int]) -> list[str]:
        return _compiled().breaks_since(before)  # type: ignore[no-any-return]
