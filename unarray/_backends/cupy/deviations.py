"""cupy's rows of the deviation table and its platform page's facts, in the form ``_library.Row`` describes."""

from __future__ import annotations

INSTALL = {
    "cuda": "pip install cupy-cuda13x   # or cupy-cuda12x for CUDA 12 drivers",
    "rocm": "pip install cupy-rocm-7-0",
}
NOTE = "GPU only (CUDA or ROCm builds)."
OPERATORS = ("`cupy.ndarray` operators are CuPy's own (NumPy's promotion: `x + y` of int32 and float32 arrays is "
             "float64, where `ua.add` gives float32 by unarray's rule for mixed kinds).")
