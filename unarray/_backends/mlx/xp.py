# The array-API namespace over MLX, one module-like object (XP) assembled from the modules that implement
# it (split by the standard's categories). MLX's own namespace (mlx.core, which arrays name as their
# __array_namespace__) follows NumPy's conventions, not the standard's: nothing here falls back to it.
from __future__ import annotations

import types

from unarray._backends.mlx import creation, dtypes, elementwise, fft, linalg, manipulation, searching, statistical

_MODULES = (dtypes, elementwise, creation, statistical, manipulation, searching)
_LINEAR = ("matmul", "matrix_transpose", "tensordot", "vecdot")
# The modules' own helpers, not names of the standard.
_HELPERS = ("a", "cast", "const", "promote", "name", "native", "scalar_dtype", "is_float", "is_int", "axes_of",
            "from_numpy", "same_dtype")


def _namespace() -> types.ModuleType:
    ns = types.ModuleType(__name__, "The array-API namespace over MLX.")
    skip = {"annotations", "namedtuple", "Any", "SimpleNamespace", *_HELPERS}
    for mod in _MODULES:
        for k, v in vars(mod).items():
            if not k.startswith("_") and k not in skip and not k.isupper() and not isinstance(v, types.ModuleType) and \
                    getattr(v, "__module__", mod.__name__) in (mod.__name__, None, "mlx.core"):
                setattr(ns, k, v)
    for k in _LINEAR:
        setattr(ns, k, getattr(linalg, k))
    setattr(ns, "__array_api_version__", dtypes.__array_api_version__)  # noqa: B010
    setattr(ns, "linalg", linalg.linalg)  # noqa: B010 - a ModuleType built at run time
    setattr(ns, "fft", fft.fft_ns)  # noqa: B010
    return ns



XP = _namespace()
