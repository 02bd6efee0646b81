"""Backend-neutral devices and the DLPack device codes.

``ua.Device`` names where an array lives independently of the library that
owns it, so arrays of different libraries can be compared (``ua.device(t) ==
ua.device(c)``) and capability rules can be stated once (no float64 on TPU).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import IntEnum
from operator import attrgetter
from typing import Any, ClassVar

from unarray._errors import ArgumentError

__all__ = ["DLDeviceType", "Device", "MeshDevice", "ShardedDevice", "TPU_SETTINGS", "from_native", "parse_device",
           "register_native"]

# A library's own device type -> its Device, filled by each backend module when it loads (so this module
# imports no framework): how ``Device.__eq__`` reads ``torch.device("cuda", 0)`` or a ``jax.Device``.
_NATIVE: dict[type, Callable[[Any], Device]] = {}


def register_native(t: type, convert: Callable[[Any], Device]) -> None:
    """Teach :class:`Device` to read ``t``, a library's own device type (called by that library's backend)."""
    _NATIVE[t] = convert


def from_native(obj: object) -> Device | None:
    # A library's own device object (or device string) as a Device; None where it names none.
    if isinstance(obj, str):
        try:
            return _parse_string(obj)
        except Exception:  # noqa: BLE001 - a string that names no device equals no device
            return None
    for klass in type(obj).__mro__:
        convert = _NATIVE.get(klass)
        if convert is not None:
            try:
                return convert(obj)
            except Exception:  # noqa: BLE001 - a device this process cannot reach (torch "cuda" without CUDA)
                return None
    return None


class DLDeviceType(IntEnum):
    """``DLDeviceType`` from ``dlpack.h`` (DLPack 1.1)."""

    CPU = 1
    CUDA = 2
    CUDA_HOST = 3
    OPENCL = 4
    VULKAN = 7
    METAL = 8
    VPI = 9
    ROCM = 10
    ROCM_HOST = 11
    EXT_DEV = 12
    CUDA_MANAGED = 13
    ONE_API = 14
    WEBGPU = 15
    HEXAGON = 16
    MAIA = 17


# A code's kind is its lowercased name but for these (pinned host memory is host memory: any CPU consumer reads it).
_KINDS = {"CUDA_HOST": "cpu", "ROCM_HOST": "cpu", "CUDA_MANAGED": "cuda", "METAL": "mps", "ONE_API": "xpu",
          "EXT_DEV": "ext"}
_KIND_OF_CODE: dict[int, str] = {c: _KINDS.get(c.name, c.name.lower()) for c in DLDeviceType}

# The inverse: a kind's code is the first listed for it (CPU, not pinned host memory); ext and vpi get none.
_CODE_OF_KIND: dict[str, int] = {k: c for c, k in reversed(_KIND_OF_CODE.items()) if k not in ("ext", "vpi")}

# Accelerators without float64 arithmetic: asking for it there is an error, not a silent float32.
_NO_FLOAT64 = frozenset({"tpu", "mps"})


# Note: no __slots__, so that a library whose own device type equals nothing else (CuPy's) can give a subclass of
# both (only a subclass is asked first when its instance is on the right of ==).
class Device:
    """Where an array lives, the same for every library.

    Two devices are equal when ``kind`` and ``index`` are; the library does not count, so arrays of
    different libraries on one GPU are on the same device. A device also equals the libraries' own
    objects for the same place (``torch.device("cuda", 0)``, a ``jax.Device``, NumPy's ``"cpu"``,
    TensorFlow's ``"/job:localhost/replica:0/task:0/device:CPU:0"``), so ``ua.device(x) == x.device``
    holds. (Its hash is that of ``(kind, index)``: a native object equal to it may hash differently, so
    do not mix the two as keys of one dict.)

    Attributes:
        kind: ``"cpu"``, ``"cuda"``, ``"rocm"``, ``"tpu"``, ``"mps"``, ...
        index: the device ordinal within its kind (0 for the CPU).
        library: the backend whose arrays live there (``"torch"``), or None. ``ua.device(x)`` and
            ``__array_namespace_info__().devices()`` set it, so that creation on the device stays in that
            library: ``ua.zeros(3, device=ua.device(t))`` is a torch tensor for a torch tensor ``t``.

    Examples:
        >>> import unarray as ua
        >>> ua.Device("cuda", 1)
        Device('cuda:1')
        >>> ua.Device.from_dlpack((10, 0)).kind
        'rocm'
        >>> ua.Device("cpu").dlpack
        (1, 0)
        >>> ua.Device("cpu", library="numpy") == ua.Device("cpu") == "cpu"
        True
    """

    # What compares and hashes (never the library): one device's place (a library's subclass included); a placement
    # over several devices has a key of its own, with its fields.
    _key: ClassVar[attrgetter[Any]] = attrgetter("kind", "index")

    def __init__(self, kind: str, index: int = 0, *, library: str | None = None) -> None:
        self.kind = kind
        self.index = index
        self.library = library

    def __setattr__(self, name: str, value: object) -> None:
        # Frozen: a field is set once, in __init__ (a library's subclass, CuPy's, still sets its own slots).
        if name in vars(self):
            raise AttributeError(f"cannot assign to field {name!r} of an immutable {type(self).__name__}")
        object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Device):
            # Note: a ShardedDevice or MeshDevice equals only one of its class with the same fields.
            return (self._key is other._key is Device._key or type(self) is type(other)) and \
                self._key(self) == other._key(other)
        native = from_native(other)
        if native is None:
            return NotImplemented
        return self._key is Device._key and self.kind == native.kind and self.index == native.index

    def __ne__(self, other: object) -> bool:
        # Note: explicit, so a subclass that is also a library's device (CuPy's) does not take that library's
        # __ne__, which answers True to any other type.
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self._key(self))

    def __repr__(self) -> str:
        return f"Device({str(self)!r})"

    def __str__(self) -> str:
        return f"{self.kind}:{self.index}" if self.kind != "cpu" else "cpu"

    @classmethod
    def from_dlpack(cls, dl_device: tuple[int, int]) -> Device:
        """The device of a DLPack ``(device_type, device_id)`` pair."""
        code, index = int(dl_device[0]), int(dl_device[1])
        kind = _KIND_OF_CODE.get(code)
        if kind is None:
            raise ValueError(f"unknown DLPack device type {code}; known: {sorted(_KIND_OF_CODE)}")
        return cls(kind, 0 if kind == "cpu" else index)

    @property
    def dlpack(self) -> tuple[int, int]:
        """The DLPack ``(device_type, device_id)`` pair; TPUs have none."""
        code = _CODE_OF_KIND.get(self.kind)
        if code is None:
            raise ValueError(f"device {self} has no DLPack device code")
        return (int(code), self.index)

    @property
    def has_float64(self) -> bool:
        """Whether float64 arithmetic runs on this device."""
        return self.kind not in _NO_FLOAT64

    @property
    def is_gpu(self) -> bool:
        return self.kind in ("cuda", "rocm")


class ShardedDevice(Device):
    """Where an array spread over several devices lives: a JAX array with a ``NamedSharding`` over a mesh.

    ``kind`` and ``index`` are those of the first device (so ``.kind``, ``.is_gpu`` and ``.has_float64``
    read as for one device); it equals only a placement with the same mesh, spec and devices, never a
    single :class:`Device`.

    Attributes:
        mesh: the mesh's ``(axis name, size)`` pairs, in mesh order.
        spec: the partition spec, one entry per array dimension: ``None`` (not split) or a tuple of the
            mesh axis names that split it.
        device_ids: the ids of the devices the array spans, in the mesh's order.

    Examples:
        >>> import unarray as ua
        >>> d = ua.ShardedDevice("cpu", 0, mesh=(("x", 2),), spec=(("x",), None), device_ids=(0, 1))
        >>> str(d)
        "cpu mesh('x': 2) spec P('x', None) over devices [0, 1]"
        >>> d.axis_of(0), d.shards, d == ua.Device("cpu")
        (('x',), 2, False)
    """

    mesh: tuple[tuple[str, int], ...]
    spec: tuple[tuple[str, ...] | None, ...]
    device_ids: tuple[int, ...]
    _key = attrgetter("kind", "index", "mesh", "spec", "device_ids")

    def __init__(self, kind: str, index: int = 0, mesh: tuple[tuple[str, int], ...] = (),
                 spec: tuple[tuple[str, ...] | None, ...] = (), device_ids: tuple[int, ...] = (), *,
                 library: str | None = None) -> None:
        vars(self).update(kind=kind, index=index, library=library, mesh=mesh, spec=spec, device_ids=device_ids)

    def __repr__(self) -> str:
        return f"ShardedDevice({str(self)!r})"

    def __str__(self) -> str:
        mesh = ", ".join(f"{a!r}: {n}" for a, n in self.mesh)
        spec = ", ".join("None" if e is None else repr(e[0]) if len(e) == 1 else repr(e) for e in self.spec)
        return f"{self.kind} mesh({mesh}) spec P({spec}) over devices {list(self.device_ids)}"

    def axis_of(self, dim: int) -> tuple[str, ...] | None:
        """The mesh axes that split dimension ``dim`` (None where it is whole on every device)."""
        return self.spec[dim]

    @property
    def shards(self) -> int:
        """How many pieces the array is cut into (the product of the sizes of the axes in the spec)."""
        sizes = dict(self.mesh)
        return math.prod(sizes[a] for e in self.spec for a in e or ())


class MeshDevice(Device):
    """Where a distributed array (a torch DTensor) lives: this process's device, the mesh and the placements.

    ``kind`` and ``index`` are the local device; a ``MeshDevice`` equals only a ``MeshDevice`` with the
    same mesh and placements (so a plain array never counts as on the same device as a DTensor).

    Attributes:
        mesh_shape: the DeviceMesh's shape, e.g. ``(2,)`` for two ranks.
        mesh_dim_names: the mesh's dimension names, or None.
        placements: one placement per mesh dimension, as torch writes them (``"Shard(dim=2)"``).

    Examples:
        >>> import unarray as ua
        >>> d = ua.MeshDevice("cuda", 0, (2,), ("cp",), ("Shard(dim=2)",))
        >>> str(d)
        'cuda:0 of mesh (2,) (cp) [Shard(dim=2)]'
        >>> d.local, d == ua.Device("cuda", 0)
        (Device('cuda:0'), False)
    """

    mesh_shape: tuple[int, ...]
    mesh_dim_names: tuple[str, ...] | None
    placements: tuple[str, ...]
    _key = attrgetter("kind", "index", "mesh_shape", "mesh_dim_names", "placements")

    def __init__(self, kind: str, index: int = 0, mesh_shape: tuple[int, ...] = (),
                 mesh_dim_names: tuple[str, ...] | None = None, placements: tuple[str, ...] = (), *,
                 library: str | None = None) -> None:
        vars(self).update(kind=kind, index=index, library=library, mesh_shape=mesh_shape,
                          mesh_dim_names=mesh_dim_names, placements=placements)

    def __str__(self) -> str:
        names = f" ({', '.join(self.mesh_dim_names)})" if self.mesh_dim_names else ""
        return f"{Device.__str__(self)} of mesh {self.mesh_shape}{names} [{', '.join(self.placements)}]"

    def __repr__(self) -> str:
        return f"MeshDevice({str(self)!r})"

    @property
    def local(self) -> Device:
        """This process's device, without the mesh."""
        return Device(self.kind, self.index)


def parse_device(spec: object) -> Device | None:
    """A ``Device`` from ``None``, a ``Device``, ``"cuda:1"``, ``"cpu"``, a TensorFlow device string
    (``"/job:localhost/replica:0/task:0/device:GPU:0"``, ``"/GPU:0"``) or a DLPack pair.

    Raises:
        ArgumentError: a string or pair that names no device.

    Examples:
        >>> parse_device("/job:localhost/replica:0/task:0/device:CPU:0")
        Device('cpu')
        >>> parse_device("GPU:1")
        Device('cuda:1')
    """
    if spec is None or isinstance(spec, Device):
        return spec
    if isinstance(spec, str):
        return _parse_string(spec)
    if isinstance(spec, tuple) and len(spec) == 2:
        try:
            return Device.from_dlpack(spec)
        except (TypeError, ValueError) as e:
            raise _bad_device(spec, str(e)) from None
    return None


def _parse_string(spec: str) -> Device:
    # Note: a TensorFlow string ends in "[device:]KIND:N"; only that last part names the device.
    text = spec.strip()
    if text.startswith("/"):
        text = text.rpartition("/")[2]
        text = text.partition("device:")[2] or text
    kind, _, idx = text.partition(":")
    kind = kind.strip().lower()
    kind = "cuda" if kind == "gpu" else kind
    idx = idx.strip()
    if not kind.isidentifier() or not (idx == "" or idx.isdigit()):
        raise _bad_device(spec, "expected 'kind' or 'kind:index' (e.g. 'cpu', 'cuda:1', '/device:GPU:0')")
    return Device(kind, 0 if kind == "cpu" or not idx else int(idx))


def _bad_device(spec: object, why: str) -> Exception:
    return ArgumentError(f"cannot read device {spec!r}: {why}")


# What a platform's driver leaves on a Linux machine: with none of these, no framework can see such a device.
_DRIVER_FILES = {
    "cuda": ("/dev/nvidiactl", "/dev/nvidia[0-9]*", "/proc/driver/nvidia", "/dev/dxg", "/dev/nvhost-*", "/dev/nvmap"),
    "rocm": ("/dev/kfd",),
    "tpu": ("/dev/accel*", "/dev/vfio/*"),
}

# A TPU reached over the network (Colab, a pod's worker) leaves no device file, only these settings.
TPU_SETTINGS = ("TPU_NAME", "COLAB_TPU_ADDR", "TPU_WORKER_HOSTNAMES", "TPU_ACCELERATOR_TYPE")


def no_driver(platform: str) -> str:
    """Why no device of ``platform`` can be visible here, read from the OS alone (no framework imported);
    "" where one may be (then the frameworks are asked)."""
    import glob
    import os
    import sys

    if platform == "mps":
        return "" if sys.platform == "darwin" else "Apple's Metal devices exist on macOS only"
    if platform not in _DRIVER_FILES or not sys.platform.startswith("linux"):
        return ""
    if platform == "tpu" and any(k in os.environ for k in TPU_SETTINGS):
        return ""  # a TPU reached over the network, or a TPU VM's settings
    files = _DRIVER_FILES[platform]
    if any(glob.glob(f) for f in files):
        return ""
    name = {"cuda": "CUDA", "rocm": "ROCm", "tpu": "TPU"}[platform]
    return f"no {name} driver on this machine: none of {', '.join(files)} exists"


def accelerator_free() -> bool:
    """True where the OS alone shows that no GPU or TPU can be visible (Linux with none of their drivers): there
    every framework's devices are the CPU's, known without importing it."""
    return all(no_driver(p) for p in ("cuda", "rocm", "tpu"))
