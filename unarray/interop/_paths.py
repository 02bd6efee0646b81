"""The per-pair path table of ``ua.to`` and what a handoff does besides converting.

Path table: (source, target) -> converter chosen from measurements (_cpu.py on the CPU, _cuda.py on
CUDA, each converter with its figures). Besides: the copies a handoff makes where the target cannot
alias the source (an immutable source for a target without read-only arrays, a source-side compact
copy), moves within a library, and data pointers and sizes (the zero-copy proof, the byte counts).
Frameworks are reached through sys.modules (the source's library is already imported; the target
was named by the caller)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from unarray import _backends
from unarray._kernels.layout_route import contiguous
from unarray.interop._common import Immutable, LazyNumpy, NeedsCopy, Snapshot, mod
from unarray.interop._cpu import (
    aligned_copy,
    gathered,
    jax_to_np,
    jax_to_tf,
    jax_to_torch,
    np_to_jax,
    np_to_tf,
    np_to_torch,
    np_to_torch_promised,
    tf_to_jax,
    tf_to_np,
    tf_to_torch,
    to_jax,
    to_tf,
    torch_to_jax,
    torch_to_np,
    torch_to_tf,
)
from unarray.interop._cuda import (
    cupy_to_numba,
    cupy_to_torch,
    jax_to_cupy,
    jax_to_numba,
    numba_to_cupy,
    numba_to_jax,
    numba_to_torch,
    to_numba,
    torch_to_cupy,
)

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyNumpy(globals())


def generic(dst: str) -> Callable[[Any], Any]:
    def conv(x: Any) -> Any:
        if dst == "numpy":
            return np.from_dlpack(x)
        if dst == "torch":
            return mod("torch").from_dlpack(x)
        if dst == "cupy":
            return mod("cupy").from_dlpack(x)
        if dst == "jax":
            return to_jax(x)
        if dst == "tensorflow":
            return to_tf(x)
        if dst == "numba":
            return to_numba(x)
        if dst == "mlx":  # MLX copies every buffer it imports: a snapshot, counted (refused under copy=False)
            raise Snapshot("MLX imports foreign buffers by copying them", _backends.get("mlx").from_dlpack(x))
        raise NeedsCopy(f"no path to {dst}")

    return conv


PATHS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("numpy", "torch"): np_to_torch,
    ("torch", "numpy"): torch_to_np,
    ("numpy", "jax"): np_to_jax,
    ("torch", "jax"): torch_to_jax,
    ("cupy", "jax"): to_jax,
    ("jax", "numpy"): jax_to_np,
    ("jax", "torch"): jax_to_torch,
    ("numpy", "tensorflow"): np_to_tf,
    ("torch", "tensorflow"): torch_to_tf,
    ("jax", "tensorflow"): jax_to_tf,
    ("tensorflow", "numpy"): tf_to_np,
    ("tensorflow", "torch"): tf_to_torch,
    ("tensorflow", "jax"): tf_to_jax,
    ("torch", "cupy"): torch_to_cupy,
    ("cupy", "torch"): cupy_to_torch,
    ("torch", "numba"): to_numba,
    ("cupy", "numba"): cupy_to_numba,
    ("jax", "numba"): jax_to_numba,
    ("numba", "cupy"): numba_to_cupy,
    ("jax", "cupy"): jax_to_cupy,
    ("numba", "torch"): numba_to_torch,
    ("numba", "jax"): numba_to_jax,
}


def path(src: str, dst: str) -> Callable[[Any], Any]:
    fn = PATHS.get((src, dst))
    if fn is None:
        fn = PATHS[(src, dst)] = generic(dst)
    return fn


# -- immutable sources, targets without read-only arrays -------------------------------------
# JAX arrays and TensorFlow tensors are immutable; torch tensors, CuPy and Numba arrays cannot be
# read-only. DLPack gives such a target a writable alias, and a write through it would change the
# source behind its owner's back (an EagerTensor's cached constant, a JAX array a jitted function
# closed over). So such a handoff is one copy on the target's side (counted, never cached), or a
# refusal under copy=False, as for a read-only NumPy array handed to torch.
IMMUTABLE_SOURCES = frozenset({"jax", "tensorflow", "mlx"})
WRITABLE_ONLY = frozenset({"torch", "cupy", "numba"})


_NOUNS = {"jax": "JAX arrays", "tensorflow": "TensorFlow tensors", "mlx": "MLX arrays", "torch": "torch tensors",
          "cupy": "CuPy arrays", "numba": "Numba device arrays"}


def owned(src: str, dst: str) -> bool:
    """Whether a handoff from ``src`` to ``dst`` must be a copy that the target owns."""
    return src in IMMUTABLE_SOURCES and dst in WRITABLE_ONLY


def refusing_alias(conv: Callable[[Any], Any], src: str, dst: str) -> Callable[[Any], Any]:
    reason = (f"{_NOUNS[src]} are immutable and {_NOUNS[dst]} cannot be read-only: a write through an alias "
              f"would change the {src} array")

    def refuse(x: Any) -> Any:
        try:
            alias = conv(x)
        except Snapshot as e:  # a tf.Variable's current value: the target's copy of it all the same
            alias = e.value
        raise Immutable(reason, alias)

    refuse.__name__ = conv.__name__  # what ua.explain names (path_name)
    refuse.__module__ = conv.__module__
    return refuse


# -- the caller's promise not to write (ua.to(..., readonly=True)) ----------------------------
# Where the target cannot hold read-only memory, the promise makes the alias the handoff's result:
# the pair's own converter (an immutable source's alias), or a read-only NumPy array's alias.
PROMISED: dict[tuple[str, str], Callable[[Any], Any]] = {("numpy", "torch"): np_to_torch_promised}


def promised(src: str, dst: str) -> bool:
    """Whether ``readonly=True`` changes this pair's handoff (a copy becomes the alias)."""
    return owned(src, dst) or (src, dst) in PROMISED


