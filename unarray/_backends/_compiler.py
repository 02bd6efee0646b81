"""What ``ua.jit`` does for one library's arrays: the compiler a backend declares (``Backend.compiler``).

A backend without a compiler of its own keeps :data:`EAGER` (the function runs as written); a backend with
one declares a :class:`Compiler` in its package (``_backends/<lib>/compile.py``), which imports its framework's
compiler only when an entry is built. ``unarray/jit.py`` reads these facts and calls :meth:`Compiler.build`;
it names no library.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

# Values keyed as themselves (by type and value); other values are keyed by ``typed``'s rules.
ATOMS = frozenset((bool, int, str, bytes, type(None), type(Ellipsis)))


def typed(v: Any) -> Any:
    """``v`` as a key by type and value: ``1``, ``True`` and ``1.0`` (equal, one hash) are three keys, and so
    are ``0.0`` and ``-0.0``; tuples and frozensets element by element."""
    t = type(v)
    if t in ATOMS:
        return t, v
    if isinstance(v, float):
        return t, float(v).hex()
    if isinstance(v, complex):
        return t, v.real.hex(), v.imag.hex()
    if isinstance(v, tuple):
        return t, tuple([typed(e) for e in v])
    if isinstance(v, frozenset):
        return t, frozenset([typed(e) for e in v])
    return t, v


__all__ = ["ATOMS", "EAGER", "Compiler", "typed"]


class Compiler:
    """A library's compiler as ``ua.jit`` uses it; this base runs the function eagerly."""

    # The compiler as users name it in a label ("jax.jit").
    label: ClassVar[str] = "eager"
    # Options it takes as a flag but would take any value for silently (truthiness): anything but a bool is refused.
    flags: ClassVar[tuple[str, ...]] = ()
    # It reads the function's globals and closure variables once, while tracing (ua.jit keys on their values).
    bakes_state: ClassVar[bool] = False
    # It also bakes every Python argument in by equality (ua.jit keys the arguments by type).
    bakes_arguments: ClassVar[bool] = False
    # The built callable takes the arguments packed, as run(args, kwargs).
    packed: ClassVar[bool] = False
    # It checks some options only at the first call (a failure there may be an option it refuses).
    checks_options_late: ClassVar[bool] = False
    # It splits a function at a graph break silently (ua.jit watches the first call for breaks).
    breaks_graphs: ClassVar[bool] = False

    def build(self, fn: Callable[..., Any], opts: dict[str, Any], *, device: Any, policy: str, nums: Sequence[int],
              names: Sequence[str], fullgraph: bool) -> Callable[..., Any]:
        """``fn`` compiled for one ``ua.jit`` entry (its leading device and precision policy)."""
        return fn

    def shown(self, opts: dict[str, Any], *, fullgraph: bool, nums: Sequence[int],
              names: Sequence[str]) -> dict[str, Any]:
        """The options a label shows (``ua.explain``): those passed, and those the compiler is given besides."""
        return dict(opts)

    def graph_breaks(self) -> dict[str, int]:
        """The compiler's graph breaks so far, by reason (process-wide), where it counts them."""
        return {}

    def breaks_since(self, before: dict[str, int]) -> list[str]:
        """The reasons of the graph breaks counted since ``before``, one line each."""
        return []


EAGER = Compiler()
