"""numba's rows of the deviation table and the facts of its platform page, as plain values (no framework imported):
``unarray/conformance/deviations.py`` assembles the table and renders ``backends/*.md`` from them.

A row is ``(op, backend, platform, dtype, reason)``, each of the first four an ``fnmatch`` pattern. ``INBOUND``: the
handoffs to this library that differ (from any source); ``ROWS``: this library's own; ``INSTALL``: the command per
platform ("" where it does not run)."""

from __future__ import annotations

from unarray._backends._library import Row

INBOUND: tuple[Row, ...] = ()
ROWS: tuple[Row, ...] = ()
INSTALL = {"cpu": "", "cuda": "pip install numba numba-cuda", "rocm": "", "tpu": ""}
NOTE = "Numba CUDA device arrays take part in handoff only (no array namespace)."
# What the native array objects' own operators do (unarray never wraps or patches them).
OPERATORS = "Numba device arrays have no arithmetic operators of their own on the host."
