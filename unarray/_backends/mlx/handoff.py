"""MLX's side of a handoff: MLX copies every buffer it imports (a counted snapshot, refused under copy=False), and
its own arrays are values (a write rebinds a new buffer), so they are handed over as immutable and never cached.
Imports MLX through sys.modules on first use."""

from __future__ import annotations

from typing import Any

from unarray._backends._handoff import Handoff, Snapshot, ml_dtype, mod
from unarray._backends._host import aligned_copy


class MLXHandoff(Handoff):
    name = "mlx"
    noun = "MLX arrays"
    immutable = True
    # Its compact copy is a NumPy array (MLX keeps its strides to itself; a consumer that refuses its
    # buffer, such as JAX's alignment rule, takes an aligned host copy).
    copies_into = "numpy"
    # setitem rebinds an array to a new buffer: a view cached by the array's id could go stale.
    cacheable = False

    def adopt(self, producer: Any) -> Any:
        from unarray._backends.mlx.creation import from_dlpack

        raise Snapshot("MLX imports foreign buffers by copying them", from_dlpack(producer))

    def compact_copy(self, x: Any, backend: Any) -> Any:
        return aligned_copy(self.host(x))

    def data_ptr(self, x: Any) -> int | None:
        return int(self.host(x).__array_interface__["data"][0])

    def host(self, x: Any) -> Any:
        import numpy as np

        if x.dtype != (mx := mod("mlx.core")).bfloat16:
            return np.asarray(x)
        # NumPy's buffer protocol has no bfloat16: the same bits as ml_dtypes' (torch's route to NumPy too)
        return np.asarray(x.view(mx.uint16)).view(ml_dtype("bfloat16", "numpy"))


HANDOFF = MLXHandoff()
