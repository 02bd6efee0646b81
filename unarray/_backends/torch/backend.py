# PyTorch backend: torch.Tensor on CPU, CUDA and ROCm, its hot ops where torch deviates from the standard. Imported
# only once torch is in use; the package's other modules: __init__.py.
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import array_api_compat.torch as compat_torch
import numpy as np
import torch

from unarray import _dtypes, _precision
from unarray._backends import _special, _xp_shared, attention_blocked
from unarray._backends._base import Backend
from unarray._backends._contract import BackendContract
from unarray._backends._nn import Plan
from unarray._backends.attention_masks import MaskSpec
from unarray._backends.torch import at as _at
from unarray._backends.torch import devices as _devices
from unarray._backends.torch import gaps as _gaps
from unarray._backends.torch import layout as _layout
from unarray._backends.torch import natives as _natives
from unarray._backends.torch import nn as _nn
from unarray._backends.torch import precision as _tp
from unarray._backends.torch import sets as _sets
from unarray._backends.torch import traced as _traced
from unarray._backends.torch.compile import TorchCompiler, compiled_module
from unarray._backends.torch.gaps import contract, result_type, scalar_wrappers, searchsorted, trace
from unarray._backends.torch.precision import RUN as _RUN
from unarray._backends.torch.precision import WANT as _WANT
from unarray._devices import Device
from unarray._errors import ArgumentTypeError

_F32 = torch.float32
_C64 = torch.complex64
_compiling = _tp.compiling
_SCALAR_OPS = scalar_wrappers(compat_torch, _compiling)  # compat's ops taking Python scalars, traceable
_WHERE = _gaps.wide_uint_fallback(compat_torch.where, "where")
# Every torch dtype named now: a name looked up inside a compiled trace is then never written there.
_dtypes.remember(d for d in vars(torch).values() if isinstance(d, torch.dtype))
_CPU_REDUCES = _tp.CPU_REDUCES  # a float32 CPU matmul runs under the precision switch (_tp.matters)
_TINY = _natives.TINY  # (a float32 CPU matmul at or below it: the user's setting cannot change the result)
_Tensor = torch.Tensor
_mean, _matmul = torch.mean, torch.matmul


def _outside_trace(to: Any, x: Any, backend: Any, device: Any, copy: bool | None, op: str) -> Any:
    return compiled_module().outside_trace(to, x, backend, device, copy, op)


def register_traced_to(to: Any, traced_to: Any) -> None:
    # torch.compile traces ua.to's Python polyfill in place of the C ua.to (once torch._dynamo is imported).
    _traced.disable_foreign_refusal()
    _traced.register_traced(to, traced_to)