def promised_path(src: str, dst: str) -> Callable[[Any], Any]:
    return PROMISED.get((src, dst)) or path(src, dst)


def owned_copy(dst: str, alias: Any) -> Any:
    """The target's own copy of ``alias`` (made on the target's current stream, which the alias's
    export ordered after the source's work)."""
    if dst == "torch":
        return alias.clone()
    if dst == "cupy":
        return alias.copy()
    if dst == "numba":
        from numba import cuda

        out = cuda.device_array(alias.shape, dtype=alias.dtype)
        out.copy_to_device(alias)
        return out
    raise NeedsCopy(f"no copy path to {dst}")


def path_name(src: str, dst: str) -> str:
    """The converter ``ua.to`` takes for this pair, for ``ua.explain``."""
    fn = path(src, dst)
    return f"DLPack ({dst}'s from_dlpack)" if fn.__name__ == "conv" else f"{fn.__module__}.{fn.__name__}"


# -- source-side compact copies (one copy, then a zero-copy path) ----------------------------

def compact_copy(src: str, x: Any) -> Any:
    if src == "numpy":
        return aligned_copy(x)
    if src == "torch":
        x = x.detach().resolve_conj().resolve_neg()
        if x.is_cuda and not x.is_contiguous():
            return _permuted_copy(src, x)
        return x.clone(memory_format=mod("torch").contiguous_format)
    if src == "cupy":
        if not x.flags.c_contiguous:
            return _permuted_copy(src, x)
        return mod("cupy").array(x, copy=True, order="C")
    if src == "jax":
        return mod("jax.numpy").array(x, copy=True)
    if src in ("tensorflow", "mlx"):
        return aligned_copy(np.asarray(x))
    if src == "numba":
        return mod("cupy").array(mod("cupy").asarray(x), copy=True)
    raise NeedsCopy(f"no copy path from {src}")


def _permuted_copy(src: str, x: Any) -> Any:
    """A compact copy of a strided GPU view, by ua.ascontiguousarray's route (its tiled transpose where
    that beats the library's own strided copy: a large permuted view)."""
    return contiguous(_backends.get(src), x)


def copy_for(src: str, dst: str, x: Any) -> tuple[Any, str]:
    """The one copy a handoff to ``dst`` makes of ``x`` when ``dst`` cannot alias it, and the library
    holding that copy.

    Note: a torch CPU tensor bound for JAX or TensorFlow is copied through NumPy onto a 64-byte
    boundary (one memcpy) up to 1 MiB, or larger where torch runs on at most 2 threads; above that
    Tensor.clone spreads the copy over torch's threads (docs/design-notes.md). A dtype NumPy lacks
    (bfloat16) takes the clone."""
    if src == "jax" and len(getattr(x, "_arrays", ())) > 1:  # sharded (jax_single refused it): gathered on the host
        return gathered(x), "numpy"
    torch = mod("torch") if src == "torch" else None
    if (torch is not None and dst in ("jax", "tensorflow") and x.device.type == "cpu"
            and (x.numel() * x.element_size() <= 1 << 20 or torch.get_num_threads() <= 2)):
        try:
            view = x.detach().resolve_conj().resolve_neg().numpy()
        except (RuntimeError, TypeError):
            pass
        else:
            return aligned_copy(view), "numpy"
    return compact_copy(src, x), kind_after_copy(src)


def move_within(kind: str, x: Any, native_device: Any, backend: Any) -> Any:
    if kind == "torch":
        return x.to(native_device)
    if kind == "jax":
        return mod("jax").device_put(x, native_device)
    return backend.to_device(x, native_device)


def kind_after_copy(src: str) -> str:
    return {"tensorflow": "numpy", "mlx": "numpy", "numba": "cupy"}.get(src, src)


# -- data pointers (zero-copy proof) --------------------------------------------------------

def data_ptr(kind: str, x: Any) -> int | None:
    try:
        if kind == "numpy":
            return int(x.__array_interface__["data"][0])
        if kind == "torch":
            return int(x.data_ptr())
        if kind == "jax":
            return int(x.unsafe_buffer_pointer())
        if kind == "cupy":
            return int(x.data.ptr)
        if kind == "numba":
            return int(x.__cuda_array_interface__["data"][0])
        if kind == "tensorflow":
            if "CPU" in (x.device or "CPU").upper():
                return int(np.asarray(x).__array_interface__["data"][0])
            return int(mod("torch").utils.dlpack.from_dlpack(mod("tensorflow").experimental.dlpack.to_dlpack(x))
                       .data_ptr())
    except Exception:
        return None
    return None


def nbytes(kind: str, x: Any) -> int:
    try:
        if kind == "torch":
            return int(x.numel() * x.element_size())
        if kind == "tensorflow":
            return int(x.shape.num_elements() * x.dtype.size)
        n = getattr(x, "nbytes", None)
        if n is not None:
            return int(n)
        return int(np.prod(x.shape) * np.dtype(x.dtype).itemsize)
    except Exception:
        return 0
