"""torch's compiler under ``ua.jit``: ``torch.compile``, run inside unarray's precision switch.

The heavy part (the held call, the guard filter) is in ``compiled``, imported when the first entry is built:
importing this module imports nothing of torch's compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from unarray._backends._compiler import Compiler

__all__ = ["TorchCompiler", "compiled_module"]


def compiled_module() -> Any:
    # (torch._dynamo loads with it, about 2 s: imported by an import statement in traced code, which dynamo runs)
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
        # Note: the switch is held at this entry's policy for its leading array's device (precision.py, "ua.jit's
        # boundary"); with no array argument the graph carries the policy in its custom ops, as under torch.compile.
        kind = getattr(device, "kind", None)
        want = None if kind is None else ("cpu" if kind == "cpu" else "cuda", policy)
        return compiled_module().compile_held(fn, want, fullgraph=fullgraph, **opts)  # type: ignore[no-any-return]

    def shown(self, opts: dict[str, Any], *, fullgraph: bool, nums: Sequence[int],
              names: Sequence[str]) -> dict[str, Any]:
        return {"fullgraph": fullgraph, **opts}

    def graph_breaks(self) -> dict[str, int]:
        from torch._dynamo.utils import counters

        return dict(counters["graph_break"])

    def breaks_since(self, before: dict[str, int]) -> list[str]:
        # One line per break since ``before``: unarray's reason (a handoff), else Dynamo's first line and explanation.
        out = []
        for text, n in self.graph_breaks().items():
            if n <= before.get(text, 0):
                continue
            start = text.find("(reason: unarray: ")
            if start >= 0:
                out.append(text[start + 9:text.find(")", start)])
                continue
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            more = [ln.removeprefix("Explanation: ") for ln in lines[1:2] if ln.startswith("Explanation:")]
            out.append(": ".join(lines[:1] + more))
        return out
