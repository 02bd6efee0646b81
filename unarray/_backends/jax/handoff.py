"""JAX's side of a handoff: its DLPack entry points (the calls jnp.from_dlpack and the export end in),
its refusals (64-bit imports without x64 mode, deleted and sharded arrays), its copies and signature,
and the fast paths with NumPy and torch. Imports JAX through sys.modules on first use."""

from __future__ import annotations

import sys
from typing import Any

from unarray._backends._handoff import FastPath, Gather, Handoff, LazyNumpy, NeedsCopy, OtherDevice, mod
from unarray._backends._host import aligned_copy, is_permutation, np_ptr, own_array, writable_view
from unarray._errors import DTypeError, HandoffError

np = LazyNumpy(globals())

# -- the calls jnp.from_dlpack and the export end in ------------------------------------------
# Each is resolved once and probed on a small array; where an installed version lacks it or the probe
# fails, the public wrapper is used instead (figures: docs/design-notes.md, "Handoff"). JAX's device
# lookup (cached per DLPack device) and its stream exchange on GPUs are kept; its dtype canonicalization
# is the identity once 64-bit imports without x64 mode are refused. Imports are copy=False: where JAX
# would copy (CPU buffers not 64-byte aligned) it raises, and ua.to makes the one counted copy itself.

_DL_PLATFORM = {1: "cpu", 2: "cuda", 3: "cuda", 10: "rocm"}
_HOST = (1, 3)  # CPU and pinned CUDA host memory: no stream argument


class _Jax:
    __slots__ = ("devices", "export", "import_", "typed")

    def __init__(self) -> None:
        from jax._src import xla_bridge
        from jax._src.lib import _jax, jaxlib_extension_version  # type: ignore[attr-defined]

        self.import_ = _jax.dlpack_managed_tensor_to_buffer
        self.export = _jax.buffer_to_dlpack_managed_tensor
        self.typed = jaxlib_extension_version >= 467  # the DLPack device type became an argument
        get_backend = xla_bridge.get_backend

        class Devices(dict[tuple[int, int], Any]):
            def __missing__(self, key: tuple[int, int]) -> Any:
                dev = get_backend(_DL_PLATFORM[key[0]]).device_from_local_hardware_id(key[1])
                self[key] = dev
                return dev

        self.devices = Devices()


_JAX: list[Any] = []  # [_Jax] or [None] (public wrappers)


def _jax_entry() -> Any:
    if not _JAX:
        try:
            import numpy as np

            e = _Jax()
            raw = np.zeros(128, np.uint8)
            at = raw.__array_interface__["data"][0]
            probe = raw[-at % 64:][:64].view(np.float32)  # 64-byte aligned: JAX aliases it
            out = _jax_import(e, probe, True)
            ok = out.unsafe_buffer_pointer() == at + (-at % 64) and out.shape == (16,) and str(out.dtype) == "float32"
            ok = ok and type(e.export(out._fully_replicated_shard(), stream=None)).__name__ == "PyCapsule"
        except Exception:
            ok = False
        _JAX.append(e if ok else None)
    return _JAX[0]


def _jax_import(e: Any, x: Any, stream_ok: bool, copy: bool | None = False) -> Any:
    kind, idx = x.__dlpack_device__()
    kind = int(kind)
    dev = e.devices[(kind, int(idx))]
    stream = None
    if stream_ok and kind not in _HOST:
        stream = dev.get_stream_for_external_ready_events()
    cap = x.__dlpack__(stream=stream) if stream_ok else x.__dlpack__()
    if e.typed:
        return e.import_(cap, dev, stream, copy, kind)
    return e.import_(cap, dev, stream, copy)


def jax_from_dlpack(x: Any, stream_ok: bool = True) -> Any:
    """``jnp.from_dlpack(x, copy=False)``; ``stream_ok=False`` for producers whose ``__dlpack__`` takes no stream."""
    e = _JAX[0] if _JAX else _jax_entry()
    try:
        if e is None:
            return sys.modules["jax.numpy"].from_dlpack(x, copy=False)
        try:
            return _jax_import(e, x, stream_ok)
        except KeyError:  # a DLPack device JAX has no platform for: the wrapper's error
            return sys.modules["jax.numpy"].from_dlpack(x, copy=False)
    except (RuntimeError, ValueError):
        # An empty array has no bytes to alias: JAX makes its own (copy=None copies nothing).
        if 0 not in tuple(x.shape):
            raise
        if e is None:
            return sys.modules["jax.numpy"].from_dlpack(x)
        return _jax_import(e, x, stream_ok, None)


