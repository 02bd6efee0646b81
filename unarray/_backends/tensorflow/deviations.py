"""tensorflow's rows of the deviation table and its platform page's facts, in the form ``_library.Row`` describes."""

from __future__ import annotations

from unarray._backends._library import AT_IN_PLACE, IMMUTABLE, Row

INBOUND: tuple[Row, ...] = (
    ("handoff->tensorflow", "*", "*", "*",
     "TensorFlow imports DLPack capsules only and copies when the producer's layout or alignment "
     "does not suit it"),
)
ROWS: tuple[Row, ...] = (
    ("handoff->*", "tensorflow", "*", "*",
     "TensorFlow's DLPack export may copy tensors placed by its allocator (capsule-only API)"),
    *((f"handoff->{dst}", "tensorflow", "*", "*", IMMUTABLE) for dst in ("torch", "cupy", "numba")),
    ("at.*", "tensorflow", "*", "*",
     "ua.at scatters to basic indices, one boolean mask, or integer arrays for the leading axes; an index "
     "mixing slices and integer arrays is refused (UnsupportedError; index in two steps)"),
    ("at.*", "tensorflow", "*", "*", AT_IN_PLACE),
)
CORRECTED: tuple[tuple[str, str, str], ...] = (
    ("astype(x, bool), logical_and, logical_or, logical_xor, logical_not, where", "complex*",
     "`tf.cast(x, tf.bool)` of a complex tensor reads the real part only: `-0.5j` is False"),
    ("repeat", "uint16, uint32, uint64", "`tf.repeat` (Tile) has no kernel"),
)
INSTALL = {"cuda": "pip install 'tensorflow[and-cuda]'", "rocm": "pip install tensorflow-rocm"}
NOTE = "TensorFlow exchanges data through DLPack capsules only."
OPERATORS = ("`tf.Tensor` operators are TensorFlow's own: `x + y` of different dtypes raises instead of "
             "promoting, `x[mask]` is refused, and shifts, `//`, `%` and `**` keep TF's special cases. "
             "`ua.add`, `ua.bitwise_left_shift`... follow the standard.")