class TorchBackend(Backend):
    name = "torch"
    compiler = TorchCompiler()
    xp = compat_torch
    native = torch

    def __getattr__(self, op: str) -> Any:
        fn = super().__getattr__(op)
        if op in _gaps.WRAPPED:
            fn = _gaps.wide_uint_fallback(fn, op)
        elif _gaps.is_two_arg(fn):
            fn = _gaps.one_dtype_native(fn, _SCALAR_OPS.get(op, fn), op)
        else:
            fn = _SCALAR_OPS.get(op, fn)
        setattr(self, op, fn)
        return fn

    def recover(self, op: str, exc: Exception, args: tuple[Any, ...]) -> Any:
        if "DTensor" in str(exc) and any(type(a) is torch.Tensor for a in args):
            # Note: torch refuses a plain tensor next to a DTensor (only Python scalars join one).
            raise ArgumentTypeError(
                "got a DTensor and a plain torch.Tensor; torch runs distributed ops on DTensors only: distribute "
                "the plain one on the DTensor's mesh first (distribute_tensor(t, x.device_mesh, [Replicate()]) "
                "or DTensor.from_local), or pass a Python scalar", backend=self.name)
        if not any(isinstance(a, torch.Tensor) and a.dtype in _gaps.WIDE_UINTS for a in args):
            return NotImplemented
        return _gaps.emulate(getattr(compat_torch, op), op, args, {})

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, torch.Tensor)

    def device_of(self, x: torch.Tensor) -> Device:
        if _devices.is_dtensor(x):
            return _devices.mesh_device(x)
        return _devices.as_device(x.device)

    def native_device(self, device: Any) -> Any:
        if device is None or isinstance(device, torch.device):
            return device
        if isinstance(device, Device):
            kind = "cuda" if device.kind in ("cuda", "rocm") else device.kind
            return torch.device(kind) if kind == "cpu" else torch.device(kind, device.index)
        return torch.device(device)

    def at_update(self, x: torch.Tensor, idx: Any, op: str, v: torch.Tensor, in_place: bool) -> Any:
        return _at.update(x, idx, op, v, in_place)

    def apply_numpy(self, call: Any, arrays: list[Any], shape: tuple[int, ...], dtype: Any) -> Any:
        out = np.require(call(*[a.detach().cpu().numpy() for a in arrays]), requirements=["C", "W"])
        return torch.from_numpy(out).to(arrays[0].device if arrays else "cpu")

    def devices(self) -> list[Device]:
        out = [Device("cpu")]
        if torch.cuda.is_available():
            out += [Device("rocm" if _devices.HIP else "cuda", i) for i in range(torch.cuda.device_count())]
        return out

    def dtype(self, d: Any) -> Any:
        if d is None or isinstance(d, torch.dtype):
            return d
        return super().dtype(d)

    layout_route = staticmethod(_layout.route)  # ua.ascontiguousarray's route (layout.py)
    # the route, its common cases answered first (layout.py); torch's copy declared as the hot call (natives.py)
    ascontiguousarray = _natives.COMPACT.bind(_layout.compact)

    compiling = staticmethod(_tp.compiling)

    # Note: inside torch.compile every tensor is traced, so it leads an eager operand of another library.
    def is_tracer(self, x: torch.Tensor) -> bool:
        return _compiling()

    # Note: inside torch.compile a NumPy array joins the graph as torch's capture (ua.to's cache and C path cannot).
    def traced_constant(self, x: Any) -> Any:
        if not _compiling():
            return None
        if isinstance(x, np.ndarray):
            return torch.as_tensor(x)
        return _traced.refuse_foreign(x)

    outside_trace = staticmethod(_outside_trace)
    register_traced_to = staticmethod(register_traced_to)
    register_traced = staticmethod(_traced.register_traced)
    register_constant = staticmethod(_traced.register_constant)
    # A DTensor spans its mesh and leads a mixed call; another library's array joins it only as a DTensor.
    spreads, is_spread = True, staticmethod(_devices.spans_mesh)
    mesh_fix = "place it on the leader's mesh first, e.g. distribute_tensor(torch.as_tensor(x), x1.device_mesh, " \
               "[Replicate()])"

    def precision_used(self, policy: str, x: torch.Tensor) -> str:
        return _tp.used(policy, x)

    # Note: torch.matmul does not promote mixed dtypes and has no integer GEMM on CUDA (both: the slow path).
    # Float32 runs under the precision switch (precision.py); in a trace the policy travels as an argument of the
    # custom op unarray::matmul, except under ua.jit, whose call holds it for the whole graph: a plain matmul then.
    @_natives.MATMUL.bind
    def matmul(self, x1: torch.Tensor, x2: torch.Tensor, policy: str) -> Any:
        d = x1.dtype
        if d is _F32 or d is _C64:
            cpu = x1.is_cpu
            # (the size test is the second step: a product first, the contracted length only past it)
            if not cpu or (_CPU_REDUCES and (n := x1.numel() * x2.numel()) > _TINY and n > _TINY * x1.shape[-1]) \
                    or _precision.FORCE_ARBITRATION:
                if _compiling():  # (policy: in a trace, the one scoped inside it, or "" for the graph's run)
                    if _tp.held_for(policy, x1, x2):
                        if x2.dtype is not d:  # (as the custom op: the standard's promotion, traceable)
                            dt = torch.promote_types(d, x2.dtype)
                            x1, x2 = x1.to(dt), x2.to(dt)
                        return torch.matmul(x1, x2)
                    return compiled_module().matmul(x1, x2, policy)
                # Note: same dtypes (the common case) need none of _gaps.matmul_general's promotion.
                fn = _matmul if x2.dtype is d else _gaps.matmul_general
                return _RUN(_WANT[cpu, policy], fn, x1, x2)
        if x2.dtype is not d:  # torch refuses mixed dtypes, and inside a trace that refusal cannot be caught
            return _gaps.matmul_general(x1, x2)
        try:
            return _matmul(x1, x2)
        except RuntimeError:
            return _gaps.matmul_general(x1, x2)

    # Note: cuBLAS has no integer GEMM: integer CUDA tensordot/vecdot/matrix_power take the exact integer path.
    def tensordot(self, x1: Any, x2: Any, /, *, axes: Any = 2, policy: str) -> Any:
        if x1.dtype is x2.dtype and _tp.matters(x1):
            if _compiling():
                if _tp.held_for(policy, x1, x2):
                    return _gaps.tensordot(x1, x2, axes)
                return compiled_module().tensordot(x1, x2, axes, policy)
            return _tp.arbitrate(x1, policy, _gaps.tensordot, x1, x2, axes)
        if x1.dtype is not x2.dtype or x1.dtype in _gaps.WIDE_UINTS:
            # Note: compat's tensordot promotes with torch's rules (uint8 x int16 -> int16, uint32 refused).
            dt = _gaps.promote_types(x1.dtype, x2.dtype)
            a, b = _gaps.as_int64(x1.to(dt)), _gaps.as_int64(x2.to(dt))
            return _gaps.back(self.tensordot(a, b, axes=axes, policy=policy), dt)
        if not (_gaps.no_int_gemm(x1) and _gaps.is_int(x2)):
            return compat_torch.tensordot(x1, x2, axes=axes)
        return contract(x1, x2, axes, _gaps.matmul_general)

    def vecdot(self, x1: Any, x2: Any, /, *, axis: int = -1, policy: str) -> Any:
        if x1.dtype is x2.dtype and _tp.matters(x1):
            if _compiling():
                return compiled_module().vecdot(x1, x2, axis)
            return _tp.arbitrate(x1, policy, _gaps.vecdot, x1, x2, axis)
        if not (_gaps.no_int_gemm(x1) and _gaps.is_int(x2)):
            return compat_torch.vecdot(x1, x2, axis=axis)
        dt = _gaps.promote_types(x1.dtype, x2.dtype)
        return torch.sum(x1.to(dt) * x2.to(dt), dim=axis, dtype=dt)

    def linalg_matrix_power(self, x: torch.Tensor, n: int, /, *, policy: str) -> Any:
        if not _gaps.no_int_gemm(x) or n < 0:
            return torch.linalg.matrix_power(x, n)
        eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device).expand(x.shape).clone()
        return _xp_shared.power(eye, x, n, _gaps.matmul_general)

    def matrix_transpose(self, x: torch.Tensor) -> Any:
        if x.ndim < 2:
            return super().matrix_transpose(x)
        return x.mT

    def permute_dims(self, x: torch.Tensor, axes: tuple[int, ...]) -> Any:
        return torch.permute(x, axes)

    # Note: torch reduces every axis when dim=(); the standard reduces none.
    @_natives.SUM.bind
    def sum(self, x: torch.Tensor, axis: Any, dtype: Any, keepdims: bool) -> Any:
        u = _gaps.uint_out(x, dtype)
        if u is not None:
            return _gaps.back(self.sum(_gaps.to_int64(x), axis, torch.int64, keepdims), u)
        if dtype is None:
            if x.dtype in _gaps.SMALL_UINTS:
                # torch has no uint64 arithmetic: accumulate in int64 (same bits mod 2**64).
                dtype = torch.int64
            elif axis == ():
                dtype = torch.int64 if not (x.is_floating_point() or x.is_complex()) else x.dtype
            else:
                return torch.sum(x, dim=axis, keepdim=keepdims)
        if axis == ():
            return x.to(self.dtype(dtype), copy=True)
        return torch.sum(x, dim=axis, keepdim=keepdims, dtype=self.dtype(dtype))

    def prod(self, x: torch.Tensor, axis: Any, dtype: Any, keepdims: bool) -> Any:
        u = _gaps.uint_out(x, dtype)
        if u is not None:
            return _gaps.back(self.prod(_gaps.to_int64(x), axis, torch.int64, keepdims), u)
        dt = self.dtype(dtype)
        if dt is None and not (x.is_floating_point() or x.is_complex()):
            dt = torch.int64
        if axis == ():
            return x.to(dt if dt is not None else x.dtype, copy=True)
        if isinstance(axis, int):
            return torch.prod(x, dim=axis, keepdim=keepdims, dtype=dt)
        # torch.prod takes one dim: move the reduced axes last and flatten them.
        dims = tuple(range(x.ndim)) if axis is None else tuple(a % x.ndim for a in axis)
        rest = [d for d in range(x.ndim) if d not in dims]
        # Note: the reduced length is spelled out; -1 is ambiguous when another dimension is 0.
        n = math.prod([x.shape[d] for d in dims])  # a list: torch.compile cannot trace a generator here
        y = torch.permute(x, rest + list(dims)).reshape([x.shape[d] for d in rest] + [n])
        out = torch.prod(y, dim=-1, dtype=dt)
        if keepdims:
            out = out.reshape([1 if d in dims else x.shape[d] for d in range(x.ndim)])
        return out

    @_natives.MEAN.bind
    def mean(self, x: torch.Tensor, axis: Any, keepdims: bool) -> Any:
        x = x if x.is_floating_point() else _gaps.floating(x)  # (the common call without a helper's frame)
        if axis is None and not keepdims:
            return _mean(x)
        if axis == ():
            return torch.mean(x.unsqueeze(-1), dim=-1)
        return torch.mean(x, dim=axis, keepdim=keepdims)

    def var(self, x: torch.Tensor, axis: Any, correction: float, keepdims: bool) -> Any:
        x = _gaps.floating(x)
        if axis == ():
            return torch.var(x.unsqueeze(-1), dim=-1, correction=correction)
        return torch.var(x, dim=axis, correction=correction, keepdim=keepdims)

    def std(self, x: torch.Tensor, axis: Any, correction: float, keepdims: bool) -> Any:
        x = _gaps.floating(x)
        if axis == ():
            return torch.std(x.unsqueeze(-1), dim=-1, correction=correction)
        return torch.std(x, dim=axis, correction=correction, keepdim=keepdims)

    def min(self, x: torch.Tensor, axis: Any, keepdims: bool) -> Any:
        return self._extreme("min", torch.amin, x, axis, keepdims)

    def max(self, x: torch.Tensor, axis: Any, keepdims: bool) -> Any:
        return self._extreme("max", torch.amax, x, axis, keepdims)

    def _extreme(self, op: str, fn: Any, x: torch.Tensor, axis: Any, keepdims: bool) -> Any:
        if _devices.is_dtensor(x):
            _devices.empty_shard_guard(x, axis, op)
            # Note: DTensor's sharding rule reads dim=() as no dimension (eager torch: every one).
            axis = tuple(range(x.ndim)) if axis is None and x.ndim else axis
        if axis == ():
            if x.is_complex():
                raise self._unordered(op, x)
            return x.clone()
        try:
            dim = () if axis is None else axis
            if x.dtype in _gaps.WIDE_UINTS:
                return _gaps.from_ordered(fn(_gaps.ordered(x), dim=dim, keepdim=keepdims), x.dtype)
            return fn(x, dim=dim, keepdim=keepdims)
        except (RuntimeError, IndexError):
            self._refuse(op, x, axis)
            raise

    def argmin(self, x: torch.Tensor, axis: int | None, keepdims: bool) -> Any:
        return self._arg_extreme("argmin", torch.argmin, x, axis, keepdims)

    @_natives.ARGMAX.bind
    def argmax(self, x: torch.Tensor, axis: int | None, keepdims: bool) -> Any:
        return self._arg_extreme("argmax", torch.argmax, x, axis, keepdims)

    def _arg_extreme(self, op: str, fn: Any, x: torch.Tensor, axis: int | None, keepdims: bool) -> Any:
        if type(x) is not _Tensor and _devices.is_dtensor(x):
            _devices.empty_shard_guard(x, axis, op)
        try:
            return fn(_gaps.ordered(x) if x.dtype in _gaps.WIDE_UINTS else x, dim=axis, keepdim=keepdims)
        except (RuntimeError, IndexError):
            self._refuse(op, x, axis)
            raise

    # Note: torch refuses complex max/min/argmax/argmin with several error types; every backend raises DTypeError.
    def _refuse(self, op: str, x: Any, axis: Any) -> None:
        if x.is_complex():
            raise self._unordered(op, x)
        self._check_nonempty(op, x, axis)

    # Note: torch reads dim=() as every axis; the standard's axis=() counts each element on its own.
    def count_nonzero(self, x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
        if axis == ():
            return (x != 0).to(torch.int64)
        return compat_torch.count_nonzero(x, axis=axis, keepdims=keepdims)

    # Note: torch.any/all keep uint8 as the result dtype; the standard says bool.
    def any(self, x: torch.Tensor, axis: Any, keepdims: bool) -> Any:
        return self._truth(torch.any, x, axis, keepdims)

    def all(self, x: torch.Tensor, axis: Any, keepdims: bool) -> Any:
        return self._truth(torch.all, x, axis, keepdims)

    def _truth(self, fn: Any, x: torch.Tensor, axis: Any, keepdims: bool) -> Any:
        if x.dtype is not torch.bool:
            x = x != 0
        if axis == ():
            return x.clone()
        return fn(x, dim=axis, keepdim=keepdims) if axis is not None else _gaps.keep(fn(x), x, keepdims)

    # (axis: an int, the front end having read None as a 1-D array's only axis)
    def cumulative_sum(self, x: torch.Tensor, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return self._cumulative(torch.cumsum, 0, x, axis, dtype, include_initial)

    def cumulative_prod(self, x: torch.Tensor, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return self._cumulative(torch.cumprod, 1, x, axis, dtype, include_initial)

    def _cumulative(self, fn: Any, identity: int, x: torch.Tensor, axis: Any, dtype: Any, initial: bool) -> Any:
        u = _gaps.uint_out(x, dtype)
        if u is not None:
            return _gaps.back(self._cumulative(fn, identity, _gaps.to_int64(x), axis, torch.int64, initial), u)
        dt = self.dtype(dtype)
        if dt is None and not (x.is_floating_point() or x.is_complex()):  # integers and bool: int64
            dt = torch.int64
        out = fn(x, dim=axis, dtype=dt)
        if initial:
            shape = list(out.shape)
            shape[axis] = 1
            out = torch.cat([torch.full(shape, identity, dtype=out.dtype, device=out.device), out], dim=axis)
        return out

    # Special cases torch misses (see _special): a zero remainder takes the divisor's sign; complex expm1
    # of an imaginary zero (torch computes exp(z) - 1).
    def remainder(self, x1: Any, x2: Any, /) -> Any:
        r = _gaps.remainder(x1, x2)
        return _special.remainder_zero_sign(compat_torch, r, x2) if r.is_floating_point() else r

    # Note: torch.where refuses a condition that is not bool; it is read as nonzero, as every other backend does.
    def where(self, condition: Any, x1: Any, x2: Any, /) -> Any:
        if isinstance(condition, torch.Tensor) and condition.dtype is not torch.bool:
            condition = condition != 0
        return _WHERE(condition, x1, x2)

    # Note: torch's repeat_interleave has no uint16/32/64 kernel: the values repeat as int64 and are cast back.
    def repeat(self, x: torch.Tensor, repeats: Any, /, *, axis: int | None = None) -> Any:
        if x.dtype in _gaps.WIDE_UINTS:
            return _gaps.back(compat_torch.repeat(_gaps.to_int64(x), repeats, axis=axis), x.dtype)
        return compat_torch.repeat(x, repeats, axis=axis)

    # Note: torch's CUDA complex sqrt gives -0 for sqrt(-0 + 0j); the standard: +0 + 0j.
    def sqrt(self, x: torch.Tensor, /) -> Any:
        r = torch.sqrt(x)
        return _special.complex_sqrt(compat_torch, r, x, torch.complex) if x.is_complex() else r

    def expm1(self, x: torch.Tensor, /) -> Any:
        return _special.complex_expm1(compat_torch, x, torch.complex) if x.is_complex() else torch.expm1(x)

    def searchsorted(self, x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
        return searchsorted(x1, x2, side, sorter)

    def result_type(self, *args: Any) -> Any:
        return result_type(*args)

    def linalg_trace(self, x: torch.Tensor, /, *, offset: int = 0, dtype: Any = None) -> Any:
        return trace(x, offset, dtype)

    # Note: torch.take_along_dim wants int64 indices; the standard allows any integer dtype.
    def take_along_axis(self, x: Any, indices: Any, *, axis: int = -1) -> Any:
        return torch.take_along_dim(x, indices.to(torch.int64), dim=axis)

    # The set functions: torch.unique lacks complex values and unique_all (sets.py).
    unique_values = staticmethod(_sets.unique_values)
    unique_counts = staticmethod(_sets.unique_counts)
    unique_inverse = staticmethod(_sets.unique_inverse)
    unique_all = staticmethod(_sets.unique_all)

    # Note: torch.fft.ihfft returns a lazily conjugated view, which DLPack and .numpy() refuse.
    def fft_ihfft(self, x: Any, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
        return torch.fft.ihfft(x, n=n, dim=axis, norm=norm).resolve_conj()

    # ua.nn: torch's fused kernels (nn.py).
    nn_softmax = _nn.softmax
    nn_log_softmax = _nn.log_softmax
    nn_logsumexp = _nn.logsumexp
    nn_layer_norm = _nn.layer_norm
    nn_rms_norm = _nn.rms_norm
    nn_gelu = _nn.gelu
    nn_silu = _nn.silu

    # Attention: torch SDPA with the kernel chosen explicitly (attention.py), a ring on DTensors (attention_ring.py).
    borrows_attention = False  # its own fused kernels

    def attention_signature(self, q: Any, k: Any, v: Any) -> Any:
        return None if _compiling() else (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.device)

    def attention_plan(self, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                       policy: str) -> Plan:
        if _devices.is_dtensor(q):
            from unarray._backends.torch import attention_ring as attention_ring_torch

            return attention_ring_torch.attention_plan(q, k, v, mask, spec, scale, layout, policy, self.attention_plan)
        seq = -2 if layout == "bhsd" else -3
        if spec.structured or (spec.causal and mask is None and q.shape[seq] != k.shape[seq]):
            from unarray._backends.torch import attention_masks  # torch's own kernels for the mask

            p = attention_masks.plan(q, k, v, mask, spec, scale, layout, policy)
            if p is not None:
                return p
        from unarray._backends.torch import attention as attention_torch

        if spec.structured:
            return attention_blocked.query_block_plan(self, q, k, v, mask, spec, scale, layout, policy,
                                                      attention_torch.plan)
        return attention_torch.plan(q, k, v, mask, spec.causal, scale, layout, policy)


BACKEND = TorchBackend()

if TYPE_CHECKING:  # mypy checks the class against the contract, for its array type
    _contract: BackendContract[torch.Tensor] = BACKEND
