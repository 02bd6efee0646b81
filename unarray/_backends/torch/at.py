"""torch's ua.at: a functional indexed update (a contiguous clone, or the tensor itself where the caller asked
with copy=False) where every occurrence of a repeated index applies (index_add_, scatter_reduce_)."""

from __future__ import annotations

from typing import Any


def update(x: Any, idx: Any, op: str, v: Any, in_place: bool) -> Any:
    import torch

    out = x if in_place else x.clone(memory_format=torch.contiguous_format)
    v = torch.as_tensor(v, dtype=x.dtype, device=x.device)
    if op == "set":
        out[idx] = v
        return out
    # Every occurrence of a repeated index applies: scatter onto the flat positions the index selects.
    lin = torch.arange(x.numel(), device=x.device).reshape(x.shape)[idx]
    vals = torch.broadcast_to(v, lin.shape).reshape(-1)
    lin = lin.reshape(-1)
    flat = out.view(-1) if out.is_contiguous() else out.reshape(-1)
    if op == "add":
        flat.index_add_(0, lin, vals)
    elif op == "subtract":
        flat.index_add_(0, lin, vals, alpha=-1)
    else:
        flat.scatter_reduce_(0, lin, vals, reduce={"multiply": "prod", "min": "amin", "max": "amax"}[op])
    if flat.data_ptr() != out.data_ptr():
        out.copy_(flat.reshape(x.shape))
    return out
