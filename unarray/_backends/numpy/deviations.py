"""numpy's rows of the deviation table and its platform page's facts, in the form ``_library.Row`` describes."""

from __future__ import annotations

CORRECTED: tuple[tuple[str, str, str], ...] = (
    ("expm1", "complex*", "`np.expm1` is `exp(z) - 1`: `-0 + 0j` gives `-0 + 0j`, `inf + 0j` gives `inf + NaN j`"),
    ("linalg.matrix_rank", "*", "an empty matrix raises (the maximum of no singular values); its rank is 0"),
)
INSTALL = {"cpu": "pip install -e .   # NumPy is a dependency of unarray"}
NOTE = "The reference implementation and the embedded default; CPU only."
OPERATORS = ("`ndarray` operators (`x + y`, `x[mask]`, `x / 0`) are NumPy's own; they follow NumPy's promotion "
             "(NEP 50), which agrees with the standard for the standard's dtypes. For the mixed kinds the standard "
             "leaves open they are not unarray's rule: `x + y` of int32 and float32 arrays is float64 (`ua.add`: "
             "float32), and of int8 and uint64 arrays float64 (`ua.add` refuses).")
