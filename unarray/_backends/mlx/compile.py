"""MLX's compiler under ``ua.jit``: ``mx.compile``, one compiled function per entry, the array leaves of the arguments
its inputs and everything else compiled in, keyed by type and value (the rules: docs/jit.md)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, ClassVar

import mlx.core as mx

from unarray._backends._compiler import Compiler, typed
from unarray._backends.mlx.deviations import SHAPELESS
from unarray._errors import ArgumentError

__all__ = ["MLXCompiler"]

# Where an array leaf of the arguments goes (in a key and in a template).
_HOLE = object()


class MLXCompiler(Compiler):
    label: ClassVar[str] = "mx.compile"
    flags: ClassVar[tuple[str, ...]] = ("shapeless",)
    # mx.compile reads globals and closure variables (arrays among them) once, while tracing.
    bakes_state: ClassVar[bool] = True

    def build(self, fn: Callable[..., Any], opts: dict[str, Any], *, device: Any, policy: str, nums: Sequence[int],
              names: Sequence[str], fullgraph: bool) -> Callable[..., Any]:
        if opts.get("shapeless"):
            raise ArgumentError(f"ua.jit refused the option shapeless=True for mx.compile: {SHAPELESS}; leave it "
                                "out (ua.jit traces each shape once and reuses it)", op="jit", backend="mlx")
        return _Compiled(fn, opts)


class _Compiled:
    """``fn`` under one ``mx.compile``: each distinct set of non-array arguments has a token, the constant MLX
    keys its traces on beside the arrays' shapes and dtypes, and a template the arrays are put back into."""

    def __init__(self, fn: Callable[..., Any], opts: dict[str, Any]) -> None:
        self._fn = fn
        self._tokens: dict[Hashable, int] = {}
        self._templates: list[tuple[Any, Any]] = []
        self._lock = threading.Lock()
        templates = self._templates

        def traced(token: int, *arrays: Any) -> Any:
            args, kwargs = templates[token]
            leaves = iter(arrays)
            return fn(*_fill(args, leaves), **_fill(kwargs, leaves))

        self._run = mx.compile(traced, **opts)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        arrays: list[Any] = []
        key = (_key(args, arrays), _key(kwargs, arrays))
        token = self._tokens.get(key)
        if token is None:
            with self._lock:
                token = self._tokens.get(key)
                if token is None:
                    # (the template holds no array: an entry keeps none of its first call's inputs alive)
                    self._templates.append((_fill(args, None), _fill(kwargs, None)))
                    token = self._tokens[key] = len(self._templates) - 1
        return self._run(token, *arrays)


def _key(x: Any, arrays: list[Any]) -> Any:
    # x's non-array parts by type and value, its arrays appended to ``arrays`` in order.
    t = type(x)
    if t is mx.array:
        arrays.append(x)
        return _HOLE
    if t is tuple or t is list or (isinstance(x, tuple) and hasattr(x, "_fields")):
        return t, tuple([_key(e, arrays) for e in x])
    if t is dict:
        return t, tuple([(typed(k), _key(v, arrays)) for k, v in x.items()])
    if hasattr(x, "__dlpack__"):
        raise TypeError(f"mx.compile takes MLX arrays; a {t.__module__}.{t.__qualname__} argument would be compiled "
                        "in as a constant (hand it to MLX first: ua.to(x, 'mlx'))")
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"mx.compile compiles non-array arguments in, keyed by value; a {t.__qualname__} is not "
                        "hashable (pass a tuple, or an MLX array)") from None
    return typed(x)


def _fill(x: Any, leaves: Iterator[Any] | None) -> Any:
    # The template with the traced arrays in its holes, in the order _key found them; no leaves: x's template
    # (its arrays made holes).
    if x is _HOLE:
        return next(leaves)  # type: ignore[arg-type]
    t = type(x)
    if t is mx.array:
        return _HOLE
    if t is tuple or t is list:
        return t([_fill(e, leaves) for e in x])
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*[_fill(e, leaves) for e in x])
    if t is dict:
        return {k: _fill(v, leaves) for k, v in x.items()}
    return x