def jax_capsule(x: Any, stream: int | None = None) -> Any:
    # A DLPack capsule of a single-device JAX array (None where only the public wrapper will do); stream: the
    # consumer's CUDA stream (1: the legacy default stream), which JAX makes wait for its pending work.
    e = _JAX[0] if _JAX else _jax_entry()
    if e is None or len(x._arrays) != 1:
        return None
    # Note: the export is of x's shard, a separate array object, as jax's to_dlpack does
    # (addressable_data(0)): exported from x itself, x.delete() with a view alive aborted the process
    # (XLA: "Non-zero type 1 hold on destruction").
    return e.export(x._fully_replicated_shard(), stream=stream)


_JAX_DL_DEVICE: dict[Any, Any] = {}


def jax_dlpack_device(x: Any) -> tuple[int, int]:
    # x.__dlpack_device__() is slow: read once per JAX device and memory kind (an array in pinned host
    # memory exports as host memory). A single-device sharding names its device, cheaper than x.device.
    s = x.sharding
    try:
        key = (s._device, s.memory_kind)
    except AttributeError:
        key = (x.device, s.memory_kind)
    out = _JAX_DL_DEVICE.get(key)
    if out is None:
        out = _JAX_DL_DEVICE[key] = tuple(x.__dlpack_device__())
    return out


# -- refusals and single-device views ---------------------------------------------------------

_WIDE = frozenset({"float64", "int64", "uint64", "complex128"})
_WIDE_BY_DTYPE: dict[Any, bool] = {}


def check_x64(x: Any) -> None:
    # Note: without x64 mode JAX silently narrows 64-bit imports to 32 bits: refuse instead.
    dt = x.dtype
    wide = _WIDE_BY_DTYPE.get(dt)
    if wide is None:
        wide = _WIDE_BY_DTYPE[dt] = str(dt).rpartition(".")[2] in _WIDE
    if wide and not mod("jax").config.read("jax_enable_x64"):
        raise DTypeError(f"a {x.dtype} array cannot enter JAX without x64 mode (JAX would narrow it to 32 bits); "
                         "call jax.config.update('jax_enable_x64', True) or cast first", backend="jax")


def jax_single(x: Any) -> tuple[Any, str]:
    """(x on one device, its platform): a replicated array's first device's copy (zero-copy); a sharded
    one raises Gather."""
    # Note: jaxlib's Array.platform() crashes the process (a segfault, jax 0.10 on the CPU) on a deleted
    # (donated) array; is_deleted() answers.
    if x.is_deleted():
        raise HandoffError("this JAX array has been deleted (donated to a jitted call, or .delete()): there is "
                           "no data to hand over; hand over the array before donating it", backend="jax")
    if len(getattr(x, "_arrays", ())) > 1:  # several devices hold it
        if not x.is_fully_replicated:
            raise Gather(f"this JAX array is sharded over {len(x._arrays)} devices ({x.sharding}); another "
                         "library gets it gathered into one buffer")
        x = x.addressable_data(0)  # every device holds all of it: one device's copy is handed over
    return x, str(x.platform())


# -- the fast paths with NumPy and torch ------------------------------------------------------
# Note: JAX's CPU client views only 64-byte aligned host buffers (XLA's allocator alignment) and
# refuses others after an export and a failed import; checked first, so that a buffer that must be
# copied goes straight to the copy.
JAX_ALIGN = 64
_JAX_UNALIGNED = f"JAX views only {JAX_ALIGN}-byte aligned host buffers"


def np_to_jax(x: Any) -> Any:
    # The import jnp.from_dlpack ends in; zero-copy where the buffer is 64-byte aligned, else JAX refuses
    # (copy=False) and ua.to copies once (jax.device_put always copies).
    # Note: JAX's DLPack import refuses read-only exports; JAX never writes into an imported buffer, so
    # a writable alias of the same memory is safe to hand it.
    check_x64(x)
    x = own_array(x)
    f = x.flags
    if not (f.c_contiguous or x.size <= 1) and (x.dtype.kind == "V" or not is_permutation(x)):
        raise NeedsCopy("JAX imports only compact buffers")
    if x.size and np_ptr(x) % JAX_ALIGN:
        raise NeedsCopy(_JAX_UNALIGNED)
    if x.dtype.kind == "V":  # ml_dtypes' bfloat16 and float8 have no DLPack code: JAX's own import aliases them
        return mod("jax").device_put(x, mod("jax").devices("cpu")[0])
    return jax_from_dlpack(writable_view(x))


def _from_torch(torch: Handoff) -> FastPath:
    plain = torch.plain

    def torch_to_jax(x: Any) -> Any:
        # The import jnp.from_dlpack ends in. On CUDA, JAX's stream for external events is passed to
        # __dlpack__, so torch orders its pending work before it.
        check_x64(x)
        x = plain(x)
        if x.is_cpu and x.numel() and x.data_ptr() % JAX_ALIGN:
            raise NeedsCopy(_JAX_UNALIGNED)
        return jax_from_dlpack(x)

    return FastPath(torch_to_jax)


