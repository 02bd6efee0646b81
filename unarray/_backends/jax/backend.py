# JAX backend: jax.Array and tracers (inside jit/grad/vmap), on CPU, CUDA, ROCm
# and TPU. jax.numpy follows the array API standard, so it is the namespace
# itself; what differs is precision (JAX's default float32 matmul on GPU/TPU
# is TF32/bf16) and float64 availability (x64 mode, never on TPU).
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from unarray._backends import _special
from unarray._backends._base import Backend, dtype_named
from unarray._backends._contract import BackendContract
from unarray._backends._nn import Plan
from unarray._backends.attention_masks import MaskSpec
from unarray._backends.hot_calls import HotCall, Keyword
from unarray._backends.jax import at as _at
from unarray._backends.jax import nn as _nn
from unarray._backends.jax import sets as _sets
from unarray._backends.jax.compile import EAGER_OPTIONS, JaxCompiler
from unarray._devices import Device, ShardedDevice, register_native
from unarray._dtypes import NARROW, SPEC_DTYPE_NAMES
from unarray._errors import DeviceMismatchError, DTypeError, UnarrayError

_P = jax.lax.Precision
# unarray policy -> lax precision. HIGHEST is exact float32 (6 bf16 passes on TPU).
_JAX_PRECISION = {"highest": _P.HIGHEST, "tf32": _P.HIGH, "bf16": _P.DEFAULT, "fastest": _P.DEFAULT}
# The same policies as names for jax.default_matmul_precision (for ops that take no precision argument).
_DEFAULT_PRECISION = {"highest": "highest", "tf32": "tensorfloat32", "bf16": "bfloat16", "fastest": "bfloat16"}
_device_cache: dict[Any, Device] = {}
_matmul = jax.jit(lambda x1, x2, precision: jnp.matmul(x1, x2, precision=precision), static_argnames="precision",
                  compiler_options=EAGER_OPTIONS)
_tensordot = jax.jit(lambda x1, x2, axes, precision: jnp.tensordot(x1, x2, axes=axes, precision=precision),
                     static_argnames=("axes", "precision"), compiler_options=EAGER_OPTIONS)
_vecdot = jax.jit(lambda x1, x2, axis, precision: jnp.vecdot(x1, x2, axis=axis, precision=precision),
                  static_argnames=("axis", "precision"), compiler_options=EAGER_OPTIONS)


def _x64() -> bool:
    return bool(jax.config.read("jax_enable_x64"))  # type: ignore[no-untyped-call]


def device_from_jax(d: Any) -> Device:
    """``ua.Device`` of a ``jax.Device`` (or any object with ``platform``, ``id``, ``client``)."""
    platform = d.platform
    if platform == "gpu" or platform == "cuda" or platform == "rocm":
        version = str(getattr(getattr(d, "client", None), "platform_version", "")).lower()
        kind = "rocm" if (platform == "rocm" or "rocm" in version or "hip" in version) else "cuda"
        return Device(kind, getattr(d, "local_hardware_id", None) or d.id)
    if platform == "cpu":
        return Device("cpu")
    return Device(platform, d.id)


def precision_label(policy: str, device: Device) -> str:
    """What a float32 JAX matmul computes with on ``device`` under ``policy``."""
    if device.kind == "cpu":
        return "float32 (the CPU runs no reduced-precision matmul passes)"
    if policy == "highest":
        return "float32 (lax.Precision.HIGHEST" + (", 6 bf16 passes)" if device.kind == "tpu" else ")")
    if policy == "tf32":
        return "bf16x3 passes (lax.Precision.HIGH)" if device.kind == "tpu" else "tf32 (lax.Precision.HIGH)"
    return "bf16 (lax.Precision.DEFAULT)" if device.kind == "tpu" else "tf32 (lax.Precision.DEFAULT)"


def refusal(name: str, device: Device, x64: bool) -> str | None:
    """Why ``name`` is not available on ``device`` (None where it is): the one rule for creation,
    casting, promotion and the inspection API."""
    if name in ("float64", "complex128") and not device.has_float64:
        return f"{name} is not supported on {device} (the hardware has no float64); use {NARROW[name]}"
    if name in NARROW and not x64:
        # Note: without x64 JAX silently narrows every 64-bit dtype to 32 bits: refused, never narrowed.
        return (f"{name} needs JAX's x64 mode (without it JAX silently gives {NARROW[name]}); call "
                f"jax.config.update('jax_enable_x64', True) first, or use {NARROW[name]}")
    return None


