"""torch's rows of the deviation table and the facts of its platform page, as plain values (no framework imported):
``unarray/conformance/deviations.py`` assembles the table and renders ``backends/*.md`` from them.

A row is ``(op, backend, platform, dtype, reason)``, each of the first four an ``fnmatch`` pattern. ``INBOUND``: the
handoffs to this library that differ (from any source); ``ROWS``: this library's own; ``INSTALL``: the command per
platform ("" where it does not run)."""

from __future__ import annotations

from unarray._backends._library import Row
from unarray._backends.torch import LIBRARY

INBOUND: tuple[Row, ...] = ()
ROWS: tuple[Row, ...] = ()
# Where torch's own function answers otherwise and ua.<op> gives the standard's answer: (op, dtype, what torch
# gives). The conformance suite expects the standard's answer there.
CORRECTED: tuple[tuple[str, str, str], ...] = (
    ("where", "*", "a condition that is not bool refused (the other libraries read it as nonzero)"),
    ("repeat", "uint16, uint32, uint64", "`repeat_interleave` has no kernel (`index_select` not implemented)"),
)
INSTALL = {
    "cpu": LIBRARY.install_cpu,
    "cuda": "pip install torch --index-url https://download.pytorch.org/whl/cu130",
    "rocm": "pip install torch --index-url https://download.pytorch.org/whl/rocm7.0",
    "tpu": "",
}
NOTE = ("ROCm builds report their GPUs as `cuda` devices; unarray reports them as `rocm` "
        "(`torch.version.hip` tells them apart).")
# What the native array objects' own operators do (unarray never wraps or patches them).
OPERATORS = ("`torch.Tensor` operators are torch's own: `x + y` of uint16/uint32/uint64 tensors raises, mixed "
             "integer kinds follow torch's table, and `//` and `**` keep torch's special cases. `ua.add`, "
             "`ua.floor_divide`, `ua.pow`... follow the standard.")
