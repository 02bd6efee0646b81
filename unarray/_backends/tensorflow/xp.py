# The array-API namespace over TensorFlow, one module-like object (XP) assembled from the
# modules that implement it (split by the standard's categories only to keep each small).
from __future__ import annotations

import types

from unarray._backends.tensorflow import (
    creation,
    dtypes,
    elementwise,
    fft,
    linalg,
    linear_algebra,
    manipulation,
    searching,
    statistical,
)

_MODULES = (dtypes, elementwise, creation, statistical, manipulation, linear_algebra, searching)


def _namespace() -> types.ModuleType:
    ns = types.ModuleType(__name__, "The array-API namespace over TensorFlow.")
    # The modules' own helpers (shared with the other namespaces unarray writes), not names of the standard.
    skip = {"annotations", "namedtuple", "Any", "SimpleNamespace", "axes_of", "same_dtype", "cast", "widened", "arith"}
    for mod in _MODULES:
        for k, v in vars(mod).items():
            if not k.startswith("_") and k not in skip and not k.isupper() and not isinstance(v, types.ModuleType):
                setattr(ns, k, v)
    setattr(ns, "linalg", linalg.linalg)  # noqa: B010 - a ModuleType built at run time
    setattr(ns, "fft", fft.fft_ns)  # noqa: B010
    return ns



XP = _namespace()