def check_dtype(name: str, device: Device, x64: bool) -> None:
    """Refuse a dtype where JAX would silently narrow it or cannot run it."""
    why = refusal(name, device, x64)
    if why is not None:
        raise DTypeError(why, backend="jax")


_U32 = jnp.dtype("uint32")
_SIGNED32 = frozenset({jnp.dtype("int8"), jnp.dtype("int16"), jnp.dtype("int32")})
# The element-wise ops of two arrays among them: the front end passes exactly (x1, x2).
_BINARY = frozenset({
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "maximum", "minimum",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "atan2", "copysign", "hypot", "logaddexp",
    "nextafter",
})
# Ops whose array arguments are promoted together: uint32 with a signed integer is int64 by the standard.
_PROMOTING = _BINARY | {"where", "concat", "stack", "linalg_outer", "linalg_cross", "linalg_vecdot", "linalg_matmul",
                        "linalg_tensordot", "result_type", "clip", "isin", "searchsorted"}


def _dtypes_of(args: Any) -> list[Any]:
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out += _dtypes_of(a)
        elif hasattr(a, "dtype"):
            out.append(a.dtype)
        elif isinstance(a, (jnp.dtype, type)) and not isinstance(a, (bool, int, float, complex)):
            try:
                out.append(jnp.dtype(a))
            except TypeError:
                pass
    return out


def check_promotion(op: str, *args: Any) -> None:
    """Refuse uint32 with a signed integer without x64 mode: the standard says int64, JAX would narrow it to
    int32 silently (wrong values: uint32 3e9 < int32 -1 is True there)."""
    ds = _dtypes_of(args)
    if _U32 in ds and any(d in _SIGNED32 for d in ds) and not _x64():
        raise DTypeError(f"{op} promotes uint32 with a signed integer to int64 (the standard's rule), which needs "
                         "JAX's x64 mode; call jax.config.update('jax_enable_x64', True), or cast both to int32 "
                         "or to float32 first", op=op, backend="jax")


def _wide_int(v: Any, args: tuple[Any, ...]) -> Any:
    # Note: JAX parses a Python int as int32 before promoting it (2**31 next to a uint32 array overflows there);
    # an int outside int32 that the array's dtype holds is made an array of that dtype.
    if type(v) is int and not -(2**31) <= v < 2**31:
        like = next((a for a in args if hasattr(a, "dtype")), None)
        if like is not None and jnp.issubdtype(like.dtype, jnp.integer):
            return jnp.asarray(v, dtype=like.dtype)
    return v


# Note: this module may first load inside the user's jax.jit trace, where jnp.zeros gives a tracer: the concrete
# array type is read outside the trace.
with jax.ensure_compile_time_eval():
    _ARRAY_TYPE = type(jnp.zeros(0))


def _guarded_any(fn: Any, op: str) -> Any:
    name = op.replace("linalg_", "linalg.")

    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) != 2:
            check_promotion(name, *args)
        else:
            x1, x2 = args
            t1, t2 = type(x1), type(x2)
            if t1 is int or t2 is int:
                args = (_wide_int(x1, args), _wide_int(x2, args))
            elif t1 is _ARRAY_TYPE and t2 is _ARRAY_TYPE and x1.dtype is x2.dtype:
                pass  # the common call: one dtype, nothing to promote
            else:
                check_promotion(name, x1, x2)
        return fn(*args, **kwargs)

    call.__wrapped__ = fn  # type: ignore[attr-defined]  # (ua.explain names the kernel it wraps)
    return call


