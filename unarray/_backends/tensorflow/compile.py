"""TensorFlow's compiler under ``ua.jit``: ``tf.function``, one fresh function per entry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from unarray._backends._compiler import Compiler

__all__ = ["TensorFlowCompiler"]


class TensorFlowCompiler(Compiler):
    label: ClassVar[str] = "tf.function"
    flags: ClassVar[tuple[str, ...]] = ("jit_compile", "reduce_retracing", "autograph")
    bakes_state: ClassVar[bool] = True
    # tf.function bakes in every Python argument by equality.
    bakes_arguments: ClassVar[bool] = True

    def build(self, fn: Callable[..., Any], opts: dict[str, Any], *, device: Any, policy: str, nums: Sequence[int],
              names: Sequence[str], fullgraph: bool) -> Callable[..., Any]:
        import tensorflow as tf

        # A fresh tf.function per cache entry: the TF32 scope is read while tracing. Note: no
        # reduce_retracing by default: it traces with unknown dimensions (None) after a second shape,
        # and ops that lay out blocks from the shapes (attention) need them known.
        return tf.function(fn, **opts)  # type: ignore[no-any-return]
