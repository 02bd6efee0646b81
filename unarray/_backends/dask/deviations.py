"""dask's rows of the deviation table and its platform page's facts, in the form ``_library.Row`` describes."""

from __future__ import annotations

from unarray._backends._library import AT_IN_PLACE, Row

ROWS: tuple[Row, ...] = (
    ("repeat", "dask", "*", "*",
     "dask repeats by an int only: counts given as an array make a data-dependent shape "
     "(UnsupportedError; compute the counts first)"),
    ("at.*", "dask", "*", "*",
     "ua.at with an index other than a full-shape mask and one value runs as one NumPy task over the "
     "whole array (lazy, but one chunk's memory and no parallelism)"),
    ("at.*", "dask", "*", "*", AT_IN_PLACE),
)
CORRECTED: tuple[tuple[str, str, str], ...] = (
    ("unique_*", "float*, complex*", "`da.unique` merges NaNs: `unique_counts` counts them 0, `unique_inverse` points "
     "them at another value, `unique_all` raises"),
    ("repeat", "*", "`axis=None` refused (`Must supply an integer axis value`)"),
    ("searchsorted", "*", "a Python scalar `x2` refused (`'float' object has no attribute '_meta'`)"),
    ("linalg.*", "*", "an empty matrix raises `ZeroDivisionError` (`apply_gufunc`'s rechunk)"),
)
INSTALL = {"cuda": "pip install 'dask[array]' cupy-cuda13x   # CuPy chunks"}
NOTE = ("Lazy: every op builds a graph and computes nothing; NumPy chunks on the CPU, CuPy chunks on CUDA. "
        "`ua.to(x, 'dask')` wraps, `ua.to(dask_array, 'numpy')` computes (counted); the handoff pairs are "
        "checked in tests/ops/test_dask.py. `--profile distributed` runs the cases on a local cluster.")
OPERATORS = ("`dask.array.Array` operators are dask's own (NumPy's promotion, lazily: `x + y` of int32 and float32 "
             "arrays is float64, where `ua.add` gives float32 by unarray's rule for mixed kinds); `x[mask]` gives a "
             "result of unknown (NaN) size until computed.")