def _nan_kept(r: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    # Note: XLA combines per-device partial maxima and minima with a comparison that drops NaN (CPU
    # all-reduce), so a NaN in one shard vanished; the standard propagates it, as one device does.
    # (integers and bool hold no NaN, bfloat16's kind is "V"; a tracer may be partitioned by XLA later)
    if x.dtype.kind in "biu" or not (isinstance(x, jax.core.Tracer) or len(x.sharding.device_set) > 1):
        return r
    return jnp.where(jnp.any(jnp.isnan(x), axis=axis, keepdims=keepdims), jnp.nan, r)


_WEAK = frozenset((int, float, complex))
# The hot calls (hot_calls.py): a concrete array with every parameter at its default is the method's own call,
# JAX's function, without the method's frame (argmax: not complex, which the method refuses; an empty array's
# error runs the method, which raises unarray's); matmul of one dtype is the method's jitted matmul with the
# policy's precision=.
_EVERY = frozenset(jnp.dtype(n) for n in (*SPEC_DTYPE_NAMES, "bfloat16"))
_SUM = HotCall("sum", jnp.sum, _ARRAY_TYPE, dtypes=_EVERY, defaults=(None, None, False))
_MEAN = HotCall("mean", jnp.mean, _ARRAY_TYPE, dtypes=frozenset(d for d in _EVERY if jnp.issubdtype(d, jnp.floating)),
                defaults=(None, False))
_ARGMAX = HotCall("argmax", jnp.argmax, _ARRAY_TYPE,
                  dtypes=frozenset(d for d in _EVERY if not jnp.issubdtype(d, jnp.complexfloating)),
                  defaults=(None, False))
_MATMUL = HotCall("matmul", _matmul, _ARRAY_TYPE, arrays=2, policy=Keyword("precision", dict(_JAX_PRECISION)))


class JaxBackend(Backend):
    name = "jax"
    compiler = JaxCompiler()
    xp = jnp
    native = jax
    immutable = True

    def __getattr__(self, op: str) -> Any:
        fn = super().__getattr__(op)
        if op in _PROMOTING:
            call = _guarded_any(fn, op)
            # the common binary call, two concrete arrays of one dtype: nothing to promote, JAX's function itself
            fn = HotCall(op, fn, _ARRAY_TYPE, arrays=2).bind(call) if op in _BINARY else call
            setattr(self, op, fn)
        return fn

    def is_array_type(self, t: type) -> bool:
        return issubclass(t, (jax.Array, jax.core.Tracer))

    def device_of(self, x: jax.Array) -> Device:
        try:
            d = x.device
            if not isinstance(d, jax.Device):  # a sharding across devices: take its first
                d = next(iter(x.devices()))
        except Exception:  # a tracer has no concrete device: it runs on the default one
            d = jax.devices()[0]
        try:
            return _device_cache[d]
        except (KeyError, TypeError):
            out = _device_cache[d] = device_from_jax(d)
            return out

    def placement_of(self, x: jax.Array) -> Device:
        # Note: an array spread over several devices is described by its mesh and spec, never by its first device.
        sh = None if isinstance(x, jax.core.Tracer) else getattr(x, "sharding", None)
        if sh is None or len(sh.device_set) < 2:
            return self.device_of(x)
        first = self.device_of(x)
        if isinstance(sh, NamedSharding):
            spec = tuple(sh.spec) + (None,) * (x.ndim - len(sh.spec))
            return ShardedDevice(
                first.kind, first.index, mesh=tuple((str(a), int(n)) for a, n in sh.mesh.shape.items()),
                spec=tuple(None if e is None else (str(e),) if isinstance(e, str) else tuple(map(str, e))
                           for e in spec),
                device_ids=tuple(int(d.id) for d in sh.mesh.devices.flat))
        # Note: a sharding without a named mesh (GSPMDSharding, PositionalSharding): its devices only.
        return ShardedDevice(first.kind, first.index, device_ids=tuple(sorted(int(d.id) for d in sh.device_set)))

    def replicate_on(self, lead: Any, x: Any) -> Any:
        """``x`` (a one-device JAX array joining a call led by ``lead``, sharded over a mesh) replicated on
        ``lead``'s mesh, where JAX itself puts an uncommitted operand; JAX refuses one device with several."""
        sh = lead.sharding
        if isinstance(sh, NamedSharding) and len(x.sharding.device_set) == 1:
            # Note: copied first: a DLPack view of a strided NumPy array (b.T), put on a mesh as it is, kept
            # its buffer's layout, which jitted ops then misread (JAX 0.10, CPU: a matmul 4.7 off).
            return jax.device_put(jnp.copy(x), NamedSharding(sh.mesh, PartitionSpec()))  # type: ignore[no-untyped-call]
        return x

    def native_device(self, device: Any) -> Any:
        if device is None or isinstance(device, (jax.Device, jax.sharding.Sharding)):
            return device
        if isinstance(device, ShardedDevice) and device.mesh:
            # The placement ua.device described, rebuilt: the same devices, mesh axes and spec.
            by_id = {d.id: d for d in jax.devices()}
            shape = tuple(n for _, n in device.mesh)
            devs = np.array([by_id[i] for i in device.device_ids], dtype=object).reshape(shape)
            spec = PartitionSpec(*(None if e is None else e[0] if len(e) == 1 else e  # type: ignore[no-untyped-call]
                                   for e in device.spec))
            return NamedSharding(Mesh(devs, tuple(a for a, _ in device.mesh)), spec)
        if isinstance(device, Device):
            for d in jax.devices("gpu" if device.kind == "cuda" else device.kind):
                if device_from_jax(d) == device:
                    return d
            raise DTypeError(f"no JAX device {device}", backend=self.name)
        from unarray._devices import parse_device

        return self.native_device(parse_device(device))

    def devices(self) -> list[Device]:
        return [device_from_jax(d) for d in jax.devices()]

    def dtype(self, d: Any) -> Any:
        if d is None:
            return None
        name = dtype_named(d, self.name)
        if name in NARROW:  # the device is looked up only where the rule applies
            check_dtype(name, self.devices()[0], _x64())
        return jnp.dtype(name)

    def dtype_names(self, device: Device) -> tuple[str, ...]:
        x64 = _x64()
        return tuple(n for n in SPEC_DTYPE_NAMES if refusal(n, device, x64) is None)

    # Note: jnp.asarray of a Python int, float or complex is weakly typed (it then promotes as a Python scalar
    # would: float32 beside a float64 0-d array); the standard's arrays are not, so it gets its dtype for good.
    def asarray(self, obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Any:
        out = jnp.asarray(obj, dtype=dtype, device=device, copy=copy)
        return jnp.asarray(out, dtype=out.dtype) if dtype is None and type(obj) in _WEAK else out

    def creation_device(self, x: jax.Array) -> dict[str, Any]:
        # A tracer has no committed device: its computation decides placement.
        return {} if isinstance(x, jax.core.Tracer) else {"device": x.device}

    def at_update(self, x: jax.Array, idx: Any, op: str, v: jax.Array, in_place: bool) -> Any:
        return _at.update(x, idx, op, v)

    def apply_numpy(self, call: Any, arrays: list[Any], shape: tuple[int, ...], dtype: Any) -> Any:
        return jax.pure_callback(call, jax.ShapeDtypeStruct(shape, dtype), *arrays)  # type: ignore[no-untyped-call]

    def is_tracer(self, x: jax.Array) -> bool:
        return isinstance(x, jax.core.Tracer)

    def conformance_setup(self) -> None:
        # The suite's float64 cases need x64 mode; float32 cases are unaffected (inputs carry their dtype).
        jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]

    spreads = True  # an array sharded over several devices leads a mixed call; replicate_on joins it

    def is_spread(self, x: jax.Array) -> bool:
        try:
            return len(x.sharding.device_set) > 1
        except Exception:  # a deleted array, a sharding without devices: eager
            return False

    def failure_hint(self, text: str) -> tuple[type[UnarrayError], str] | None:
        if "incompatible devices" in text:  # JAX's words for arrays on different meshes or device sets
            return DeviceMismatchError, ("move the arrays to one device first, e.g. ua.to(x, device=...) (sharded "
                                         "JAX arrays: put them on one mesh, e.g. ua.to(x2, 'jax', "
                                         "device=ua.device(x1)))")
        return None

    def precision_used(self, policy: str, x: jax.Array) -> str:
        return precision_label(policy, self.device_of(x))

    @_MATMUL.bind
    def matmul(self, x1: jax.Array, x2: jax.Array, policy: str) -> Any:
        if x1.dtype is not x2.dtype:
            check_promotion("matmul", x1, x2)
        if type(x1) is _ARRAY_TYPE and type(x2) is _ARRAY_TYPE:
            return _matmul(x1, x2, precision=_JAX_PRECISION[policy])
        return jnp.matmul(x1, x2, precision=_JAX_PRECISION[policy])

    # Note: like matmul, these contract on the MXU/tensor cores, where JAX's default precision is bf16/TF32.
    def tensordot(self, x1: Any, x2: Any, /, *, axes: Any = 2, policy: str) -> Any:
        check_promotion("tensordot", x1, x2)
        if type(x1) is _ARRAY_TYPE and type(x2) is _ARRAY_TYPE:
            axes = axes if isinstance(axes, int) else tuple(tuple(a) for a in axes)
            return _tensordot(x1, x2, axes=axes, precision=_JAX_PRECISION[policy])
        return jnp.tensordot(x1, x2, axes=axes, precision=_JAX_PRECISION[policy])

    def vecdot(self, x1: Any, x2: Any, /, *, axis: int = -1, policy: str) -> Any:
        check_promotion("vecdot", x1, x2)
        if type(x1) is _ARRAY_TYPE and type(x2) is _ARRAY_TYPE:
            return _vecdot(x1, x2, axis=axis, precision=_JAX_PRECISION[policy])
        return jnp.vecdot(x1, x2, axis=axis, precision=_JAX_PRECISION[policy])

    def linalg_matrix_power(self, x: jax.Array, n: int, /, *, policy: str) -> Any:
        with jax.default_matmul_precision(_DEFAULT_PRECISION[policy]):
            return jnp.linalg.matrix_power(x, n)

    def matrix_transpose(self, x: jax.Array) -> Any:
        if x.ndim < 2:
            return super().matrix_transpose(x)
        return jnp.matrix_transpose(x)

    # Note: jnp.linalg.matrix_rank of an empty matrix fails (the maximum of no singular values); its rank is 0.
    def linalg_matrix_rank(self, x: jax.Array, /, *, rtol: Any = None) -> Any:
        if x.ndim >= 2 and 0 in x.shape[-2:]:
            return jnp.zeros(x.shape[:-2], int)
        return jnp.linalg.matrix_rank(x, rtol=rtol)

    # Note: the norms that take a maximum or minimum across elements lose a shard's NaN as max does.
    def linalg_vector_norm(self, x: jax.Array, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
        r = jnp.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
        return _nan_kept(r, x, axis, keepdims) if ord in (math.inf, -math.inf) else r

    def linalg_matrix_norm(self, x: jax.Array, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
        r = jnp.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
        return r if ord == "fro" else _nan_kept(r, x, (-2, -1), keepdims)

    # Special cases jnp misses (see _special): signed zero results of floor_divide and remainder, the sign
    # and infinities of complex sqrt, |inf + NaN j|.
    def floor_divide(self, x1: Any, x2: Any, /) -> Any:
        check_promotion("floor_divide", x1, x2)
        r = jnp.floor_divide(x1, x2)
        return _special.floor_divide_zero_sign(jnp, r, x1, x2) if jnp.issubdtype(r.dtype, jnp.floating) else r

    def remainder(self, x1: Any, x2: Any, /) -> Any:
        check_promotion("remainder", x1, x2)
        r = jnp.remainder(x1, x2)
        return _special.remainder_zero_sign(jnp, r, x2) if jnp.issubdtype(r.dtype, jnp.floating) else r

    def sqrt(self, x: jax.Array, /) -> Any:
        r = jnp.sqrt(x)
        return _special.complex_sqrt(jnp, r, x, jax.lax.complex) if x.dtype.kind == "c" else r

    def abs(self, x: jax.Array, /) -> Any:
        r = jnp.abs(x)
        return _special.complex_abs(jnp, r, x) if x.dtype.kind == "c" else r

    # Note: jnp.expm1(0 - 0j) is 0 + 0j; the standard's conj symmetry keeps an imaginary zero's sign.
    def expm1(self, x: jax.Array, /) -> Any:
        r = jnp.expm1(x)
        if x.dtype.kind != "c":
            return r
        b = jnp.imag(x)
        return jax.lax.complex(jnp.real(r), jnp.where(b == 0, b, jnp.imag(r)))

    # Note: jnp.permute_dims refuses negative axes, which NumPy and torch accept.
    def permute_dims(self, x: jax.Array, axes: tuple[int, ...]) -> Any:
        return jnp.permute_dims(x, tuple(a % x.ndim if a < 0 else a for a in axes))

    @_SUM.bind
    def sum(self, x: jax.Array, axis: Any, dtype: Any, keepdims: bool) -> Any:
        return jnp.sum(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    @_MEAN.bind
    def mean(self, x: jax.Array, axis: Any, keepdims: bool) -> Any:
        return jnp.mean(x, axis=axis, keepdims=keepdims)

    def min(self, x: jax.Array, axis: Any, keepdims: bool) -> Any:
        return _nan_kept(self._ordered("min", jnp.min, x, axis, keepdims, x.dtype.kind == "c"), x, axis, keepdims)

    def max(self, x: jax.Array, axis: Any, keepdims: bool) -> Any:
        return _nan_kept(self._ordered("max", jnp.max, x, axis, keepdims, x.dtype.kind == "c"), x, axis, keepdims)

    def argmin(self, x: jax.Array, axis: int | None, keepdims: bool) -> Any:
        return self._ordered("argmin", jnp.argmin, x, axis, keepdims, x.dtype.kind == "c")

    @_ARGMAX.bind
    def argmax(self, x: jax.Array, axis: int | None, keepdims: bool) -> Any:
        return self._ordered("argmax", jnp.argmax, x, axis, keepdims, x.dtype.kind == "c")

    # Note: jnp.any/all read a complex element's real part only (-0.5j counts as False); the standard: nonzero.
    def any(self, x: jax.Array, axis: Any, keepdims: bool) -> Any:
        return jnp.any(x != 0 if x.dtype.kind == "c" else x, axis=axis, keepdims=keepdims)

    def all(self, x: jax.Array, axis: Any, keepdims: bool) -> Any:
        return jnp.all(x != 0 if x.dtype.kind == "c" else x, axis=axis, keepdims=keepdims)

    # Note: jnp.searchsorted returns int32 even in x64 mode; the standard says the default index dtype.
    def searchsorted(self, x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
        out = jnp.searchsorted(x1, x2, side=side, sorter=sorter)
        return out.astype(jnp.int64) if _x64() else out

    def cumulative_sum(self, x: jax.Array, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return jnp.cumulative_sum(x, axis=axis, dtype=self._acc(x, dtype), include_initial=include_initial)

    def cumulative_prod(self, x: jax.Array, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return jnp.cumulative_prod(x, axis=axis, dtype=self._acc(x, dtype), include_initial=include_initial)

    # Note: jnp.cumulative_prod keeps small integer dtypes (int8 stays int8); the standard accumulates
    # integers in the default (unsigned) integer dtype, as sum does.
    def _acc(self, x: Any, dtype: Any) -> Any:
        if dtype is not None:
            return self.dtype(dtype)
        if jnp.issubdtype(x.dtype, jnp.unsignedinteger):
            return jnp.dtype("uint64" if _x64() else "uint32")
        if jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_:
            return jnp.dtype("int64" if _x64() else "int32")
        return None

    # The set functions: jnp's lose a complex NaN's other part (sets.py).
    unique_all = staticmethod(_sets.unique_all)
    unique_values = staticmethod(_sets.unique_values)
    unique_counts = staticmethod(_sets.unique_counts)
    unique_inverse = staticmethod(_sets.unique_inverse)

    # ua.nn: jax.nn's kernels (nn.py).
    nn_softmax = _nn.softmax
    nn_log_softmax = _nn.log_softmax
    nn_logsumexp = _nn.logsumexp
    nn_gelu = _nn.gelu
    nn_silu = _nn.silu

    # Attention: jax.nn.dot_product_attention, cuDNN where it applies (attention.py), a ring on a sharded sequence.
    borrows_attention = False  # its own fused kernels

    def attention_signature(self, q: Any, k: Any, v: Any) -> Any:
        # (the shardings say the device and whether a sequence is spread over a mesh: the ring's choice)
        return None if isinstance(q, jax.core.Tracer) else (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype,
                                                             q.sharding, k.sharding, v.sharding)

    def attention_plan(self, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                       policy: str) -> Plan:
        from unarray._backends.jax import attention as attention_jax

        seq = q.ndim - 2 if layout == "bhsd" else q.ndim - 3
        if spec.structured or (spec.causal and mask is None and q.shape[seq] != k.shape[seq]):
            from unarray._backends.jax import attention_masks  # JAX's own kernels for the mask, off a ring

            mp = attention_masks.plan(q, k, v, mask, spec, scale, layout, policy)
            if mp is not None:
                return mp
        p = attention_jax.plan(q, k, v, mask, spec, scale, layout, policy)
        return super().attention_plan(q, k, v, mask, spec, scale, layout, policy) if p is None else p


BACKEND = JaxBackend()
register_native(jax.Device, device_from_jax)

if TYPE_CHECKING:  # mypy checks the class against the contract, for its array type
    _contract: BackendContract[jax.Array] = BACKEND
