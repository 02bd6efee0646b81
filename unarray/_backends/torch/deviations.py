"""torch's rows of the deviation table and its platform page's facts, in the form ``_library.Row`` describes."""

from __future__ import annotations

CORRECTED: tuple[tuple[str, str, str], ...] = (
    ("where", "*", "a condition that is not bool refused (the other libraries read it as nonzero)"),
    ("repeat", "uint16, uint32, uint64", "`repeat_interleave` has no kernel (`index_select` not implemented)"),
)
INSTALL = {
    "cuda": "pip install torch --index-url https://download.pytorch.org/whl/cu130",
    "rocm": "pip install torch --index-url https://download.pytorch.org/whl/rocm7.0",
}
NOTE = ("ROCm builds report their GPUs as `cuda` devices; unarray reports them as `rocm` "
        "(`torch.version.hip` tells them apart).")
OPERATORS = ("`torch.Tensor` operators are torch's own: `x + y` of uint16/uint32/uint64 tensors raises, mixed "
             "integer kinds follow torch's table, and `//` and `**` keep torch's special cases. `ua.add`, "
             "`ua.floor_divide`, `ua.pow`... follow the standard.")
