"""TensorFlow's side of a handoff: its DLPack entry points (TFE_FromDlpackCapsule, TFE_ToDlpackCapsule),
its refusals and alignment needs, tf.Variable snapshots, and the fast paths with NumPy, torch and JAX.
Imports TensorFlow through sys.modules on first use."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from unarray._backends._handoff import (
    GUARD_ATTR,
    GUARD_BUFFER,
    UNCACHEABLE,
    FastPath,
    Handoff,
    LazyNumpy,
    NeedsCopy,
    OtherDevice,
    Snapshot,
    capsule_data,
    mod,
)
from unarray._backends._host import aligned_copy, np_ptr, own_array, writable_view
from unarray._errors import DTypeError

np = LazyNumpy(globals())

# -- the calls TensorFlow's DLPack wrappers end in (its context kept) ---------------------------

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


# -- imports: aligned, C-contiguous buffers only ---------------------------------------------
# Note: TensorFlow aliases a DLPack buffer at any address, but its kernels CHECK-fail (abort the
# process: "Check failed: IsAligned()") on tensors that are not EIGEN_MAX_ALIGN_BYTES-aligned.
TF_ALIGN = 64


def np_to_tf(x: Any) -> Any:
    # TFE_FromDlpackCapsule, zero-copy (tf.convert_to_tensor copies). TF refuses strided buffers and
    # needs aligned ones (the pointer read is the price of not aborting).
    x = own_array(x)
    f = x.flags
    if not (f.c_contiguous or x.size <= 1):
        raise NeedsCopy("TensorFlow imports only C-contiguous buffers")
    if x.size and np_ptr(x) % TF_ALIGN:
        raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
    if x.dtype.kind == "V" and x.dtype.name == "bfloat16":  # ml_dtypes' has no DLPack code: its bits, bitcast in place
        return mod("tensorflow").bitcast(tf_from_capsule(writable_view(x).view(np.uint16).__dlpack__()), "bfloat16")
    return tf_from_capsule(writable_view(x).__dlpack__())


def _from_torch(torch: Handoff) -> FastPath:
    plain = torch.plain

    def torch_to_tf(x: Any) -> Any:
        # torch.utils.dlpack.to_dlpack: C, where Tensor.__dlpack__ is Python.
        x = plain(x)
        if not x.is_contiguous():
            raise NeedsCopy("TensorFlow imports only C-contiguous buffers")
        if x.data_ptr() % TF_ALIGN and x.numel():
            raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
        return tf_from_capsule(x.__dlpack__() if x.is_cuda else mod("torch").utils.dlpack.to_dlpack(x))

    return FastPath(torch_to_tf)


def _from_jax(jax: Handoff) -> FastPath:
    one_device, export_capsule = jax.one_device, jax.export_capsule

    def jax_to_tf(x: Any) -> Any:
        x, platform = one_device(x)
        cpu = platform == "cpu"
        if x.unsafe_buffer_pointer() % TF_ALIGN and x.size:
            raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
        cap = export_capsule(x) if cpu else None
        return tf_from_capsule(x.__dlpack__() if cap is None else cap)

    return FastPath(jax_to_tf)


def capsule_to_tf(cap: Any) -> Any:
    # Any other producer (CuPy, Numba, a foreign object): the alignment read from the capsule itself,
    # which is dropped unconsumed where TF would abort on it.
    if capsule_data(cap)[0] % TF_ALIGN:
        raise NeedsCopy(f"TensorFlow kernels need {TF_ALIGN}-byte aligned buffers")
    return tf_from_capsule(cap)


# -- exports: EagerTensors; a tf.Variable hands over its current value ---------------------------

_TF_ON_CPU: dict[str, bool] = {}


@functools.cache
def _eager_type() -> Any:
    from tensorflow.python.framework.ops import EagerTensor

    return EagerTensor


def _is_eager(x: Any) -> bool:
    return type(x) is _eager_type()


_VARIABLE = ("a tf.Variable changes in place, and what is handed over is its current value, which a later "
             "assign does not reach (TensorFlow copies the buffer on that write)")


def _snapshot(x: Any, conv: Callable[[Any], Any]) -> Snapshot:
    # Note: a tf.Variable hands over its current value: ReadVariableOp's tensor shares the variable's
    # buffer until the next write, which copies it: a copy deferred, counted as one (the route's refusal).
    UNCACHEABLE.add(type(x))
    return Snapshot(_VARIABLE, conv(mod("tensorflow").convert_to_tensor(x)))


def tf_to_np(x: Any) -> Any:
    # EagerTensor._numpy(): zero-copy on the CPU (Tensor.numpy() copies). Note: read-only, as
    # EagerTensors are immutable.
    if not _is_eager(x):
        raise _snapshot(x, tf_to_np)
    dev = x.device
    cpu = _TF_ON_CPU.get(dev)
    if cpu is None:
        cpu = _TF_ON_CPU[dev] = "CPU" in (dev or "CPU").upper()
    if not cpu:
        raise OtherDevice("NumPy arrays live on the CPU")
    out = x._numpy()
    if isinstance(out, np.ndarray):  # (a 0-d tensor gives a NumPy scalar: immutable already)
        out.flags.writeable = False
    return out


def _to_torch(torch: Handoff) -> FastPath:
    adopt_capsule = torch.adopt_capsule

    def tf_to_torch(x: Any) -> Any:
        # The calls torch's and TF's DLPack wrappers end in.
        if not _is_eager(x):
            raise _snapshot(x, tf_to_torch)
        return adopt_capsule(tf_capsule(x))

    return FastPath(tf_to_torch, cached=False)


def _to_jax(jax: Handoff) -> FastPath:
    adopt = jax.adopt_unordered

    def tf_to_jax(x: Any) -> Any:
        # The import jnp.from_dlpack ends in (TensorFlow exports __dlpack__, without a stream argument): zero-copy.
        if not _is_eager(x):
            raise _snapshot(x, tf_to_jax)
        return adopt(x)

    return FastPath(tf_to_jax)


def _to_np_guard(sp: Any) -> tuple[Any, Callable[[Any], Any]] | None:
    # tf_to_np in C: a device the converter found on the CPU (_TF_ON_CPU), then _numpy(); on an EagerTensor
    # exactly (its status errors are the converter's to translate: the C route hands over any failure).
    # The result is marked read-only in C (read_only_result), which needs NumPy's headers.
    if not hasattr(sp, "buffer_array"):
        return None
    eager = _eager_type()
    return (GUARD_ATTR, eager, "device", False, _TF_ON_CPU), eager._numpy_internal


class TensorflowHandoff(Handoff):
    name = "tensorflow"
    immutable = True
    noun = "TensorFlow tensors"
    copies_into = "numpy"
    lands_on_host = True
    fast_to = {
        "numpy": FastPath(tf_to_np, cached=False, guard=_to_np_guard, read_only_result=True),
        "torch": _to_torch,
        "jax": _to_jax,
    }
    fast_from = {
        # np_to_tf in C: a writable, C-contiguous, TF_ALIGN-aligned buffer (cached route: a first sight only).
        "numpy": FastPath(np_to_tf, guard=lambda sp: ((GUARD_BUFFER, TF_ALIGN), tf_from_export)),
        "torch": _from_torch,
        "jax": _from_jax,
    }

    adopt_capsule = staticmethod(capsule_to_tf)

    def adopt(self, producer: Any) -> Any:
        return capsule_to_tf(producer.__dlpack__())

    adopt_foreign = adopt

    def adopt_host(self, y: Any) -> Any:
        return np_to_tf(aligned_copy(y) if not y.flags.c_contiguous else y)

    def check_source(self, x: Any, dst: str) -> None:
        dt = x.dtype
        if getattr(dt, "name", "") in ("string", "resource", "variant"):
            raise DTypeError(f"a TensorFlow tensor of dtype {dt.name} has no counterpart in {dst}; convert it "
                             "with TensorFlow's own ops first", backend=dst)

    def compact_copy(self, x: Any, backend: Any) -> Any:
        return aligned_copy(np.asarray(x))

    def data_ptr(self, x: Any) -> int | None:
        if "CPU" in (x.device or "CPU").upper():
            return int(np.asarray(x).__array_interface__["data"][0])
        return int(mod("torch").utils.dlpack.from_dlpack(mod("tensorflow").experimental.dlpack.to_dlpack(x))
                   .data_ptr())

    def nbytes(self, x: Any) -> int:
        return int(x.shape.num_elements() * x.dtype.size)

    def host(self, x: Any) -> Any:
        return np.asarray(x._numpy() if hasattr(x, "_numpy") else x.numpy())


HANDOFF = TensorflowHandoff()
