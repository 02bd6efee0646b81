# What torch lacks natively and the torch backend fills in: the wide unsigned integers (uint16/32/64 have
# no kernels and no promotion: computed in int64), integer GEMM (none on CUDA), tensordot as one GEMM, the
# standard's matmul promotion, and Python scalar operands under torch.compile.
from __future__ import annotations

import functools
import math
from typing import Any

import array_api_compat.torch as compat_torch
import torch

from unarray._backends import _xp_shared
from unarray._backends._base import dtype_named
from unarray._backends.hot_calls import HotCall
from unarray._errors import DTypeError

SMALL_UINTS = (torch.uint8, torch.uint16, torch.uint32)
WIDE_UINTS = (torch.uint16, torch.uint32, torch.uint64)
UINTS = (torch.uint8, *WIDE_UINTS)
# Ops torch refuses for uint16/uint32/uint64 (no kernels, no promotion): computed in int64 instead, after the
# refusal (Backend.recover for the element-wise ones, a wrapper for the few others).
_ORDERING = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "maximum",
                       "minimum", "clip"})
WRAPPED = frozenset({"linalg_outer", "linalg_cross", "where", "clip"})


def ordered(x: Any) -> Any:
    return x.view(torch.int64) ^ (-(2**63)) if x.dtype is torch.uint64 else x.to(torch.int64)


def from_ordered(r: Any, dtype: Any) -> Any:
    return (r ^ (-(2**63))).view(torch.uint64) if dtype is torch.uint64 else r.to(dtype)


def contract(x1: Any, x2: Any, axes: Any, mm: Any) -> Any:
    # tensordot as one (M, K) @ (K, N) product mm (an exact integer matmul, or unarray::matmul).
    a1, a2, f1, f2 = _xp_shared.contraction(x1.ndim, x2.ndim, axes)
    k = math.prod([x1.shape[d] for d in a1])  # a list: torch.compile cannot trace a generator here
    a = x1.permute(f1 + a1).reshape(-1, k)
    b = x2.permute(a2 + f2).reshape(k, -1)
    return mm(a, b).reshape([x1.shape[d] for d in f1] + [x2.shape[d] for d in f2])


def tensordot(x1: Any, x2: Any, axes: Any) -> Any:
    return compat_torch.tensordot(x1, x2, axes=axes)


def vecdot(x1: Any, x2: Any, axis: int) -> Any:
    return compat_torch.vecdot(x1, x2, axis=axis)


def as_int64(x: Any) -> Any:
    return to_int64(x) if x.dtype in WIDE_UINTS else x


def to_int64(x: Any) -> Any:
    return x.view(torch.int64) if x.dtype is torch.uint64 else x.to(torch.int64)


def _native_dtype(d: Any) -> Any:
    # The backend's dtype() for a dtype that is not torch's (a ua.DType read directly: traceable under compile).
    name = dtype_named(d, "torch")
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise DTypeError(f"torch has no dtype {name}", backend="torch")
    return dt


def uint_out(x: Any, dtype: Any) -> Any:
    # Note: torch has no unsigned accumulation; the standard's is uint64 for unsigned input: int64 has its bits.
    if dtype is None:
        return torch.uint64 if x.dtype in UINTS else None
    dt = dtype if isinstance(dtype, torch.dtype) else _native_dtype(dtype)
    return dt if dt in UINTS and not (x.is_floating_point() or x.is_complex()) else None


def back(r: Any, dtype: Any) -> Any:
    if r.dtype is dtype or r.dtype is torch.bool:
        return r
    return r.view(torch.uint64) if dtype is torch.uint64 and r.dtype is torch.int64 else r.to(dtype)


def _scalar_as(v: Any, dtype: Any, ordering: bool) -> Any:
    # A Python int next to a uint64 tensor computed in int64: the same bits (wrapping), or the same order.
    if dtype is not torch.uint64 or not isinstance(v, int) or isinstance(v, bool):
        return v
    if ordering:
        return v - 2**63
    return v - 2**64 if v >= 2**63 else v


# compat's two-argument wrapper (x1, x2 -> its promotion fix, then torch's function), read from one of them.
_TWO_ARG = getattr(compat_torch.add, "__code__", None)


def is_two_arg(fn: Any) -> bool:
    return _TWO_ARG is not None and getattr(fn, "__code__", None) is _TWO_ARG and hasattr(fn, "__wrapped__")


def one_dtype_native(fn: Any, general: Any, op: str) -> Any:
    # Note: compat's wrapper fixes the promotion of a 0-d tensor beside another dtype: with one dtype on both
    # tensors torch's function runs at once (else ``general``); no C fast path inside a trace (a graph break).
    return HotCall(op, fn.__wrapped__, torch.Tensor, arrays=2).bind(general, fast=not torch.compiler.is_compiling())


