# The calls the public DLPack wrappers end in, for ua.to. Each is resolved once and probed on a small
# array; where an installed version lacks it or the probe fails, the public wrapper is used instead.
# The wrappers spend most of their time in Python (figures: docs/design-notes.md, "Handoff").
# What the wrappers do besides is kept here: JAX's device lookup (cached per DLPack device) and its
# stream exchange on GPUs, TensorFlow's context. What unarray already did is not repeated: JAX's
# dtype canonicalization is the identity once 64-bit imports without x64 mode are refused.
#
# JAX imports with copy=False: where it would copy (CPU buffers not 64-byte aligned) it raises,
# and ua.to makes the one counted copy itself.
from __future__ import annotations

import sys
from typing import Any

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
    """A DLPack capsule of a single-device JAX array (None where only the public wrapper will do).

    ``stream``: the consumer's CUDA stream (1 for the legacy default stream), which JAX makes wait
    for the array's pending work; None on the CPU."""
    e = _JAX[0] if _JAX else _jax_entry()
    if e is None or len(x._arrays) != 1:
        return None
    # Note: the export is of x's shard, a separate array object, as jax's to_dlpack does
    # (addressable_data(0)): exported from x itself, x.delete() with a view alive aborted the process
    # (XLA: "Non-zero type 1 hold on destruction").
    return e.export(x._fully_replicated_shard(), stream=stream)


_TORCH: list[Any] = []


def torch_from_capsule(cap: Any) -> Any:
    """``torch.utils.dlpack.from_dlpack`` of a bare capsule."""
    if not _TORCH:
        torch = sys.modules["torch"]
        _TORCH.append(getattr(torch._C, "_from_dlpack", None) or torch.utils.dlpack.from_dlpack)
    return _TORCH[0](cap)


_TF: list[Any] = []


def _tf_entry() -> Any:
    if not _TF:
        try:
            from tensorflow.python import pywrap_tfe
            from tensorflow.python.eager import context

            pair: Any = (pywrap_tfe.TFE_FromDlpackCapsule, pywrap_tfe.TFE_ToDlpackCapsule, context.context, context)
            context.context()._context_handle  # noqa: B018 (the attribute _handle reads, None before first use)
            context._context  # noqa: B018 (the global context.context() returns)
        except (ImportError, AttributeError):
            pair = None
        _TF.append(pair)
    return _TF[0]


def tf_from_capsule(cap: Any) -> Any:
    """``tf.experimental.dlpack.from_dlpack(cap)``."""
    e = _TF[0] if _TF else _tf_entry()
    if e is None:
        return sys.modules["tensorflow"].experimental.dlpack.from_dlpack(cap)
    ctx = e[2]()
    handle = ctx._context_handle
    if handle is None:  # the eager context starts on first use
        ctx.ensure_initialized()
        handle = ctx._context_handle
    return e[0](cap, handle)


def tf_from_export(x: Any) -> Any:
    """``tf.experimental.dlpack.from_dlpack(x.__dlpack__())`` once ``tf_from_capsule`` has run (for the C
    route, which hands any failure to the converter: an entry point missing, the context not started)."""
    e = _TF[0]
    return e[0](x.__dlpack__(), e[3]._context._context_handle)


def tf_capsule(t: Any) -> Any:
    """``tf.experimental.dlpack.to_dlpack(t)``."""
    e = _TF[0] if _TF else _tf_entry()
    if e is None:
        return sys.modules["tensorflow"].experimental.dlpack.to_dlpack(t)
    return e[1](t)
