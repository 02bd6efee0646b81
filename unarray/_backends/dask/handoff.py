"""dask's side of a handoff: a lazy library has no route of its own (an eager array is wrapped, a dask
array is computed on request: unarray/interop/_dask.py); what it declares is where its chunks live."""

from __future__ import annotations

from unarray._backends._handoff import Handoff


class DaskHandoff(Handoff):
    name = "dask"
    noun = "dask arrays"

    def chunk_library(self, device_kind: str) -> str:
        return "cupy" if device_kind in ("cuda", "rocm") else "numpy"


HANDOFF = DaskHandoff()