def wide_uint_fallback(fn: Any, op: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (RuntimeError, TypeError):
            if not any(isinstance(a, torch.Tensor) and a.dtype in WIDE_UINTS for a in args):
                raise
        return emulate(fn, op, args, kwargs)

    call.__wrapped__ = fn  # type: ignore[attr-defined]  # (ua.explain names the kernel it wraps)
    return call


def emulate(fn: Any, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # In int64 (uint64 as its bits, with the sign bit flipped for ordering ops) in the dtype unarray's promotion
    # picks, cast back; uint64 division and right shift are exact below 2**63.
    ordering = op in _ORDERING
    # (clip's bounds come as keywords: tensors among them take part too)
    ts = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor) and a.dtype is not torch.bool]
    dt = functools.reduce(promote_types, [t.dtype for t in ts])
    conv = ordered if ordering else as_int64

    def wide(a: Any) -> Any:
        return conv(a.to(dt)) if isinstance(a, torch.Tensor) and a.dtype is not torch.bool \
            else _scalar_as(a, dt, ordering)

    r = fn(*[wide(a) for a in args], **{k: wide(v) for k, v in kwargs.items()})
    if r.dtype is torch.bool:
        return r
    return from_ordered(r, dt) if ordering else back(r, dt)


def promote_types(a: Any, b: Any) -> Any:
    if a in WIDE_UINTS or b in WIDE_UINTS:
        # Note: torch has no promotion for uint16/32/64: the standard's table, else unarray's rule for mixed kinds.
        from unarray._dtypes import canonical_name, promote

        return getattr(torch, promote(None, canonical_name(a) or "", canonical_name(b) or "", "torch"))
    return torch.promote_types(a, b)


def matmul_general(x1: Any, x2: Any) -> Any:
    dt = x1.dtype
    if dt is not x2.dtype:
        dt = promote_types(dt, x2.dtype)
        x1, x2 = x1.to(dt), x2.to(dt)
    try:
        return torch.matmul(x1, x2)
    except RuntimeError:
        if x1.is_floating_point() or x1.is_complex():
            raise
    # No integer GEMM for this dtype/device: exact in int64 (wraps like the narrow type when cast back).
    a, b = x1.to(torch.int64), x2.to(torch.int64)
    out = _int_matmul(a, b) if a.is_cuda else torch.matmul(a, b)
    return out.to(dt)


def is_int(x: Any) -> bool:
    return not (x.is_floating_point() or x.is_complex())


def no_int_gemm(x: Any) -> bool:
    return bool(x.is_cuda) and is_int(x)


def keep(r: Any, x: Any, keepdims: bool) -> Any:
    return r.reshape((1,) * x.ndim) if keepdims else r


