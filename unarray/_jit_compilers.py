"""How ``ua.jit`` builds one compiler for one cache entry (``jax.jit``, ``torch.compile``, ``tf.function`` or the
caller's), checks the options passed to it, and says what a compiler's failure was (the option it refused, the step
that broke a ``torch.compile`` graph).

Nothing here imports a framework until an entry of its arrays is built.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from unarray._errors import ArgumentError, ArgumentTypeError, UnarrayError

__all__ = ["LABEL", "JitGraphBreakWarning", "build", "refused", "watch_breaks", "what_broke"]

LABEL = {"jax": "jax.jit", "torch": "torch.compile", "tensorflow": "tf.function", "eager": "eager"}
# Options each compiler takes as a flag but would take any value for silently (truthiness).
_FLAGS = {"jax": ("inline", "keep_unused"), "tensorflow": ("jit_compile", "reduce_retracing", "autograph"),
          "torch": ("dynamic",)}
_HERE = os.path.dirname(os.path.abspath(__file__))  # unarray's own frames, left out of what broke a graph


class JitGraphBreakWarning(UserWarning):
    """``torch.compile`` split a :class:`jit` function at a graph break: the step there runs eagerly, the rest
    compiled (no fallback: the call is still compiled)."""


def build(kind: str, fn: Callable[..., Any], opts: dict[str, Any], *, backend: str, where: Any, policy: str,
          nums: Sequence[int], names: Sequence[str], fullgraph: bool, compiler: Any) -> Callable[..., Any]:
    """The compiled ``fn`` of one entry; an option the compiler refuses when built is a typed error naming it."""
    for k, v in opts.items():
        if k in _FLAGS.get(kind, ()) and not (v is None or isinstance(v, bool)):
            raise ArgumentTypeError(f"{LABEL[kind]} takes {k}=True or False (or None), got {k}={v!r}; pass "
                                    f"{kind}={{{k!r}: True}} or leave it out", op="jit", backend=backend)
    make = functools.partial(_construct, kind, fn, nums=nums, names=names, fullgraph=fullgraph, compiler=compiler)
    try:
        return make(opts, where, policy)
    except UnarrayError:
        raise
    except Exception as e:
        bad = [k for k in opts if not _takes(make, k, opts[k])]
        raise refused(kind, opts, backend, e, bad, compiler) from e


def _takes(make: Callable[..., Any], k: str, v: Any) -> bool:
    try:
        make({k: v}, None, "highest")
    except Exception:
        return False
    return True


def refused(kind: str, opts: dict[str, Any], backend: str, e: BaseException, bad: list[str],
            compiler: Any = None) -> UnarrayError:
    """The typed error for options the compiler refused: those each refused alone, else all (refused together)."""
    bad = bad or list(opts)
    shown = ", ".join(f"{k}={opts[k]!r}" for k in bad)
    label = LABEL.get(kind, getattr(compiler, "__qualname__", "the compiler"))
    cls = ArgumentTypeError if isinstance(e, TypeError) else ArgumentError
    return cls(f"{label} refused the option{'s' if len(bad) > 1 else ''} {shown} ({type(e).__name__}: "
               f"{_first_line(e)}); pass an option and value {label} takes (ua.jit(fn, {kind}={{...}}) for that "
               f"compiler only), or leave {'them' if len(bad) > 1 else 'it'} out", op="jit", backend=backend)


def _construct(kind: str, fn: Callable[..., Any], opts: dict[str, Any], where: Any, policy: str, *,
               nums: Sequence[int], names: Sequence[str], fullgraph: bool, compiler: Any) -> Callable[..., Any]:
    if kind == "eager":
        return fn
    if kind == "callable":
        return compiler(fn, **opts)  # type: ignore[no-any-return]
    if kind == "jax":
        import jax

        # A fresh function per cache entry: jax's trace cache is keyed on the function, and the
        # policy (read while tracing) differs between entries.
        @functools.wraps(fn)
        def traced(*a: Any, **k: Any) -> Any:
            return fn(*a, **k)

        return jax.jit(traced, static_argnums=nums or None, static_argnames=names or None, **opts)
    if kind == "torch":
        from unarray._backends.torch import compiled as _torch_compiled

        # Note: the compiled call runs inside unarray's precision switch, held at this entry's policy
        # for the device of its leading array, and the ops under that policy trace as plain torch ops
        # (fusable); see unarray/_backends/torch/precision.py, "ua.jit's boundary". No device (no
        # array argument): the graph carries the policy in its custom ops, as under torch.compile.
        kind_of = getattr(where, "kind", None)
        want = None if kind_of is None else ("cpu" if kind_of == "cpu" else "cuda", policy)
        return _torch_compiled.compile_held(fn, want, fullgraph=fullgraph, **opts)
    import tensorflow as tf

    # A fresh tf.function per cache entry: the TF32 scope is read while tracing. Note: no
    # reduce_retracing by default: it traces with unknown dimensions (None) after a second shape,
    # and ops that lay out blocks from the shapes (attention) need them known.
    return tf.function(fn, **opts)  # type: ignore[no-any-return]


def watch_breaks(entry: Any, name: str, backend: str) -> Callable[..., Any]:
    """``entry.run`` (a torch entry's) watched on its first call (its compile) for graph breaks, which torch.compile
    takes silently: each is reported once (:class:`JitGraphBreakWarning`); later calls run ``entry.run`` as is."""
    from unarray._backends.torch import compiled as _torch_compiled

    run = entry.run

    def first(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        before = _torch_compiled.graph_breaks()
        try:
            return run(args, kwargs)
        finally:
            entry.run = run
            for why in _torch_compiled.breaks_since(before):
                warnings.warn(JitGraphBreakWarning(
                    f"ua.jit [{backend}]: torch.compile split {name} at a graph break ({why}); the code around "
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
