"""How ``ua.jit`` builds one compiler for one cache entry (the leading library's ``Backend.compile``, or the
caller's), checks the options passed to it, and says what a compiler's failure was (the option it refused, the step
that broke a graph). Each library's compiler is declared in its package (``_backends/<lib>/compile.py``); nothing
here names one.

Nothing here imports a framework until an entry of its arrays is built.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from unarray._backends._compiler import EAGER, Compiler
from unarray._errors import ArgumentError, ArgumentTypeError, UnarrayError

__all__ = ["JitGraphBreakWarning", "build", "refused", "watch_breaks", "what_broke"]

_HERE = os.path.dirname(os.path.abspath(__file__))  # unarray's own frames, left out of what broke a graph


class JitGraphBreakWarning(UserWarning):
    """The compiler (``torch.compile``) split a :class:`jit` function at a graph break: the step there runs
    eagerly, the rest compiled (no fallback: the call is still compiled)."""


def build(kind: str, owner: Any, fn: Callable[..., Any], opts: dict[str, Any], *, backend: str, where: Any,
          policy: str, nums: Sequence[int], names: Sequence[str], fullgraph: bool, compiler: Any) -> Callable[..., Any]:
    """The compiled ``fn`` of one entry: ``owner``'s compiler (``owner.compile``; None for ``"eager"`` and the
    caller's callable); an option the compiler refuses when built is a typed error naming it."""
    comp = EAGER if owner is None else owner.compiler
    for k, v in opts.items():
        if k in comp.flags and not (v is None or isinstance(v, bool)):
            raise ArgumentTypeError(f"{comp.label} takes {k}=True or False (or None), got {k}={v!r}; pass "
                                    f"{kind}={{{k!r}: True}} or leave it out", op="jit", backend=backend)

    def make(o: dict[str, Any], where: Any, policy: str) -> Callable[..., Any]:
        if callable(compiler):
            return compiler(fn, **o)  # type: ignore[no-any-return]
        if owner is None:
            return fn
        return owner.compile(fn, o, device=where, policy=policy, nums=nums,  # type: ignore[no-any-return]
                             names=names, fullgraph=fullgraph)

    try:
        return make(opts, where, policy)
    except UnarrayError:
        raise
    except Exception as e:
        bad = [k for k in opts if not _takes(make, k, opts[k])]
        raise refused(kind, comp, opts, backend, e, bad, compiler) from e


def _takes(make: Callable[..., Any], k: str, v: Any) -> bool:
    try:
        make({k: v}, None, "highest")
    except Exception:
        return False
    return True


def refused(kind: str, comp: Compiler, opts: dict[str, Any], backend: str, e: BaseException, bad: list[str],
            compiler: Any = None) -> UnarrayError:
    """The typed error for options the compiler refused: those each refused alone, else all (refused together)."""
    bad = bad or list(opts)
    shown = ", ".join(f"{k}={opts[k]!r}" for k in bad)
    name = getattr(compiler, "__qualname__", "the compiler") if callable(compiler) else comp.label
    cls = ArgumentTypeError if isinstance(e, TypeError) else ArgumentError
    return cls(f"{name} refused the option{'s' if len(bad) > 1 else ''} {shown} ({type(e).__name__}: "
               f"{_first_line(e)}); pass an option and value {name} takes (ua.jit(fn, {kind}={{...}}) for that "
               f"compiler only), or leave {'them' if len(bad) > 1 else 'it'} out", op="jit", backend=backend)


def watch_breaks(comp: Compiler, entry: Any, name: str, backend: str) -> Callable[..., Any]:
    """``entry.run`` watched on its first call (its compile) for the graph breaks a compiler takes silently
    (``comp.breaks_graphs``): each is reported once (:class:`JitGraphBreakWarning`); later calls run ``entry.run``
    as is."""
    run = entry.run

    def first(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        before = comp.graph_breaks()
        try:
            return run(args, kwargs)
        finally:
            entry.run = run
            for why in comp.breaks_since(before):
                warnings.warn(JitGraphBreakWarning(
                    f"ua.jit [{backend}]: {comp.label} split {name} at a graph break ({why}); the code around "
                    "it runs compiled, the break runs eagerly. Move that step out of the function, or compile "
                    f"with ua.jit({name}, fullgraph=True) to have it raised where it happens"), stacklevel=3)

    return first


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def what_broke(e: BaseException) -> str:
    """The compiler's reason in one line, and for torch.compile the step that broke the graph: unarray's reason
    where unarray broke it (a handoff), and the innermost line of the caller's code it names."""
    text = str(e)
    why = f"{type(e).__name__}: {_first_line(e)}".rstrip(": ")
    start = text.find("(reason: unarray: ")
    if start >= 0:
        why += " (" + text[start + 9:text.find(")", start)] + ")"
    frames = [ln.strip() for ln in text.split("from user code:", 1)[-1].splitlines() if ln.strip().startswith("File")]
    mine = [f for f in frames if _HERE not in f] if "from user code:" in text else []
    return why + (f", at {mine[-1]}" if mine else "")
