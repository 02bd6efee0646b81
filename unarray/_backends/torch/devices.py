# Where a torch tensor lives: its ua.Device, for a DTensor with the mesh and placements; plus the refusal of a
# DTensor reduction some rank cannot run (an empty shard).
from __future__ import annotations

import sys
from typing import Any

import torch

from unarray._devices import Device, register_native

# A ROCm (HIP) build of torch: its "cuda" devices are ROCm devices.
HIP = getattr(torch.version, "hip", None) is not None
_device_cache: dict[Any, Device] = {}


def as_device(d: Any) -> Device:
    try:
        return _device_cache[d]
    except KeyError:
        pass
    if d.type == "cpu":
        out = Device("cpu")
    elif d.type == "cuda":
        out = Device("rocm" if HIP else "cuda", d.index if d.index is not None else torch.cuda.current_device())
    else:
        out = Device(d.type, d.index or 0)
    _device_cache[d] = out
    return out


register_native(torch.device, as_device)


def is_dtensor(x: Any) -> bool:
    # Note: a plain tensor is answered by its exact type first (the hot path); whoever made a DTensor loaded
    # torch.distributed.tensor, so reading sys.modules imports nothing.
    if type(x) is torch.Tensor:
        return False
    m = sys.modules.get("torch.distributed.tensor")
    return m is not None and isinstance(x, m.DTensor)


# Types whose arrays span a mesh (a DTensor), read once per type from its module and attributes: no import.
_SPANS: dict[type, bool] = {}


def spans_mesh(x: Any) -> bool:
    t = type(x)
    s = _SPANS.get(t)
    if s is None:
        s = _SPANS[t] = t.__module__.startswith("torch.") and t.__name__ == "DTensor" and hasattr(t, "placements")
    return s


def empty_shard_guard(x: Any, axis: Any, op: str) -> None:
    # Note: torch's DTensor max/min/argmax/argmin fail on a rank whose shard is empty while the others wait on it
    # forever: refused on every rank alike, from the global shape.
    from unarray._errors import ShapeError

    dims = range(x.ndim) if axis is None else [a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)]
    mesh = x.device_mesh
    for i, p in enumerate(x.placements):
        if p.is_shard() and p.dim % x.ndim in dims:
            n, w = x.shape[p.dim % x.ndim], mesh.size(i)
            if n and -(-n // w) * (w - 1) >= n:
                raise ShapeError(
                    f"dimension {p.dim % x.ndim} ({n} elements) is sharded over {w} ranks, so some rank holds "
                    f"none of it, and torch's DTensor {op} fails there; replicate that dimension first "
                    "(x.redistribute(x.device_mesh, [Replicate()]))", op=op, backend="torch")


def mesh_device(x: Any) -> Device:
    # A DTensor's device: its local device with the DeviceMesh and placements (ua.device names them).
    from unarray._devices import MeshDevice

    mesh = x.device_mesh
    names = getattr(mesh, "mesh_dim_names", None)
    local = as_device(x.device)
    return MeshDevice(local.kind, local.index, tuple(mesh.shape), None if names is None else tuple(names),
                      tuple(repr(p) for p in x.placements))
