"""The standard's inspection API (``__array_namespace_info__``) over one backend and a device.

Built from the backend alone (its devices, dtypes and capabilities), so the front end hands it out
(``ua.__array_namespace_info__``, a bound namespace's) and a namespace a backend assembles itself
(TensorFlow's, MLX's) carries it without reaching up for it."""

from __future__ import annotations

import copy
from typing import Any, cast

from unarray._devices import Device
from unarray._dtypes import DTYPES, KIND_GROUPS, SPEC_DTYPE_NAMES, DType
from unarray._errors import ArgumentError

__all__ = ["Info", "with_library"]

# Keyed by the class too: a library's subclass (CuPy's) equals the plain Device of its place.
_WITH_LIBRARY: dict[tuple[type, Device, str], Device] = {}


def with_library(d: Device, name: str) -> Device:
    """``d`` carrying the backend ``name`` (one object per device and backend)."""
    if d.library == name:
        return d
    key = (type(d), d, name)
    if key not in _WITH_LIBRARY:
        _WITH_LIBRARY[key] = type(d)(**{**vars(d), "library": name})  # (its fields are its __init__'s)
    return _WITH_LIBRARY[key]


class Info:
    """The standard's inspection API (2025.12) for one backend and its default device.

    ``ua.__array_namespace_info__()`` describes the default backend and device as set by
    :func:`unarray.use` when it is called; dtypes are ``ua`` dtypes and devices ``ua.Device``
    objects, both accepted by every creation function. A dtype is listed only where creating or
    promoting to it works: JAX without x64 mode lists no 64-bit dtype, a device without float64
    (TPU, MPS) lists no float64 or complex128.

    Examples:
        >>> import unarray as ua
        >>> info = ua.__array_namespace_info__()
        >>> info.default_dtypes()["real floating"], info.devices()
        (ua.float64, (Device('cpu'),))
        >>> sorted(info.dtypes(kind="unsigned integer"))
        ['uint16', 'uint32', 'uint64', 'uint8']
    """

    def __init__(self, backend: Any, device: Any = None, own: dict[str, Any] | None = None,
                 version: str = "2025.12"):
        self._backend = backend
        self._device = device
        # The dtype objects of a bound namespace that hands out its library's own (BoundNamespace), by name.
        self._dtypes = {**DTYPES, **(own or {})}
        # The version of the standard its caller asked for (ua.array_namespace(api_version=)): devices()'s type.
        self._version = version

    def for_version(self, version: str) -> Info:
        """This inspection API as the standard's ``version`` says it (``devices()`` a list before 2025.12)."""
        out = copy.copy(self)
        out._version = version
        return out

    def __repr__(self) -> str:
        return f"<unarray inspection API for {self._backend.name} on {self.default_device()}>"

    def capabilities(self) -> dict[str, Any]:
        """``"boolean indexing"``, ``"data-dependent shapes"`` and ``"max dimensions"`` of the backend."""
        return cast(dict[str, Any], self._backend.capabilities())

    def default_device(self) -> Device:
        """Where creation functions allocate by default (the :func:`unarray.use` device, else the backend's)."""
        return with_library(self._where(self._device), self._backend.name)

    def devices(self) -> tuple[Device, ...] | list[Device]:
        """The devices the backend can use here (each carries the backend as its ``library``): a tuple, as 2025.12
        types it; a new list each call for a caller that asked for 2023.12 or 2024.12, as those type it."""
        out = [with_library(d, self._backend.name) for d in self._backend.devices()]
        return tuple(out) if self._version >= "2025.12" else out

    def dtypes(self, *, device: Any = None, kind: str | tuple[str, ...] | None = None) -> dict[str, Any]:
        """The standard's dtypes that the backend holds on ``device`` (default: the default device), by ``kind``.

        Only the standard's dtypes: ``ua.float16`` and ``ua.bfloat16`` exist as extensions but are not listed."""
        wanted = self._kinds(kind)
        return {n: self._dtypes[n] for n in self._backend.dtype_names(self._where(device))
                if n in SPEC_DTYPE_NAMES and n != "float16" and DType(n).kind in wanted}

    def default_dtypes(self, *, device: Any = None) -> dict[str, Any]:
        """``"real floating"``, ``"complex floating"``, ``"integral"`` and ``"indexing"`` defaults on ``device``."""
        names = self._backend.default_dtype_names(self._where(device))
        return {k: self._dtypes[names[k]]
                for k in ("real floating", "complex floating", "integral", "indexing")}

    def _where(self, device: Any) -> Device:
        if device is None:
            device = self._device
        if isinstance(device, Device):
            return device
        # Where the backend would allocate: an empty array made as a creation call would make it.
        b = self._backend
        return cast(Device, b.device_of(b.zeros((0,), dtype=None, device=b.native_device(device))))

    @staticmethod
    def _kinds(kind: str | tuple[str, ...] | None) -> set[str]:
        if kind is None:
            return {"bool", *KIND_GROUPS["numeric"]}
        out: set[str] = set()
        for k in (kind,) if isinstance(kind, str) else kind:
            if k not in KIND_GROUPS:
                raise ArgumentError(f"unknown dtype kind {k!r}; use one of {sorted(KIND_GROUPS)} or a tuple of them",
                                    op="__array_namespace_info__().dtypes")
            out.update(KIND_GROUPS[k])
        return out
