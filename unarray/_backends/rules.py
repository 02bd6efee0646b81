"""Where the standard leaves the answer open and the libraries disagree: unarray's one answer on every backend and
why, as plain values (the libraries' behaviour is named, so it lives with them); ``unarray/conformance/deviations.py``
renders them in ``backends/README.md``. The rule itself is code in ``unarray/_dtypes.py`` (``promote``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RULES", "Rule"]


@dataclass(frozen=True)
class Rule:
    """Where the standard leaves the answer open and the libraries disagree: unarray's one answer and why."""

    case: str
    answer: str
    why: str


# Each holds on every backend: the functions, ua.result_type and a bound namespace's result_type alike.
RULES: tuple[Rule, ...] = (
    Rule("mixed kinds: bool or an integer with a real floating dtype; an integer with a complex dtype",
         "the floating (or complex) dtype at its own width: int32 with float32 is float32, int64 with float16 is "
         "float16, uint8 with complex64 is complex64",
         "torch, JAX, TensorFlow and MLX do it natively (it costs nothing there); it keeps float32 programs float32 "
         "on accelerators (a TPU has no float64); it is what array-api-compat users of GPU libraries already see. "
         "NumPy, CuPy and dask widen to float64: unarray casts their operands first, only where the dtypes differ"),
    Rule("signed with unsigned beyond the standard's table: int8..int64 with uint64",
         "refused: DTypeError naming the function, both dtypes and the fix (astype one side)",
         "no common answer exists: NumPy gives float64 (losing integers beyond 2**53), torch refuses, JAX picks a "
         "float. A backend's own capability refusals stay (JAX without x64 makes no 64-bit dtype)"),
)
