"""The MLX backend: ``mlx.core.array`` on MLX's CPU and GPU (Metal on Apple silicon, CUDA elsewhere).

The rule of this package: everything unarray knows about MLX and nothing else. This module holds the
library's facts as plain data (read by the registry, the install hints and the deviation table without
importing MLX); ``backend.py`` holds the backend class, and the array-API namespace unarray writes for
MLX, which has none that follows the standard, is assembled in ``xp.py`` from one module per category
of the standard (``dtypes``, ``elementwise``, ``creation``, ``statistical``, ``manipulation``,
``searching``, ``linalg``, ``fft``); ``attention.py`` routes attention to ``mlx.core.fast``.
Every module but this one imports ``mlx.core`` at its top.
"""

from __future__ import annotations

from typing import NamedTuple

from unarray._backends._library import Library

NAME = "mlx"
# Note: mlx.core.array's __setitem__ rebinds the Python object to a new buffer (views and other holders of the
# old buffer do not see the write): MLX's buffers are values, so ua.at returns a new array and a writable alias
# handed to another library (torch) would change memory MLX shares between arrays.
IMMUTABLE = True
INSTALL_CUDA = "pip install 'mlx[cuda13]'"
LIBRARY = Library(
    name=NAME,
    roots=("mlx",),
    distributions=("mlx",),
    install_cpu="pip install mlx mlx-cpu",
    install_gpu="on Apple silicon: pip install mlx (Metal); with an NVIDIA GPU: pip install 'mlx[cuda13]'",
)
NOTES = ("MLX's arrays are values (a write makes a new buffer) and live in unified memory: an array has no "
         "device of its own, it is computed on MLX's default device (`mx.default_device()`). The GPU (Metal, "
         "or CUDA with mlx-cuda) has no float64: unarray refuses it there (DTypeError). MLX imports foreign "
         "buffers by copying them (counted by `ua.stats()`); its own arrays export through DLPack, read-only.")
OPERATORS = ("`mlx.core.array` operators are MLX's own: `x / y` of integers gives float32, int64 with uint64 "
             "gives float32, and `x[mask]` is refused. `ua.divide`, `ua.add`... follow the standard. "
             "`mlx.core.Dtype`'s `==` answers False to any object not MLX's own, so `x.dtype == ua.float32` is "
             "False: write `ua.float32 == x.dtype` (unarray's dtype on the left) or `ua.isdtype(x.dtype, ...)`.")


class Deviation(NamedTuple):
    """A row of the deviation table (``unarray.conformance.deviations.Deviation``'s fields)."""

    op: str
    backend: str
    platform: str
    dtype: str
    reason: str


_GPU_F64 = "MLX's GPU (Metal, CUDA) has no float64; unarray refuses it there (DTypeError)"
_SHAPES = ("MLX has no data-dependent output shapes: computed on the host through NumPy eagerly, refused "
           "inside mx.compile (UnsupportedError)")

DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("*", NAME, "cuda", "float64", _GPU_F64),
    Deviation("*", NAME, "*", "complex128", "MLX has no complex128; unarray refuses it (DTypeError)"),
    *(Deviation(op, NAME, "*", "*", _SHAPES)
      for op in ("unique_all", "unique_counts", "unique_inverse", "unique_values", "nonzero")),
    Deviation("handoff->mlx", "*", "*", "*",
              "MLX imports every foreign buffer by copying it (mx.array of the NumPy view): one counted copy, "
              "refused under copy=False"),
    Deviation("dtype ==", NAME, "*", "*",
              "mlx.core.Dtype's == is False for any other object: x.dtype == ua.float32 is False on MLX arrays; "
              "compare with unarray's dtype on the left (ua.float32 == x.dtype) or use ua.isdtype"),
    Deviation("at.*", NAME, "*", "*",
              "ua.at(..., copy=False) is refused on MLX arrays (values: a write makes a new buffer; ArgumentError); "
              "leave copy unset"),
    *(Deviation(op, NAME, "*", "complex64",
                "MLX's linalg kernels take real matrices only: complex ones are refused (UnsupportedError)")
      for op in ("linalg.cholesky", "linalg.det", "linalg.eig*", "linalg.inv", "linalg.pinv", "linalg.qr",
                 "linalg.slogdet", "linalg.solve", "linalg.svd*", "linalg.matrix_rank")),
    *(Deviation(op, NAME, "*", "complex64", "a complex128 result (dtype=complex128, or complex64 with float64) "
                "is refused: MLX has no complex128 (DTypeError)")
      for op in ("sum", "prod", "cumulative_*", "result_type")),
)
