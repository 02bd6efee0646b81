"""jax's rows of the deviation table and its platform page's facts, in the form ``_library.Row`` describes."""

from __future__ import annotations

from unarray._backends._library import AT_IN_PLACE, IMMUTABLE, Row

INBOUND: tuple[Row, ...] = (
    ("handoff->jax", "*", "cpu", "*",
     "JAX on the CPU copies buffers that are not 64-byte aligned (XLA's alignment rule)"),
)
ROWS: tuple[Row, ...] = (
    ("handoff->*", "jax", "cpu", "bool",
     "JAX exports bool buffers through a byte-wise copy (XLA's PRED type has no DLPack layout)"),
    *((f"handoff->{dst}", "jax", "*", "*", IMMUTABLE) for dst in ("torch", "cupy", "numba")),
    *((op, "jax", platform, "*", f"jax.numpy.{op} runs on the CPU only")
      for op in ("linalg.eig", "linalg.eigvals") for platform in ("cuda", "rocm", "tpu")),
    # Every backend on a TPU: JAX is the library that runs there.
    ("nextafter", "*", "tpu", "*", "TPUs flush float32 subnormals to zero"),
    ("fft.*", "jax", "tpu", "complex64",
     "the TPU FFT computes in reduced precision (about 1e-4 relative error for float32)"),
    ("at.*", "jax", "*", "*", AT_IN_PLACE),
)
CORRECTED: tuple[tuple[str, str, str], ...] = (
    ("all, any", "complex*", "`jnp.all`/`jnp.any` read a complex element's real part only: `-0.5j` counts as "
     "False"),
    ("expm1", "complex*", "`jnp.expm1(0 - 0j)` is `0 + 0j` (the standard's conjugate symmetry: `0 - 0j`)"),
    ("unique_*", "complex*", "`jnp.unique_*` write every value with a NaN part as `nan + 0j` (`1 + nanj` included)"),
    ("linalg.matrix_rank", "*", "an empty matrix raises (the maximum of no singular values); its rank is 0"),
)
INSTALL = {
    "cuda": "pip install 'jax[cuda13]'",
    "rocm": "pip install jax jax-rocm7-plugin jax-rocm7-pjrt",
    "tpu": "pip install 'jax[tpu]'",
}
NOTE = ("The suite turns on `jax_enable_x64` so that float64 cases run (never on TPU). Float32 matmul "
        "and attention run at `lax.Precision.HIGHEST` under the default policy.")
OPERATORS = ("`jax.Array` operators are JAX's own: without x64 mode, `x + y` of uint32 and int32 silently gives "
             "int32 (where `ua.add` raises `DTypeError`), with x64 int64 and uint64 give float64 (`ua.add` refuses), "
             "and Python ints out of the dtype's range wrap.")
