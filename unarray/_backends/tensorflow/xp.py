# The array-API namespace over TensorFlow, one module-like object (XP) assembled from the
# modules that implement it (split by the standard's categories only to keep each small).
from __future__ import annotations

from unarray._backends._xp_shared import assemble
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

# The modules' own helpers (shared with the other namespaces unarray writes), not names of the standard.
XP = assemble(__name__, "The array-API namespace over TensorFlow.",
              (dtypes, elementwise, creation, statistical, manipulation, linear_algebra, searching),
              ("axes_of", "same_dtype", "cast", "widened", "arith", "place"),
              linalg=assemble(f"{__name__}.linalg", "The linalg extension over TensorFlow.",
                              (linalg, linear_algebra), (), linalg.__name__),
              fft=assemble(f"{__name__}.fft", "The fft extension over TensorFlow.", (fft,), (), fft.__name__))
