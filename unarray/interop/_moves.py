"""Device changes in ``ua.to(x, backend, device=...)``: the target device read and checked (the move itself,
one counted copy refused under ``copy=False``, is ``ua.to``'s: _public.py). Nothing moves between devices
unless the caller asks."""

from __future__ import annotations

from typing import Any

from unarray._devices import Device, parse_device
from unarray._errors import DeviceNotAvailableError, UnarrayError
from unarray._lookup import one
from unarray.interop._routes import with_op


def as_device(device: Any, dst: Any, op: str) -> Any:
    if isinstance(device, Device):
        return device
    try:
        d = parse_device(device)
    except UnarrayError as e:
        raise with_op(e, op) from None
    if d is None:
        # A native device object (torch.device, jax.Device): ask the library that owns it.
        try:
            probe = dst.asarray([0], device=device)
            return one(probe, op).placement_of(probe)
        except Exception as e:
            raise DeviceNotAvailableError(f"device {device!r} is not available ({type(e).__name__}: {e}); "
                                          f"available: {_listed(dst)}", op=op, backend=dst.name) from None
    return d


def reachable(dst: Any, want: Any, op: str) -> None:
    # Note: a library may place an array elsewhere silently or fail deep inside: a device is reachable where the
    # library lists it, or where a one-element array made there lands there.
    try:
        if want in dst.devices():
            return
        if getattr(want, "mesh", None):  # a ShardedDevice: reachable where its mesh can be rebuilt
            dst.native_device(want)
            return
        probe = dst.asarray([0], device=dst.native_device(want))
        if dst.device_of(probe) == want:
            return
    except Exception:  # the library cannot make an array there: not reachable
        pass
    raise DeviceNotAvailableError(f"device {want} is not available to {dst.name} here; available: {_listed(dst)} "
                                  "(pass one of those, or install a build of the library for that device)",
                                  op=op, backend=dst.name)


def _listed(dst: Any) -> str:
    try:
        return ", ".join(str(d) for d in dst.devices()) or "none"
    except Exception as e:
        return f"unknown ({type(e).__name__})"
