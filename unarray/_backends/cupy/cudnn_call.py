# The per-call path of cuDNN attention on CuPy arrays (attention_cudnn.py): what one call's key is, the
# per-thread cache of prepared calls, and the graph's execute in the cheapest form the installed
# nvidia-cudnn-frontend offers. Pure functions but the launcher, which only calls the frontend.
from __future__ import annotations

import ctypes
import sys
from typing import Any

# Frontend releases whose private raw-pointer execute the GPU tests have held equal to the public execute;
# another release takes the public execute (its internals may have moved).
RAW_VERIFIED = ("1.32.",)


def call_key(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str,
             stream: int, window: tuple[Any, Any] = (None, None)) -> tuple[Any, ...]:
    """Everything ``prepare`` reads from one call's arrays and arguments, cheap to read: equal keys, equal
    problems. The pointers enter only as their 16-byte alignment, which cuDNN's graph assumes."""
    qd, kd, vd = q.data, k.data, v.data
    return (q.dtype, q.shape, q.strides, k.shape, k.strides, v.shape, v.strides, qd.device_id,
            not (qd.ptr | kd.ptr | vd.ptr) & 15, None if mask is None else (mask.shape, mask.dtype),
            bool(is_causal), float(scale), layout, stream, window)


def remember(cache: dict[Any, Any], key: Any, value: Any, size: int) -> Any:
    """Store ``value`` under ``key``, dropping the oldest entry once ``size`` are held; returns ``value``."""
    if len(cache) >= size:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def raw_order(ours: list[int], backend: list[int]) -> list[int] | None:
    """Where each slot of the backend's pointer array (``backend``, its uids in order) comes from in ours, or
    None when the two do not name the same tensors once each (the raw array would misplace a pointer)."""
    if len(set(ours)) != len(ours) or sorted(ours) != sorted(backend):
        return None
    return [ours.index(u) for u in backend]


class FirstWorking:
    """Runs ``forms[0]``, and on the first call only, while a form raises, the next; the form that ran is kept
    for every later call (``chosen``), whose errors are the kernel's and are raised (a frontend lacking a
    form refuses its arguments before launching anything)."""

    def __init__(self, forms: list[Any]) -> None:
        self.forms, self.chosen = forms, None

    def __call__(self, *args: Any) -> Any:
        if self.chosen is not None:
            return self.chosen(*args)
        for i, f in enumerate(self.forms):
            try:
                out = f(*args)
            except Exception:
                if i == len(self.forms) - 1:
                    raise
                continue
            self.chosen = f
            return out


def _uid(t: Any) -> int:
    get = getattr(t, "get_uid", None)
    return int(get() if callable(get) else t.uid)


def _backend_handle(handle: Any) -> int:
    # The cudnnHandle_t address under the frontend's handle object (a plain int in frontends without one).
    try:
        from cudnn._handle import to_backend_handle
    except ImportError:
        return int(handle)
    return int(to_backend_handle(handle) or 0)


def launcher(g: Any, tensors: tuple[Any, ...], handle: Any, ws_ptr: int) -> FirstWorking:
    """Graph ``g``'s execute on raw pointers, one per tensor of ``tensors`` in that order, with the workspace at
    ``ws_ptr`` (0: none), in the cheapest form the installed frontend offers."""
    forms: list[Any] = []
    try:
        uids = [_uid(t) for t in tensors]
    except Exception:
        uids = []
    ws_arg = ws_ptr or None
    low = getattr(g, "_lowered_graph", None)
    version = str(getattr(sys.modules.get("cudnn"), "__version__", ""))
    if uids and low is not None and version.startswith(RAW_VERIFIED):
        # Note: the frontend's own execute of a cuDNN-backend plan ends in this call (a pointer array in its
        # uid order) after re-reading every buffer; order and plan are fixed by the built graph: read once here.
        try:
            if g.selected_engine is not None:  # a plan of the frontend's Python engines: its own execute
                raise LookupError
            low._prepare_variant_pack_template()
            pos = raw_order(uids, [int(u) for u in low._get_variant_pack_uids_sorted()])
            cpp = g._materialize_backend_plan(g._plan_index).cpp_index if g._plans else None
            hb, index, raw = _backend_handle(handle), -1 if cpp is None else int(cpp), low._execute_with_raw_ptrs
            if pos is not None:
                arr = ctypes.c_int64 * len(pos)

                def execute_raw(*ptrs: int) -> None:
                    a = arr(*[ptrs[i] for i in pos])
                    raw(ctypes.addressof(a), len(pos), ws_ptr, hb, index)

                forms.append(execute_raw)
        except Exception:
            pass

    def execute_uids(*ptrs: int) -> None:
        g.execute(dict(zip(uids, ptrs, strict=True)), ws_arg, handle=handle)

    def execute_tensors(*ptrs: int) -> None:
        g.execute(dict(zip(tensors, ptrs, strict=True)), ws_arg, handle=handle)

    return FirstWorking([*forms, *([execute_uids] if uids else []), execute_tensors])
