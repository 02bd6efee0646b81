"""The path of a handoff between two libraries, and what a handoff does besides converting.

Path: what the two libraries declare (unarray/_backends/<lib>/handoff.py): a fast path one of them
declares for the pair, else the hub (the source exports, the target adopts). Besides: the copies a
handoff makes where the target cannot alias the source (an immutable source for a target without
read-only arrays, a source-side compact copy), moves within a library, and data pointers and sizes (the
zero-copy proof, the byte counts). Nothing here names a library: each step asks the one it concerns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from unarray import _backends
from unarray._backends import _handoff
from unarray._backends import handoff as lib
from unarray._backends._handoff import FastPath
from unarray.interop._common import Immutable, Snapshot

_PAIRS: dict[tuple[str, str], FastPath] = {}


def fast(src: str, dst: str) -> FastPath:
    """The pair's path as the two libraries declare it (made once per pair)."""
    p = _PAIRS.get((src, dst))
    if p is None:
        p = _PAIRS[(src, dst)] = _handoff.pair(lib(src), lib(dst))
    return p


def path(src: str, dst: str) -> Callable[[Any], Any]:
    return fast(src, dst).convert


# -- immutable sources, targets without read-only arrays -------------------------------------
# DLPack gives a target without read-only arrays a writable alias, and a write through it would
# change an immutable source behind its owner's back (an EagerTensor's cached constant, a JAX array a
# jitted function closed over). So such a handoff is one copy on the target's side (counted, never
# cached), or a refusal under copy=False, as for a read-only NumPy array handed to torch.

def owned(src: str, dst: str) -> bool:
    """Whether a handoff from ``src`` to ``dst`` must be a copy that the target owns."""
    return lib(src).immutable and lib(dst).writable_only


def refusing_alias(conv: Callable[[Any], Any], src: str, dst: str) -> Callable[[Any], Any]:
    reason = (f"{lib(src).noun} are immutable and {lib(dst).noun} cannot be read-only: a write through an alias "
              f"would change the {src} array")

    def refuse(x: Any) -> Any:
        try:
            alias = conv(x)
        except Snapshot as e:  # a value changing in place: its current value, the target's copy all the same
            alias = e.value
        raise Immutable(reason, alias)

    refuse.__name__ = conv.__name__  # what ua.explain names (name_of)
    refuse.__module__ = conv.__module__
    return refuse


# -- the caller's promise not to write (ua.to(..., readonly=True)) ----------------------------
# Where the target cannot hold read-only memory, the promise makes the alias the handoff's result:
# the pair's own converter (an immutable source's alias), or the promised converter a fast path declares.

def promised(src: str, dst: str) -> bool:
    """Whether ``readonly=True`` changes this pair's handoff (a copy becomes the alias)."""
    return owned(src, dst) or fast(src, dst).promised is not None


def promised_path(src: str, dst: str) -> Callable[[Any], Any]:
    p = fast(src, dst)
    return p.promised or p.convert


def owned_copy(dst: str, alias: Any) -> Any:
    """The target's own copy of ``alias`` (made on the target's current stream, which the alias's
    export ordered after the source's work)."""
    return lib(dst).owned_copy(alias)


def name_of(src: str, dst: str, fn: Callable[[Any], Any]) -> str:
    """What ``ua.explain`` names for the converter ``fn`` a route of this pair runs."""
    return _handoff.path_name(lib(src), lib(dst), fn)


def path_name(src: str, dst: str) -> str:
    """The converter ``ua.to`` takes for this pair, for ``ua.explain``."""
    return name_of(src, dst, path(src, dst))


# -- source-side compact copies (one copy, then a zero-copy path) ----------------------------

def compact_copy(src: str, x: Any) -> Any:
    return lib(src).compact_copy(x, _backends.get(src))


def copy_for(src: str, dst: str, x: Any) -> tuple[Any, str]:
    """The one copy a handoff to ``dst`` makes of ``x`` when ``dst`` cannot alias it, and the library
    holding that copy (the source's choice: its handoff's copy_for)."""
    return lib(src).copy_for(x, dst, _backends.get(src))


def move_within(kind: str, x: Any, native_device: Any, backend: Any) -> Any:
    return lib(kind).move_within(x, native_device, backend)


def kind_after_copy(src: str) -> str:
    return lib(src).copies_into or src


# -- data pointers (zero-copy proof) --------------------------------------------------------

def data_ptr(kind: str, x: Any) -> int | None:
    try:
        return lib(kind).data_ptr(x)
    except Exception:
        return None


def nbytes(kind: str, x: Any) -> int:
    try:
        return lib(kind).nbytes(x)
    except Exception:
        return 0
