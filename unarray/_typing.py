"""Type aliases for signatures. unarray has no array type of its own: an
``Array`` is whatever the caller passed (``np.ndarray``, ``torch.Tensor``,
``jax.Array``, ``cupy.ndarray``, ``tf.Tensor``)."""

from __future__ import annotations

from typing import Any, TypeAlias

Array: TypeAlias = Any
DTypeLike: TypeAlias = Any
DeviceLike: TypeAlias = Any
