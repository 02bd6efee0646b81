# Attention for CuPy arrays through cuDNN's fused SDPA, built with NVIDIA's cuDNN frontend
# (``nvidia-cudnn-frontend``, ``import cudnn``): a graph per problem (shapes, strides, dtype, causal,
# mask, scale, device), run on raw device pointers on CuPy's current stream. No other framework is
# imported. The rules that decide which inputs cuDNN gets are pure functions of shapes, strides and
# dtypes (tested without a GPU); whatever they or cuDNN's own check_support() refuse goes back to
# the routes every backend has (torch's kernels when imported, else the blocked online-softmax).
from __future__ import annotations

import ctypes
import glob
import math
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any

from unarray._backends.cupy.cudnn_call import call_key, launcher, remember

HALF = ("float16", "bfloat16")
MAX_HEAD_DIM = 256  # cuDNN's fused SDPA forward: head dims up to 256, multiples of 8 (16-byte rows)
ALIGN = 8  # elements of a half-precision dtype in 16 bytes: strides and bias rows are multiples of it
CACHE_SIZE = 256
FAST_SIZE = 64  # prepared calls remembered per thread (each holds its graph and workspace alive)
FAST = True  # prepared calls and launchers; off: each call re-derives its problem (benchmarks/gpu/cudnn_host_cost.py)


# -- the problem as cuDNN sees it: 4-D (B, H, S, D) with element strides (pure) ------------------------
@dataclass(frozen=True)
class Operand:
    """A q, k, v or output array as cuDNN's (B, H, S, D) view: dims and element strides."""

    dims: tuple[int, int, int, int]
    strides: tuple[int, int, int, int]


def as_bhsd(shape: tuple[int, ...], strides: tuple[int, ...], layout: str) -> Operand | None:
    """``(*B, H, S, D)`` ("bhsd") or ``(*B, S, H, D)`` ("bshd") as one 4-D view, or None when the batch
    dimensions cannot be merged into one without a copy (element strides in, element strides out)."""
    *batch, a, b, d = shape
    *bstrides, sa, sb, sd = strides
    h, s, sh, ss = (a, b, sa, sb) if layout == "bhsd" else (b, a, sb, sa)
    n, stride = 1, None
    for size, st in zip(batch[::-1], bstrides[::-1], strict=True):
        if size == 1:
            continue
        if stride is None:
            stride = st
        elif st != stride * n:
            return None
        n *= size
    if stride is None:  # no batch dimension of more than one element: any stride addresses it
        stride = max(h * sh, s * ss, d * sd, 1)
    return Operand((n, h, s, d), (stride, sh, ss, sd))


def out_operand(batch: int, hq: int, sq: int, dv: int, layout: str) -> Operand:
    """The contiguous output cuDNN writes, in the caller's layout."""
    if layout == "bhsd":
        return Operand((batch, hq, sq, dv), (hq * sq * dv, sq * dv, dv, 1))
    return Operand((batch, hq, sq, dv), (sq * hq * dv, dv, hq * dv, 1))


def _tidy(op: Operand) -> Operand:
    # A dimension of one element is never stepped over; cuDNN still checks its stride's alignment.
    span = max((n * st for n, st in zip(op.dims, op.strides, strict=True) if n != 1), default=1)
    strides = tuple(span if n == 1 and i < 3 else st for i, (n, st) in enumerate(zip(op.dims, op.strides, strict=True)))
    return Operand(op.dims, strides)  # type: ignore[arg-type]


def refusal(dtype: str, q: Operand | None, k: Operand | None, v: Operand | None, is_causal: bool,
            device_kind: str, window: tuple[Any, Any] = (None, None)) -> str | None:
    """Why cuDNN's SDPA cannot take these inputs without a copy (None: it may; check_support decides)."""
    if dtype not in HALF:
        return f"cuDNN's fused SDPA takes float16 and bfloat16, not {dtype}"
    if device_kind != "cuda":
        return f"cuDNN runs on NVIDIA GPUs, not {device_kind}"
    if q is None or k is None or v is None:
        return "the batch dimensions of q, k or v cannot be merged into one without a copy"
    (b, hq, sq, d), (_, hk, sk, dv) = q.dims, v.dims
    if 0 in (b, hq, sq, d, hk, sk, dv):
        return "zero-size inputs"
    if max(d, dv) > MAX_HEAD_DIM or d % ALIGN or dv % ALIGN:
        return f"head dims D={d}, Dv={dv}: cuDNN takes multiples of {ALIGN} up to {MAX_HEAD_DIM}"
    if is_causal and sq > sk:
        return f"causal with Sq={sq} > Sk={sk} leaves rows with no key"
    if window != (None, None) and sq > sk:
        return f"a window with Sq={sq} > Sk={sk} may leave rows with no key"
    for name, op in (("q", q), ("k", k), ("v", v)):
        t = _tidy(op)
        if t.strides[3] != 1 or any(st <= 0 or st % ALIGN for st in t.strides[:3]):
            return (f"{name}'s element strides {op.strides} (as B, H, S, D): cuDNN needs the head dim contiguous "
                    f"and the others positive multiples of {ALIGN}")
    return None


