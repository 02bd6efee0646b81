"""Types for a user's own functions over arrays of any library.

``ArrayT`` is a type variable bound to :class:`SupportsArrayOps`: an array of NumPy, torch or JAX (any
library whose array has the standard's operators), whose operators return its own type. A function
generic in it keeps the caller's array type through ``ua`` calls and operators::

    import unarray as ua
    from unarray.typing import ArrayT

    def energy(x: ArrayT) -> ArrayT:
        return ua.sum(x * x)  # energy(torch.Tensor) -> torch.Tensor

``SupportsArray`` is the narrower protocol the ``ua`` functions themselves take (a shape and a dtype).
"""

from __future__ import annotations

from unarray._typing import ArrayT, SupportsArray, SupportsArrayOps

__all__ = ["ArrayT", "SupportsArray", "SupportsArrayOps"]
