"""Types for signatures. unarray has no array type of its own: an array is whatever the caller
passed (``np.ndarray``, ``torch.Tensor``, ``jax.Array``, ``cupy.ndarray``, ``tf.Tensor``), and a
function returns the leading array's type. So the public functions are generic in ``A``, a type
variable bound to :class:`SupportsArray` (what every such library's array has): a type checker infers
``ua.matmul(torch.Tensor, torch.Tensor) -> torch.Tensor`` and ``ua.sum(jax.Array) -> jax.Array``.
Binary element-wise functions are overloaded so that a Python scalar may come first
(``ua.add(1.0, t)`` is ``t``'s type). ``Array`` is the untyped form, for arguments that follow the
leader (any library's array joins it) and for results no argument decides (creation functions).

Note: the type is the library's array type, not its dtype. NumPy's array type carries a dtype
parameter, which a function that changes the dtype (``argmax``, comparisons, ``astype``) keeps as the
input's in the inferred type.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeAlias, TypeVar


class SupportsArray(Protocol):
    """What unarray reads of any library's array: a shape and a dtype."""

    @property
    def shape(self) -> Any: ...

    @property
    def dtype(self) -> Any: ...


A = TypeVar("A", bound=SupportsArray)

Array: TypeAlias = Any
DTypeLike: TypeAlias = Any
DeviceLike: TypeAlias = Any
