"""numpy's rows of the deviation table and the facts of its platform page, as plain values (no framework imported):
``unarray/conformance/deviations.py`` assembles the table and renders ``backends/*.md`` from them.

A row is ``(op, backend, platform, dtype, reason)``, each of the first four an ``fnmatch`` pattern. ``INBOUND``: the
handoffs to this library that differ (from any source); ``ROWS``: this library's own; ``INSTALL``: the command per
platform ("" where it does not run)."""

from __future__ import annotations

from unarray._backends._library import Row

INBOUND: tuple[Row, ...] = ()
ROWS: tuple[Row, ...] = ()
# Where NumPy's own function answers otherwise and ua.<op> gives the standard's answer: (op, dtype, what NumPy
# gives). The conformance suite expects the standard's answer there.
CORRECTED: tuple[tuple[str, str, str], ...] = (
    ("expm1", "complex*", "`np.expm1` is `exp(z) - 1`: `-0 + 0j` gives `-0 + 0j`, `inf + 0j` gives `inf + NaN j`"),
    ("linalg.matrix_rank", "*", "an empty matrix raises (the maximum of no singular values); its rank is 0"),
)
INSTALL = {"cpu": "pip install -e .   # NumPy is a dependency of unarray", "cuda": "", "rocm": "", "tpu": ""}
NOTE = "The reference implementation and the embedded default; CPU only."
# What the native array objects' own operators do (unarray never wraps or patches them).
OPERATORS = ("`ndarray` operators (`x + y`, `x[mask]`, `x / 0`) are NumPy's own; they follow NumPy's promotion "
             "(NEP 50), which agrees with the standard for the standard's dtypes. For the mixed kinds the standard "
             "leaves open they are not unarray's rule: `x + y` of int32 and float32 arrays is float64 (`ua.add`: "
             "float32), and of int8 and uint64 arrays float64 (`ua.add` refuses).")
