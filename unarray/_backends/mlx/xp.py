# The array-API namespace over MLX, one module-like object (XP) assembled from the modules that implement
# it (split by the standard's categories). MLX's own namespace (mlx.core, which arrays name as their
# __array_namespace__) follows NumPy's conventions, not the standard's: nothing here falls back to it.
from __future__ import annotations

from unarray._backends._xp_shared import assemble
from unarray._backends.mlx import creation, dtypes, elementwise, fft, linalg, manipulation, searching, statistical

# The modules' own helpers, not names of the standard.
_HELPERS = ("a", "cast", "const", "promote", "name", "native", "scalar_dtype", "axes_of", "from_numpy", "same_dtype")
XP = assemble(__name__, "The array-API namespace over MLX.",
              (dtypes, elementwise, creation, statistical, manipulation, searching), _HELPERS, "mlx.core",
              matmul=linalg.matmul, matrix_transpose=linalg.matrix_transpose, tensordot=linalg.tensordot,
              vecdot=linalg.vecdot, __array_api_version__=dtypes.__array_api_version__,
              linalg=assemble(f"{__name__}.linalg", "The linalg extension over MLX.", (linalg,), (), linalg.__name__),
              fft=assemble(f"{__name__}.fft", "The fft extension over MLX.", (fft,), (), fft.__name__))