def _int_matmul(x1: Any, x2: Any) -> Any:
    # cuBLAS has no integer GEMM: exact integer products by broadcasting, in K-blocks.
    squeeze1, squeeze2 = x1.ndim == 1, x2.ndim == 1
    a = x1.unsqueeze(0) if squeeze1 else x1
    b = x2.unsqueeze(-1) if squeeze2 else x2
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: shape mismatch {tuple(x1.shape)} @ {tuple(x2.shape)}")
    k = a.shape[-1]
    m, n = a.shape[-2], b.shape[-1]
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])  # type: ignore[no-untyped-call]
    step = max(1, (1 << 26) // max(1, m * n * math.prod(batch)))
    out = None
    for s in range(0, k, step):
        part = (a[..., :, s:s + step, None] * b[..., None, s:s + step, :]).sum(-2, dtype=a.dtype)
        out = part if out is None else out + part
    if out is None:
        out = torch.zeros(batch + (m, n), dtype=a.dtype, device=a.device)
    if squeeze1:
        out = out.squeeze(-2)
    if squeeze2:
        out = out.squeeze(-1)
    return out


remainder = wide_uint_fallback(compat_torch.remainder, "remainder")


_XP: Any = compat_torch  # (its searchsorted and linalg are assigned at import: untyped)


def floating(x: Any) -> Any:
    # Note: torch's mean/var/std refuse integer and bool input; unarray's rule is the default floating dtype.
    return x if x.is_floating_point() or x.is_complex() else x.to(torch.get_default_dtype())


def searchsorted(x1: Any, x2: Any, side: str, sorter: Any) -> Any:
    # Note: torch places NaN neither first nor last (x1=[0, 1, nan] puts inf and 2 after the NaN); the standard's
    # order puts NaN after +inf: search keys where NaN is +inf, then cap each non-NaN query at x1's non-NaN count
    # and send each NaN query after them (left) or after all of x1 (right).
    if not isinstance(x2, torch.Tensor):
        dt = x1.dtype if x1.is_floating_point() or not isinstance(x2, float) else torch.get_default_dtype()
        x2 = torch.tensor(x2, dtype=dt, device=x1.device)
    f1, f2 = x1.is_floating_point(), x2.is_floating_point()
    if not (f1 or f2):
        return _XP.searchsorted(x1, x2, side=side, sorter=sorter)
    k1 = torch.where(x1.isnan(), math.inf, x1) if f1 else x1
    k2 = torch.where(x2.isnan(), math.inf, x2) if f2 else x2
    r = _XP.searchsorted(k1, k2, side=side, sorter=sorter)
    m = (~x1.isnan()).sum() if f1 else x1.shape[0]
    if f1:
        r = torch.minimum(r, m)
    return torch.where(x2.isnan(), m if side == "left" else x1.shape[0], r) if f2 else r


def result_type(*args: Any) -> Any:
    try:
        return compat_torch.result_type(*args)
    except (RuntimeError, TypeError):
        if not any((a.dtype if isinstance(a, torch.Tensor) else a) in WIDE_UINTS for a in args):
            raise
    # Note: torch refuses any promotion of uint16/32/64 with another dtype; the standard's table decides.
    py = (bool, int, float, complex)
    scalars = [a for a in args if isinstance(a, py)]
    dts = [a.dtype if isinstance(a, torch.Tensor) else a for a in args if not isinstance(a, py)]
    dt = functools.reduce(promote_types, dts)
    return compat_torch.result_type(torch.empty(0, dtype=dt), *scalars) if scalars else dt


def trace(x: Any, offset: int, dtype: Any) -> Any:
    # Note: torch's trace of unsigned input is int64; the standard's trace accumulates as sum does (uint64).
    u = uint_out(x, dtype)
    if u is not None:
        return back(_XP.linalg.trace(to_int64(x), offset=offset, dtype=torch.int64), u)
    return _XP.linalg.trace(x, offset=offset, dtype=dtype)


# -- Python scalar operands under torch.compile ------------------------------------------------------------------
# Note: where torch takes no Python scalar (maximum, atan2...), array-api-compat makes it a tensor of
# torch.result_type(scalar, x), a call Dynamo cannot trace (a graph break); inside a trace that dtype is read
# from x.dtype by torch's rule (scalar_dtype) instead.
_COMPLEX_OF = {torch.float16: torch.complex32, torch.bfloat16: torch.complex64, torch.float32: torch.complex64,
               torch.float64: torch.complex128}
_PY_SCALARS = (bool, int, float, complex)


def scalar_dtype(s: Any, dt: Any) -> Any:
    # torch.result_type(s, x) for a Python scalar s and a tensor x of dtype dt, traceable.
    t = type(s)
    if t is bool or dt.is_complex or (t is not complex and dt.is_floating_point):
        return dt
    if dt.is_floating_point:
        return _COMPLEX_OF.get(dt, torch.complex128)
    if t is int:
        return torch.int64 if dt is torch.bool else dt
    default = torch.get_default_dtype()
    return default if t is float else _COMPLEX_OF[default]


def _scalar_positions(fn: Any) -> tuple[bool, bool]:
    # Which operands compat's two-argument wrapper makes tensors when Python scalars (its closure's flags).
    code, cells = getattr(fn, "__code__", None), getattr(fn, "__closure__", None)
    if code is None or not cells:
        return False, False
    flags = {n: c.cell_contents for n, c in zip(code.co_freevars, cells, strict=True) if n.startswith("scalar_x")}
    return bool(flags.get("scalar_x1")), bool(flags.get("scalar_x2"))


def traceable_scalars(fn: Any, compiling: Any) -> Any:
    s1, s2 = _scalar_positions(fn)
    if not (s1 or s2):
        return fn

    py = frozenset(_PY_SCALARS)

    def call(x1: Any, x2: Any, /) -> Any:
        if ((s1 and type(x1) in py) or (s2 and type(x2) in py)) and compiling():
            x1, x2 = _operands(x1, x2)
        return fn(x1, x2)

    call.__name__ = call.__qualname__ = getattr(fn, "__name__", "call")
    call.__doc__ = fn.__doc__
    return call


def _operands(x1: Any, x2: Any) -> tuple[Any, Any]:
    # The scalar as compat makes it, and the tensor in that dtype too (as compat's promotion would cast it).
    if type(x1) in _PY_SCALARS:
        dt = scalar_dtype(x1, x2.dtype)
        return torch.asarray(x1, dtype=dt, device=x2.device), x2.to(dt)
    dt = scalar_dtype(x2, x1.dtype)
    return x1.to(dt), torch.asarray(x2, dtype=dt, device=x1.device)


def scalar_wrappers(ns: Any, compiling: Any) -> dict[str, Any]:
    # Built on import, never inside a trace: Dynamo cannot follow a closure's cells (compat's flags).
    out = {}
    for name, fn in vars(ns).items():
        if not name.startswith("_") and callable(fn) and not isinstance(fn, type):
            wrapped = traceable_scalars(fn, compiling)
            if wrapped is not fn:
                out[name] = wrapped
    return out