def to_jax(producer: Any) -> Any:
    # CuPy and other DLPack producers.
    check_x64(producer)
    return jax_from_dlpack(producer)


def jax_to_np(x: Any) -> Any:
    # np.asarray(jax): a read-only view (JAX arrays are immutable), faster than np.from_dlpack.
    # On an accelerator np.asarray would copy to the host: that is a device change (ua.to device="cpu").
    x, platform = jax_single(x)
    if platform != "cpu":
        raise OtherDevice("NumPy arrays live on the CPU")
    return np.asarray(x)


def _to_torch(torch: Handoff) -> FastPath:
    adopt, adopt_capsule, stream_of = torch.adopt, torch.adopt_capsule, torch.consumer_stream

    def jax_to_torch(x: Any) -> Any:
        # JAX's export + torch._C._from_dlpack, skipping torch.from_dlpack's Python. On CUDA the export
        # names torch's current stream, as torch.from_dlpack does, so JAX orders its work before it.
        # Note: the result is a writable alias of an immutable JAX buffer (as torch.from_dlpack's is): the
        # route copies it (the pair is owned), so that no write through it can change the JAX array.
        x, platform = jax_single(x)
        if platform == "cpu":
            cap = jax_capsule(x)
        else:
            kind, index = jax_dlpack_device(x)
            cap = None
            if int(kind) == 2:  # CUDA: the stream torch.from_dlpack would name (1: the legacy default stream)
                stream = stream_of(int(index))
                cap = jax_capsule(x, stream or 1)
        return adopt(x) if cap is None else adopt_capsule(cap)

    return FastPath(jax_to_torch)


def _sig_jax(x: Any) -> Any:
    # JAX arrays are immutable; a deleted (donated) one must miss.
    return (x.is_deleted(),)


class JaxHandoff(Handoff):
    name = "jax"
    immutable = True
    noun = "JAX arrays"
    signature = staticmethod(_sig_jax)
    signature_reads = (("is_deleted", True),)
    fast_to = {
        # np.asarray, uncached; the C route's sp.buffer_array makes the check by reading the buffer (a JAX
        # array on a GPU, or a deleted one, exports none: BufferError, a refusal). Without it the converter
        # runs (a guard reading x.platform() would crash the process on a deleted array: jax_single).
        "numpy": FastPath(jax_to_np, cached=False,
                          guard=lambda sp: (None, sp.buffer_array) if hasattr(sp, "buffer_array") else None),
        "torch": _to_torch,
    }
    fast_from = {"numpy": FastPath(np_to_jax), "torch": _from_torch}
    # What the other side of a pair's fast path asks of JAX (Handoff): its import, its direct export, a cached
    # DLPack device, one device's array.
    export_capsule = staticmethod(jax_capsule)
    dlpack_device = staticmethod(jax_dlpack_device)
    one_device = staticmethod(jax_single)
    adopt = staticmethod(to_jax)

    def adopt_unordered(self, producer: Any) -> Any:
        return jax_from_dlpack(producer, stream_ok=False)

    def compact_copy(self, x: Any, backend: Any) -> Any:
        return mod("jax.numpy").array(x, copy=True)

    def copy_for(self, x: Any, dst: str, backend: Any) -> tuple[Any, str]:
        if len(getattr(x, "_arrays", ())) > 1:  # sharded (jax_single refused it): gathered on the host, where it lives
            if any(d.platform != "cpu" for d in x.sharding.device_set):
                raise HandoffError(f"this JAX array is sharded over {len(x._arrays)} {x.sharding} devices; handing it "
                                   "to another library would gather it across devices; gather it where it should "
                                   "live first (jax.device_put(x, jax.devices()[0])), or pass device='cpu' to gather "
                                   "it on the host", backend="jax")
            return aligned_copy(np.asarray(x)), "numpy"
        return self.compact_copy(x, backend), self.name

    def move_within(self, x: Any, device: Any, backend: Any) -> Any:
        return mod("jax").device_put(x, device)

    def data_ptr(self, x: Any) -> int | None:
        return int(x.unsafe_buffer_pointer())

    def host(self, x: Any) -> Any:
        y = x.addressable_data(0) if len(x._arrays) != 1 and x.is_fully_replicated else x
        if any(d.platform != "cpu" for d in y.devices()):
            y = y.copy()  # JAX keeps the first host copy of a device array: read the device memory afresh
        return np.asarray(y)


HANDOFF = JaxHandoff()
