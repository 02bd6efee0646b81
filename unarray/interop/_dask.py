"""``ua.to`` to and from dask (the lazy backend), outside the per-pair route table.

An eager array becomes a dask array by wrapping (``dask.array.from_array``: the graph holds the array
and reads views of it, no copy), after a zero-copy handoff to NumPy (CPU) or CuPy (CUDA) where it is of
another library. A dask array becomes an eager one only by computing it, with the caller's dask
scheduler: counted in ``ua.stats()`` (``computes``, and as one copy), refused under ``copy=False``, and
never done implicitly (a dask operand leads a mixed call, so nothing computes it to join another).
Nothing here imports dask: the dask backend module does, and it is loaded once a dask array is seen or
``"dask"`` is named.
"""

from __future__ import annotations

from typing import Any

from unarray._backends import handoff
from unarray._backends._handoff import HOST, STATS, lock
from unarray._devices import Device, parse_device
from unarray._errors import ArgumentError, HandoffError

# ua.to's public entry points: where a dask array may be computed (on request). Any other op that hands
# a dask array over is a mixed call, where computing would be silent.
_EXPLICIT = frozenset({"to", "from_dlpack"})


def to(x: Any, src: Any, dst: Any, device: Any, copy: bool | None, chunks: Any, op: str) -> tuple[Any, str | None]:
    """(the result, None), or (an eager array, the library ``ua.to`` hands it to next): an eager array goes to
    the library of the lazy one's chunks first (then ``dst.wrap``), a computed one on to its target."""
    if not dst.lazy:
        if chunks is not None:
            raise ArgumentError(f"chunks= applies to a lazy backend only, got backend={dst.name!r}; leave chunks "
                                "out, or hand the array to a lazy backend", op=op, backend=dst.name)
        return _computed(x, src, dst, device, copy, op)
    if src.lazy:
        _same_place(x, src, device, op)
        out = x if chunks is None else x.rechunk(chunks)  # lazy: the rechunk runs with the graph
        with lock:
            STATS["zero_copy"] += 1
        return (out.copy() if copy is True else out), None
    return x, handoff(dst.name).chunk_library(src.device_of(x).kind)


def _computed(x: Any, src: Any, dst: Any, device: Any, copy: bool | None, op: str) -> tuple[Any, str | None]:
    if copy is False:
        raise HandoffError(f"handing a {src.name} array to {dst.name} computes it into a new {dst.name} array (a "
                           f"copy), but copy=False; pass copy=None to compute, or keep computing with {src.name} (ua "
                           f"ops on the {src.name} array stay lazy)", op=op, backend=src.name)
    if op not in _EXPLICIT:
        raise never_joined(src, dst, op)
    where = src.device_of(x)
    if device is None and dst.name == HOST and where.kind != "cpu":
        raise HandoffError(f"this {src.name} array's chunks are on {where}, and {handoff(dst.name).noun} live on the "
                           "CPU: computing it here would also move it; pass device='cpu' to compute and move it",
                           op=op, backend=dst.name)
    out = x.compute()  # the caller's scheduler (dask.config / a distributed Client), as x.compute() would use
    n = int(getattr(out, "nbytes", 0))
    with lock:
        STATS["computes"] += 1
        STATS["copies"] += 1
        STATS["bytes_copied"] += n
    lib = type(out).__module__.partition(".")[0]
    return out, None if lib == dst.name and device is None else dst.name


def never_joined(src: Any, dst: Any, op: str) -> HandoffError:
    return HandoffError(f"a {src.name} array is never computed to join a {dst.name} array (it would run the whole "
                        f"graph silently); compute it first with ua.to(x, {dst.name!r}), or make the other operand "
                        f"lazy with ua.to(y, {src.name!r})", op=op, backend=src.name)


def _same_place(x: Any, src: Any, device: Any, op: str) -> None:
    if device is None:
        return
    want = device if isinstance(device, Device) else parse_device(device)
    here = src.device_of(x)
    if want != here:
        raise HandoffError(f"a {src.name} array's chunks are on {here}; moving them to {want} is a per-chunk copy "
                           "unarray does not schedule; map the chunks yourself (x.map_blocks with the target "
                           "library's asarray) or compute first", op=op, backend=src.name)
