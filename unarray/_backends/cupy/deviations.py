"""cupy's rows of the deviation table and the facts of its platform page, as plain values (no framework imported):
``unarray/conformance/deviations.py`` assembles the table and renders ``backends/*.md`` from them.

A row is ``(op, backend, platform, dtype, reason)``, each of the first four an ``fnmatch`` pattern. ``INBOUND``: the
handoffs to this library that differ (from any source); ``ROWS``: this library's own; ``INSTALL``: the command per
platform ("" where it does not run)."""

from __future__ import annotations

from unarray._backends._library import Row

INBOUND: tuple[Row, ...] = ()
ROWS: tuple[Row, ...] = ()
INSTALL = {
    "cpu": "",
    "cuda": "pip install cupy-cuda13x   # or cupy-cuda12x for CUDA 12 drivers",
    "rocm": "pip install cupy-rocm-7-0",
    "tpu": "",
}
NOTE = "GPU only (CUDA or ROCm builds)."
# What the native array objects' own operators do (unarray never wraps or patches them).
OPERATORS = ("`cupy.ndarray` operators are CuPy's own (NumPy's promotion: `x + y` of int32 and float32 arrays is "
             "float64, where `ua.add` gives float32 by unarray's rule for mixed kinds).")
