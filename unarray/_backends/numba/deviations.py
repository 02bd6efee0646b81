"""numba's rows of the deviation table and its platform page's facts, in the form ``_library.Row`` describes."""

from __future__ import annotations

INSTALL = {"cpu": "", "cuda": "pip install numba numba-cuda"}
NOTE = "Numba CUDA device arrays take part in handoff only (no array namespace)."
OPERATORS = "Numba device arrays have no arithmetic operators of their own on the host."
