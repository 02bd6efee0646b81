"""mlx's rows of the deviation table and its platform page's facts, in the form ``_library.Row`` describes."""

from __future__ import annotations

from unarray._backends._library import Row

NAME = "mlx"
CORRECTED: tuple[tuple[str, str, str], ...] = (
    ("linalg.inv, linalg.cholesky, linalg.solve", "*", "an empty matrix stops the process (SIGFPE)"),
    ("namespace dtypes", "*", "MLX's dtype raises `TypeError` when compared with `None`"),
)
INSTALL = {"cuda": "pip install 'mlx[cuda13]'"}
NOTE = ("MLX's arrays are values (a write makes a new buffer) and live in unified memory: an array has no "
         "device of its own, it is computed on MLX's default device (`mx.default_device()`). The GPU (Metal, "
         "or CUDA with mlx-cuda) has no float64: unarray refuses it there (DTypeError). MLX imports foreign "
         "buffers by copying them (counted by `ua.stats()`); its own arrays export through DLPack, read-only.")
OPERATORS = ("`mlx.core.array` operators are MLX's own: `x / y` of integers gives float32, int64 with uint64 "
             "gives float32, and `x[mask]` is refused. `ua.divide`, `ua.add`... follow the standard. "
             "`mlx.core.Dtype`'s `==` answers False to any object not MLX's own: `xp = ua.array_namespace(x)` "
             "hands out MLX's own dtypes (`xp.float32 is mx.float32`), so `x.dtype == xp.float32` holds, but "
             "`x.dtype == ua.float32` (the module-level dtype on the right) is False: write `ua.float32 == x.dtype` "
             "or `ua.isdtype(x.dtype, ...)`.")

_GPU_F64 = "MLX's GPU (Metal, CUDA) has no float64; unarray refuses it there (DTypeError)"
_SHAPES = ("MLX has no data-dependent output shapes: computed on the host through NumPy eagerly, refused "
           "inside mx.compile (UnsupportedError)")
# Note: a shapeless trace reuses what Python read from the first call's shapes (``x + x.shape[0]``), silently.
SHAPELESS = ("a shapeless trace keeps the values the function read from the first call's shapes (x.shape[0]), so "
             "a call of another shape can get a wrong answer without an error")

INBOUND: tuple[Row, ...] = (
    ("handoff->mlx", "*", "*", "*",
     "MLX imports every foreign buffer by copying it (mx.array of the NumPy view): one counted copy, "
     "refused under copy=False"),
)
ROWS: tuple[Row, ...] = (
    ("*", NAME, "cuda", "float64", _GPU_F64),
    ("*", NAME, "*", "complex128", "MLX has no complex128; unarray refuses it (DTypeError)"),
    *((op, NAME, "*", "*", _SHAPES)
      for op in ("unique_all", "unique_counts", "unique_inverse", "unique_values", "nonzero")),
    ("jit", NAME, "*", "*", f"ua.jit refuses mx.compile(shapeless=True) (ArgumentError): {SHAPELESS}"),
    ("dtype ==", NAME, "*", "*",
     "mlx.core.Dtype's == is False for any other object: x.dtype == xp.float32 holds (the namespace bound to "
     "MLX hands out MLX's own dtypes), but x.dtype == ua.float32, the module-level dtype on the right, is False; "
     "put unarray's dtype on the left (ua.float32 == x.dtype), or use xp's dtypes or ua.isdtype"),
    ("at.*", NAME, "*", "*",
     "ua.at(..., copy=False) is refused on MLX arrays (values: a write makes a new buffer; ArgumentError); "
     "leave copy unset"),
    *((op, NAME, "*", "complex64",
       "MLX's linalg kernels take real matrices only: complex ones are refused (UnsupportedError)")
      for op in ("linalg.cholesky", "linalg.det", "linalg.eig*", "linalg.inv", "linalg.pinv", "linalg.qr",
                 "linalg.slogdet", "linalg.solve", "linalg.svd*", "linalg.matrix_rank")),
    *((op, NAME, "*", "complex64", "a complex128 result (dtype=complex128, or complex64 with float64) "
       "is refused: MLX has no complex128 (DTypeError)")
      for op in ("sum", "prod", "cumulative_*", "result_type")),
)