@dataclass(frozen=True)
class MaskPlan:
    """How a mask reaches cuDNN: an additive bias (mb, mh, Sq, Sk) in q's dtype, rows padded to ``row``."""

    kind: str  # "bool" or "additive"
    batch: int  # 1 (broadcast over the batch) or B
    heads: int  # 1 (broadcast over the heads) or Hq
    row: int  # the bias's row stride (Sk rounded up to a multiple of ALIGN)


def mask_plan(mask_shape: tuple[int, ...], mask_dtype: str, batch: tuple[int, ...], hq: int, sq: int,
              sk: int) -> MaskPlan:
    """The bias a mask of ``mask_shape`` (broadcastable to ``(*batch, Hq, Sq, Sk)``) becomes."""
    full = (1,) * (len(batch) + 3 - len(mask_shape)) + tuple(mask_shape)
    mb = 1 if all(n == 1 for n in full[:-3]) else math.prod(batch)
    return MaskPlan("bool" if mask_dtype == "bool" else "additive", mb, hq if full[-3] != 1 else 1,
                    -(-sk // ALIGN) * ALIGN)


def cache_key(dtype: str, q: Operand, k: Operand, v: Operand, o: Operand, mask: MaskPlan | None,
              is_causal: bool, scale: float, device: int, window: tuple[Any, Any] = (None, None)) -> tuple[Any, ...]:
    """Everything a built graph depends on: one graph per distinct key."""
    return (dtype, _tidy(q), _tidy(k), _tidy(v), o, mask, bool(is_causal), float(scale), int(device), window)


# -- loading the library ---------------------------------------------------------------------------------
_STATE: dict[str, tuple[Any, str | None]] = {}
_LOCK = threading.Lock()


def library() -> tuple[Any, str | None]:
    """``(cudnn module, None)`` when cuDNN's frontend and backend load, else ``(None, why)``. Cached."""
    if "loaded" not in _STATE:
        with _LOCK:
            if "loaded" not in _STATE:
                _STATE["loaded"] = _load()
    return _STATE["loaded"]


def _load() -> tuple[Any, str | None]:
    try:
        import cudnn
    except Exception as e:  # ImportError, or the package's own assertion on several libcudnn copies
        return None, (f"nvidia-cudnn-frontend is not importable ({type(e).__name__}: {e}); "
                      "pip install nvidia-cudnn-frontend")
    try:
        cudnn.backend_version()
    except Exception:
        # The frontend looks in its own site-packages and the linker's path; a pip cuDNN
        # (nvidia-cudnn-cu12/13, as torch and JAX install it) may sit on another sys.path entry.
        path = _find_libcudnn()
        if path is None:
            return None, "libcudnn.so.9 was not found (pip install nvidia-cudnn-cu12 or -cu13)"
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            cudnn._pybind_module._set_dlhandle_cudnn(ctypes.cast(lib._handle, ctypes.c_void_p).value)
            cudnn.backend_version()
        except Exception as e:
            return None, f"{path} did not load ({type(e).__name__}: {e})"
    try:  # Note: cuDNN compiles some SDPA kernels at run time with NVRTC; load the pip copy if there is one.
        from cuda.pathfinder import load_nvidia_dynamic_lib

        load_nvidia_dynamic_lib("nvrtc")
    except Exception:
        pass
    return cudnn, None


def _find_libcudnn() -> str | None:
    for root in sys.path:
        for sub in ("nvidia/cudnn/lib", "nvidia/cu13/lib", "nvidia/cu12/lib"):
            path = os.path.join(root or ".", sub, "libcudnn.so.9")
            if os.path.exists(path):
                return path
            found = sorted(glob.glob(os.path.join(root or ".", sub, "libcudnn.so.9*")))
            if found:
                return found[0]
    return None


def versions() -> str:
    """"nvidia-cudnn-frontend X.Y.Z, cuDNN A.B.C" (the loaded library's versions)."""
    cudnn, _ = library()
    v = int(cudnn.backend_version())
    return f"nvidia-cudnn-frontend {cudnn.__version__}, cuDNN {v // 10000}.{v % 10000 // 100}.{v % 100}"


# -- graphs and handles ----------------------------------------------------------------------------------
@dataclass
class Built:
    graph: Any
    tensors: tuple[Any, ...]  # q, k, v, o[, bias] graph tensors
    workspace: int
    plan: str


_GRAPHS: dict[tuple[Any, ...], Built | str] = {}
_HANDLES = threading.local()


def _local() -> Any:
    # Per thread: cuDNN handles are not shared across threads, nor what is prepared with them.
    t = _HANDLES
    if not hasattr(t, "by_device"):
        t.by_device, t.streams, t.workspaces, t.fast = {}, {}, {}, {}
    return t


def _handle(cudnn: Any, device: int, stream: int) -> Any:
    t = _local()
    h = t.by_device.get(device)
    if h is None:
        h = t.by_device[device] = cudnn.create_handle()  # on the current device (the caller's array's)
    _on_stream(cudnn, t, h, device, stream)
    return h


def _on_stream(cudnn: Any, t: Any, h: Any, device: int, stream: int) -> None:
    if t.streams.get(device) != stream:  # the handle is this module's own: only here is its stream set
        cudnn.set_stream(h, stream)
        t.streams[device] = stream


def _workspace(device: int, stream: int, size: int) -> Any:
    # One buffer per (device, stream), grown as needed: kernels on one stream run in order, so a call's
    # kernel never overlaps the previous call's use of it; a buffer is never shared across streams.
    import cupy

    t = _local()
    ws = t.workspaces.get((device, stream))
    if ws is None or ws.nbytes < size:
        ws = t.workspaces[(device, stream)] = cupy.empty((size,), dtype=cupy.uint8)
    return ws


def _build(cudnn: Any, handle: Any, dtype: str, q: Operand, k: Operand, v: Operand, o: Operand,
           mask: MaskPlan | None, is_causal: bool, scale: float, window: tuple[Any, Any] = (None, None)) -> Built:
    dt = cudnn.data_type.HALF if dtype == "float16" else cudnn.data_type.BFLOAT16
    f32 = cudnn.data_type.FLOAT
    g = cudnn.pygraph(io_data_type=dt, intermediate_data_type=f32, compute_data_type=f32, handle=handle)
    tq, tk, tv = (g.tensor(name=n, dim=list(a.dims), stride=list(a.strides), data_type=dt)
                  for n, a in (("q", _tidy(q)), ("k", _tidy(k)), ("v", _tidy(v))))
    kw: dict[str, Any] = {"generate_stats": False, "attn_scale": float(scale)}
    sq, sk = q.dims[2], k.dims[2]
    if is_causal and (sq == sk or mask is None):
        # Note: query i attends keys j <= i + Sk - Sq (bottom-right). cuDNN takes a bottom-right diagonal only
        # without a bias; with one (Sq != Sk) the causal bound is folded into the bias (_bias) instead.
        align = cudnn.diagonal_alignment.TOP_LEFT if sq == sk else cudnn.diagonal_alignment.BOTTOM_RIGHT
        kw.update(diagonal_alignment=align, diagonal_band_right_bound=0)
    left, right = window
    if left is not None or right is not None:
        # Note: a window (no mask beside it: refused in _prepare), aligned bottom-right as is_causal: key j is kept
        # for query i where p_i - left <= j <= p_i + right, p_i = i + Sk - Sq; cuDNN's left bound is exclusive.
        kw["diagonal_alignment"] = cudnn.diagonal_alignment.BOTTOM_RIGHT
        if right is not None:
            kw["diagonal_band_right_bound"] = min(right, 0) if is_causal else right
        if left is not None:
            kw["diagonal_band_left_bound"] = left + 1
    if mask is not None:
        kw["bias"] = g.tensor(name="bias", dim=[mask.batch, mask.heads, sq, sk],
                              stride=[mask.heads * sq * mask.row, sq * mask.row, mask.row, 1], data_type=dt)
    to, _ = g.sdpa(tq, tk, tv, **kw)
    to.set_output(True).set_dim(list(o.dims)).set_stride(list(o.strides)).set_data_type(dt)
    tensors = [tq, tk, tv, to] + ([kw["bias"]] if mask is not None else [])
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    try:
        plan = str(g.get_plan_name_at_index(g._plan_index))
    except Exception:
        plan = ""
    return Built(g, tuple(tensors), int(g.get_workspace_size()), plan)


def _graph(cudnn: Any, handle: Any, key: tuple[Any, ...], args: tuple[Any, ...]) -> Built | str:
    hit = _GRAPHS.get(key)
    if hit is not None:
        return hit
    with _LOCK:
        hit = _GRAPHS.get(key)
        if hit is None:
            try:
                hit = _build(cudnn, handle, *args)
            except Exception as e:  # check_support's refusal, or a backend without this engine
                hit = f"cuDNN declined the graph ({type(e).__name__}: {' '.join(str(e).split())[:300]})"
            remember(_GRAPHS, key, hit, CACHE_SIZE)
    return hit


# -- the route -------------------------------------------------------------------------------------------
@dataclass
class Problem:
    cudnn: Any
    built: Built
    q: Operand
    k: Operand
    mask: MaskPlan | None
    batch: tuple[int, ...]
    out_shape: tuple[int, ...]
    layout: str
    handle: Any
    launch: Any = None  # execute on (q, k, v, out) pointers with the workspace held below (no mask)
    workspace: Any = None
    window: tuple[Any, Any] = (None, None)


def _elements(x: Any) -> tuple[int, ...]:
    item = x.dtype.itemsize
    return tuple(s // item if s % item == 0 else -1 for s in x.strides)


def prepare(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str,
            window: tuple[Any, Any] = (None, None)) -> Problem | str:
    """The built graph for these CuPy arrays, or why cuDNN does not take them. ``window``: (left, right), each an
    int or None, aligned bottom-right (the front end's window)."""
    import cupy

    dtype = q.dtype.name
    if dtype not in HALF:  # Note: the common case, answered before any import
        return refusal(dtype, None, None, None, is_causal, "cuda") or ""
    cudnn, why = library()
    if cudnn is None:
        return why or ""
    if not FAST:
        return _prepare(cudnn, q, k, v, mask, is_causal, scale, layout, window)
    stream, device = cupy.cuda.get_current_stream().ptr, q.data.device_id
    key = call_key(q, k, v, mask, is_causal, scale, layout, stream, window)
    t = _local()
    hit: Problem | str | None = t.fast.get(key)
    if hit is None:
        hit = _prepare(cudnn, q, k, v, mask, is_causal, scale, layout, window)
        if not isinstance(hit, str) and mask is None:  # a mask's bias is made per call (run)
            ws = hit.workspace = _workspace(device, stream, hit.built.workspace) if hit.built.workspace else None
            hit.launch = launcher(hit.built.graph, hit.built.tensors, hit.handle, ws.data.ptr if ws is not None else 0)
        remember(t.fast, key, hit, FAST_SIZE)
    elif not isinstance(hit, str):
        _on_stream(cudnn, t, hit.handle, device, stream)
    return hit


def _prepare(cudnn: Any, q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float,
             layout: str, window: tuple[Any, Any] = (None, None)) -> Problem | str:
    import cupy

    dtype = q.dtype.name
    kind = "rocm" if getattr(cupy.cuda.runtime, "is_hip", False) else "cuda"
    qo, ko, vo = (as_bhsd(tuple(a.shape), _elements(a), layout) for a in (q, k, v))
    reason = refusal(dtype, qo, ko, vo, is_causal, kind, window)
    if reason is not None:
        return reason
    if mask is not None and window != (None, None):
        return "a dense mask beside a window (cuDNN takes the window as band bounds, not with a bias)"
    assert qo is not None and ko is not None and vo is not None
    if any(a.data.ptr % 16 for a in (q, k, v)):
        return "q, k or v does not start on a 16-byte boundary"
    batch = tuple(int(n) for n in q.shape[:-3])
    b, hq, sq, _ = qo.dims
    sk, dv = vo.dims[2], vo.dims[3]
    mplan = None if mask is None else mask_plan(tuple(mask.shape), mask.dtype.name, batch, hq, sq, sk)
    oo = out_operand(b, hq, sq, dv, layout)
    device = q.device.id
    handle = _handle(cudnn, device, cupy.cuda.get_current_stream().ptr)
    key = cache_key(dtype, qo, ko, vo, oo, mplan, is_causal, scale, device, window)
    built = _graph(cudnn, handle, key, (dtype, qo, ko, vo, oo, mplan, is_causal, scale, window))
    if isinstance(built, str):
        return built
    out_shape = (*batch, hq, sq, dv) if layout == "bhsd" else (*batch, sq, hq, dv)
    return Problem(cudnn, built, qo, ko, mplan, batch, out_shape, layout, handle, window=window)


def sdpa(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, scale: float, layout: str) -> Any:
    """cuDNN's fused SDPA on CuPy arrays (on their device, CuPy's current stream), or None when it
    does not take them (the caller falls back)."""
    p = prepare(q, k, v, mask, is_causal, scale, layout)
    if isinstance(p, str):
        return None
    return run(p, q, k, v, mask, is_causal)


def run(p: Problem, q: Any, k: Any, v: Any, mask: Any, is_causal: bool) -> Any:
    """Execute the built graph on CuPy's current stream; rows with no key to attend come out zeros."""
    import cupy

    out = cupy.empty(p.out_shape, dtype=q.dtype)
    if p.launch is not None and mask is None:
        p.launch(q.data.ptr, k.data.ptr, v.data.ptr, out.data.ptr)
        return out
    ptrs = [q.data.ptr, k.data.ptr, v.data.ptr, out.data.ptr]
    bias = None
    if mask is not None:
        assert p.mask is not None
        bias, allowed = _bias(p, q, mask, is_causal)
        ptrs.append(bias.data.ptr)
    ws = cupy.empty((p.built.workspace,), dtype=cupy.uint8) if p.built.workspace else None
    p.built.graph.execute(dict(zip(p.built.tensors, ptrs, strict=True)),
                          ws.data.ptr if ws is not None else None, handle=p.handle)
    if bias is not None:
        # Note: a row with no key to attend is zeros by the contract; the kernel's value there is not.
        has = _rows_with_keys(p, cupy.any(allowed, axis=-1, keepdims=True))
        # Note: in place, in out's dtype (CuPy's where() gave float32 for bfloat16 operands).
        cupy.copyto(out, cupy.zeros((), dtype=out.dtype), where=cupy.broadcast_to(~has, out.shape))
    del bias, ws  # Note: CuPy's pool is stream-ordered: the buffers go back after the kernel, not before
    return out


def _bias(p: Problem, q: Any, mask: Any, is_causal: bool) -> tuple[Any, Any]:
    # The mask as cuDNN's additive bias (mb, mh, Sq, row) in q's dtype, and what each query may attend.
    import cupy

    m = p.mask
    assert m is not None
    _, hq, sq, _ = p.q.dims
    sk = p.k.dims[2]
    full = mask.reshape((1,) * (len(p.batch) + 3 - mask.ndim) + tuple(mask.shape))
    target = (*(p.batch if m.batch != 1 else (1,) * len(p.batch)), m.heads, sq, sk)
    full = cupy.broadcast_to(full, target).reshape(m.batch, m.heads, sq, sk)
    if m.kind == "bool":
        allowed = full
        values = cupy.zeros((), dtype=q.dtype)
    else:
        values = full.astype(q.dtype)
        allowed = values != -math.inf
    if is_causal:
        allowed = cupy.logical_and(allowed, cupy.tri(sq, sk, sk - sq, dtype=bool))
    values = cupy.where(allowed, values, cupy.asarray(-math.inf, dtype=q.dtype))
    bias = cupy.empty((m.batch, m.heads, sq, m.row), dtype=q.dtype)
    bias[..., :sk] = values
    return bias, allowed


def _rows_with_keys(p: Problem, has: Any) -> Any:
    # (mb, mh, Sq, 1) -> broadcastable to the output, (*B, Hq, Sq, Dv) or (*B, Sq, Hq, Dv).
    m = p.mask
    assert m is not None
    batch = p.batch if m.batch != 1 else (1,) * len(p.batch)
    has = has.reshape(*batch, m.heads, p.q.dims[2], 1)
    return has if p.layout == "bhsd" else has.swapaxes(-2, -3)


def describe(p: Problem, is_causal: bool) -> str:
    """What the built graph runs, for ``ua.explain``: the library versions and the problem's facts."""
    _, hq, sq, _ = p.q.dims
    hk, sk = p.k.dims[1], p.k.dims[2]
    extra = []
    if hq != hk:
        extra.append(f"grouped-query {hq}/{hk} heads")
    if is_causal:
        extra.append("causal" if sq == sk else "bottom-right causal" + (" in the bias" if p.mask else ""))
    if p.window != (None, None):
        extra.append(f"band bounds {p.window} aligned bottom-right (diagonal_band_left/right_bound)")
    if p.mask is not None:
        extra.append(f"{p.mask.kind} mask as an additive bias")
    if p.built.plan:
        extra.append(f"plan {p.built.plan}")
    return f"(cudnn sdpa ({versions()}){': ' + ', '.join(extra) if extra else ''})"
