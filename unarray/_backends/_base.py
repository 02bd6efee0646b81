"""The contract every backend satisfies, and the generic array-API path.

``Backend`` implements every op through ``self.xp``, the backend's array-API
namespace (array-api-compat's wrapper or the library itself where it
conforms). Backend modules subclass it and override only what differs: the
hot ops where a native call is faster, and deviations from the standard.
An op that a backend cannot run is listed in ``holes`` and raises
``UnsupportedError``; ``ua.explain`` and the support matrix read that list.
"""

from __future__ import annotations

import functools
import math
import sys
from typing import TYPE_CHECKING, Any, ClassVar, cast

from unarray._backends import updates
from unarray._backends._compiler import EAGER, Compiler
from unarray._backends._contract import GENERIC
from unarray._backends._nn import NNOps, Plan
from unarray._devices import Device
from unarray._dtypes import DTYPES, NARROW, SPEC_DTYPE_NAMES, DType, canonical_name
from unarray._errors import ArgumentError, DTypeError, EmptyReductionError, UnarrayError, UnsupportedError
from unarray._kernels.layout_route import Route, unstrided

if TYPE_CHECKING:  # (attention's modules load on its first call, not a plain op's)
    from unarray._backends.attention_masks import MaskSpec


def dtype_named(d: Any, backend: str) -> str:
    """The standard's name of the dtype ``d`` (unarray's, a library's, or a name); DTypeError if none."""
    # Note: a ua.DType is read directly: torch.compile cannot trace its hash into the name cache.
    name = d.name if isinstance(d, DType) else canonical_name(d)
    if name is None:
        raise DTypeError(f"{d!r} is not a dtype", backend=backend)
    return name


class Backend(NNOps):
    name: ClassVar[str]
    # op name -> reason, for ops this backend cannot run.
    holes: ClassVar[dict[str, str]] = {}

    xp: Any
    native: Any
    # A lazy backend (dask) leads a mixed call whatever its operand's position; others join through join().
    lazy: ClassVar[bool] = False
    # Elementwise ops this backend corrects beyond its library's kernel: a lazy backend whose chunks are this
    # backend's arrays runs these per chunk, so the corrections hold there too.
    elementwise_fixes: ClassVar[frozenset[str]] = frozenset()
    # Whether the library's own promotion of mixed kinds is unarray's rule (the higher kind's dtype at its own width:
    # int32 with float32 is float32); a library that widens instead (NumPy's float64) has its operands cast first.
    native_mixed_kinds: ClassVar[bool] = True
    # Arrays that cannot be written in place (JAX, TensorFlow): ua.at returns a new array there.
    immutable: ClassVar[bool] = False
    # What ua.jit does for this library's arrays (its package's compile.py); none of its own: eager.
    compiler: ClassVar[Compiler] = EAGER
    # A context manager factory silencing the library's floating-point warnings, where it gives them: ua.nn's
    # stated results include NaN and infinities. None where it gives none.
    quiet: ClassVar[Any] = None

    # -- generic fallback: the standard's other functions (GENERIC) come from xp --------
    def __getattr__(self, op: str) -> Any:
        if op not in GENERIC:  # (a misspelt op, a private name: no silent fallback)
            raise AttributeError(f"{type(self).__name__} has no {op!r}")
        if op in self.holes:
            raise UnsupportedError(self.holes[op], op=op, backend=self.name)
        ns, _, short = op.partition("_")
        if ns in ("linalg", "fft") and short:
            fn = getattr(getattr(self.xp, ns, None), short, None)
        else:
            fn = getattr(self.xp, op, None)
        if fn is None:
            raise UnsupportedError(
                f"{self.name} has no {op}; convert with ua.to(x, 'numpy') and back", op=op, backend=self.name
            )
        setattr(self, op, fn)
        return fn

    def __repr__(self) -> str:
        return f"<unarray backend {self.name}>"

    # -- identity, devices, dtypes --------------------------------------------------
    def is_array_type(self, t: type) -> bool:
        return True

    def plain_view(self, t: type, op: str | None) -> Any:
        """For an array subclass ``t`` whose semantics differ from the standard's: a zero-copy converter
        to the plain array type (None: ``t`` is read as it is); raises where no view keeps its meaning."""
        return None

    def device_of(self, x: Any) -> Device:
        return Device.from_dlpack(x.__dlpack_device__())

    def placement_of(self, x: Any) -> Device:
        """What ``ua.device`` reports: ``device_of``, or a :class:`ShardedDevice` for an array spread over
        several devices (a JAX ``NamedSharding``)."""
        return self.device_of(x)

    def native_device(self, device: Any) -> Any:
        return device

    def version(self) -> str:
        return str(getattr(self.native, "__version__", "?"))

    def devices(self) -> list[Device]:
        return [Device("cpu")]

    def dtype(self, d: Any) -> Any:
        if d is None:
            return None
        name = dtype_named(d, self.name)
        try:
            return getattr(self.xp, name)
        except AttributeError:
            raise DTypeError(f"{self.name} has no dtype {name}", backend=self.name) from None

    def namespace_dtypes(self) -> dict[str, Any]:
        """The dtype objects ``ua.array_namespace`` hands out for this library, by name: the library's own.

        Each is the object an array of that dtype reports as ``x.dtype`` (NumPy's ``np.dtype`` for NumPy, JAX, dask
        and CuPy; ``torch.float32``; ``tf.float32``), so generic code's dict and set lookups by ``x.dtype`` find it
        (it hashes as ``x.dtype`` does). A name the library lacks is absent (the namespace keeps unarray's).
        """
        own = self.__dict__.get("_namespace_dtypes")
        if own is not None:
            return cast(dict[str, Any], own)
        import numpy as np  # (only where a namespace is bound: the module stays free of any library)

        out: dict[str, Any] = {}
        for name in DTYPES:
            try:
                d = self.dtype(name)
            except (UnarrayError, AttributeError, TypeError):
                continue  # a dtype the library lacks here (bfloat16 on NumPy, 64-bit on JAX without x64)
            # Note: NumPy's scalar types (np.float32) stand for dtypes in calls, but an array's dtype is np.dtype.
            out[name] = np.dtype(d) if isinstance(d, type) and issubclass(d, np.generic) else d
        self.__dict__["_namespace_dtypes"] = out
        return out

    def creation_device(self, x: Any) -> dict[str, Any]:
        """Keyword arguments that make ``xp``'s creation functions allocate where ``x`` lives."""
        return {"device": x.device}

    def dtype_name(self, x: Any) -> str:
        return canonical_name(x.dtype) or str(x.dtype)

    def default_dtypes(self, device: Any = None) -> dict[str, Any]:
        return cast(dict[str, Any], self.xp.__array_namespace_info__().default_dtypes(device=device))

    # -- the inspection API (ua.__array_namespace_info__ reads these) ---------------------
    def dtype_names(self, device: Device) -> tuple[str, ...]:
        """The standard's dtypes this backend holds on ``device``: the same rule that ``dtype()`` enforces."""
        if device.has_float64:
            return SPEC_DTYPE_NAMES
        return tuple(n for n in SPEC_DTYPE_NAMES if n not in ("float64", "complex128"))

    def default_dtype_names(self, device: Device) -> dict[str, str]:
        native = self.default_dtypes()
        have = self.dtype_names(device)
        names = {k: canonical_name(v) or str(v) for k, v in native.items()}
        # Note: a 64-bit default on a device without it (float64 on a TPU) is the 32-bit dtype there.
        return {k: v if v in have else NARROW.get(v, v) for k, v in names.items()}

    def recover(self, op: str, exc: Exception, args: tuple[Any, ...]) -> Any:
        """Run ``op`` another way after its kernel refused ``args`` (NotImplemented: no other way)."""
        return NotImplemented

    def capabilities(self) -> dict[str, Any]:
        return dict(self.xp.__array_namespace_info__().capabilities())

    # For a library whose traced values share the concrete array type (torch.compile traces with
    # torch.Tensor itself; JAX and TensorFlow tracers are types of their own): a no-argument call
    # saying whether a trace is running, checked by each handoff of that type.
    compiling: ClassVar[Any] = None  # Callable[[], bool] | None, a staticmethod where set
    # ua.to's general path, run outside that trace (set where compiling is).
    outside_trace: ClassVar[Any] = None

    def is_tracer(self, x: Any) -> bool:
        return False

    def traced_constant(self, x: Any) -> Any:
        """``x`` (another library's eager array) as a constant of a trace this backend is compiling
        now, or None when no such trace is running (the call then hands ``x`` over as usual)."""
        return None

    # -- arrays spread over several devices (they lead a mixed call: _dispatch.rank) ------
    # Some of its arrays may span several devices (a sharded JAX array, a torch DTensor): is_spread says which.
    spreads: ClassVar[bool] = False
    # How another library's array joins one of its arrays placed on a device mesh (a device mismatch's fix).
    mesh_fix: ClassVar[str] = ""

    def is_spread(self, x: Any) -> bool:
        """Whether ``x`` (not a tracer) spans several devices; read only where :attr:`spreads`."""
        return False

    def replicate_on(self, lead: Any, x: Any) -> Any:
        """``x`` (just handed to this library) placed where it can join ``lead``, an array spread over several
        devices; as it is where the library places it itself."""
        return x

    def conformance_setup(self) -> None:
        """Set the library's global modes the conformance suite's cases need, in the suite's own process (its
        worker or the ``python -m unarray check`` run); never called by the library's ops."""

    def failure_hint(self, text: str) -> tuple[type[UnarrayError], str] | None:
        """The typed error and the fix for a native failure whose message (``text``, lower case) this library's
        own words identify, or None for the generic reading (unarray._dispatch.fail)."""
        return None

    # -- layout --------------------------------------------------------------------------
    def layout_route(self, x: Any) -> Route:
        """How ``ua.ascontiguousarray`` compacts ``x``: the plan it runs and ``ua.explain`` prints. A library
        whose arrays carry strides declares its own (its package's ``layout``); others are returned as is."""
        return unstrided(self.name)

    def ascontiguousarray(self, x: Any) -> Any:
        """``ua.ascontiguousarray(x)``: ``x`` by its route. A library may answer its common cases before building
        the route (the same result, for less per call)."""
        return self.layout_route(x).run(x)

    def compile(self, fn: Any, opts: dict[str, Any], *, device: Any, policy: str, nums: Any, names: Any,
                fullgraph: bool) -> Any:
        """``fn`` compiled by this library's compiler for one ``ua.jit`` entry (eager where it has none)."""
        return self.compiler.build(fn, opts, device=device, policy=policy, nums=nums, names=names,
                                   fullgraph=fullgraph)

    # -- handoff -----------------------------------------------------------------------
    def from_dlpack(self, x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
        kw = {k: v for k, v in (("copy", copy), ("device", device)) if v is not None}
        return self.xp.from_dlpack(x, **kw)

    # -- explain -------------------------------------------------------------------------
    def kernel_name(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """What ``op`` runs: the callable the call resolves on this backend, named where it lives."""
        if op == "ascontiguousarray" and args:
            return self.layout_route(args[0]).kernel  # the route ascontiguousarray runs
        attr = _SAME_AS.get(op, op.replace(".", "_"))
        if self.compiling is not None and self.compiling():
            # Note: inside a trace the op is recorded, not called; some tracers (torch 2.11's Dynamo) cannot
            # read a function's qualified name, so the name is the op's on this backend.
            return f"{self.name}.{attr} (recorded by {self.name}'s tracer)"
        try:
            fn = getattr(self, attr)
        except (AttributeError, UnsupportedError) as e:
            return f"none on {self.name} ({e})"
        short = attr.rpartition("_")[2] if attr.startswith(("linalg_", "fft_")) else attr
        home = getattr(self.native, "__name__", None)
        found = find_name(fn, short, home)
        if found is None:  # a namespace's function made at run time: its name there, where that finds it
            name = f"{getattr(self.xp, '__name__', self.name)}.{op}"
            if _lookup(name) is fn:
                return name
        return found or callable_name(fn, short, home)

    # -- precision -----------------------------------------------------------------------
    def precision_used(self, policy: str, x: Any) -> str:
        """What a float32 matmul on ``x`` computes with under ``policy``."""
        return "float32 (the CPU runs no reduced-precision matmul passes)"

    # -- hot ops: generic versions, overridden where a native path is faster --------------
    # Note: the products take the precision policy as an argument (the front end read it once); a backend
    # with a switch maps it there, the generic path has none.
    def matmul(self, x1: Any, x2: Any, policy: str) -> Any:
        return self.xp.matmul(x1, x2)

    def tensordot(self, x1: Any, x2: Any, /, *, axes: Any = 2, policy: str) -> Any:
        return self.xp.tensordot(x1, x2, axes=axes)

    def vecdot(self, x1: Any, x2: Any, /, *, axis: int = -1, policy: str) -> Any:
        return self.xp.vecdot(x1, x2, axis=axis)

    def linalg_matrix_power(self, x: Any, n: int, /, *, policy: str) -> Any:
        if "linalg_matrix_power" in self.holes:
            raise UnsupportedError(self.holes["linalg_matrix_power"], op="linalg_matrix_power", backend=self.name)
        return self.xp.linalg.matrix_power(x, n)

    def matrix_transpose(self, x: Any) -> Any:
        if x.ndim < 2:
            raise ArgumentError(f"needs an array of at least 2 dimensions, got shape {tuple(x.shape)}",
                                op="matrix_transpose", backend=self.name)
        return self.xp.matrix_transpose(x)

    def permute_dims(self, x: Any, axes: tuple[int, ...]) -> Any:
        return self.xp.permute_dims(x, axes)

    def sum(self, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        return self.xp.sum(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    def prod(self, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        return self.xp.prod(x, axis=axis, dtype=self.dtype(dtype), keepdims=keepdims)

    def mean(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return self.xp.mean(x, axis=axis, keepdims=keepdims)

    def var(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        return self.xp.var(x, axis=axis, correction=correction, keepdims=keepdims)

    def std(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        return self.xp.std(x, axis=axis, correction=correction, keepdims=keepdims)

    # Note: NumPy and torch divide by max(N - correction, 0) and give inf; the standard says NaN when
    # N - correction <= 0. N is known from the shape (unknown only inside tf.function, whose backend
    # divides by a NaN-guarded N - correction itself). ua.var and ua.std call these, each backend's var/std below.
    def var_corrected(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        if correction and _too_few(x, axis, correction):
            return self.var(x, axis, 0, keepdims) * math.nan
        return self.var(x, axis, correction, keepdims)

    def std_corrected(self, x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
        if correction and _too_few(x, axis, correction):
            return self.std(x, axis, 0, keepdims) * math.nan
        return self.std(x, axis, correction, keepdims)

    def min(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return self._ordered("min", self.xp.min, x, axis, keepdims, self.xp.isdtype(x.dtype, "complex floating"))

    def max(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return self._ordered("max", self.xp.max, x, axis, keepdims, self.xp.isdtype(x.dtype, "complex floating"))

    def argmin(self, x: Any, axis: int | None, keepdims: bool) -> Any:
        return self._ordered("argmin", self.xp.argmin, x, axis, keepdims, self.xp.isdtype(x.dtype, "complex floating"))

    def argmax(self, x: Any, axis: int | None, keepdims: bool) -> Any:
        return self._ordered("argmax", self.xp.argmax, x, axis, keepdims, self.xp.isdtype(x.dtype, "complex floating"))

    def any(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return self.xp.any(x, axis=axis, keepdims=keepdims)

    def all(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return self.xp.all(x, axis=axis, keepdims=keepdims)

    def cumulative_sum(self, x: Any, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return self.xp.cumulative_sum(x, axis=axis, dtype=self.dtype(dtype), include_initial=include_initial)

    def cumulative_prod(self, x: Any, axis: int | None, dtype: Any, include_initial: bool) -> Any:
        return self.xp.cumulative_prod(x, axis=axis, dtype=self.dtype(dtype), include_initial=include_initial)

    # -- attention: one plan per call (the kernel it enters, the call that enters it): the blocked online-softmax
    # path; a backend with its own kernel overrides attention_plan and says it borrows none ----------------------
    # Where another library lends its fused kernels on the array's device (Library.lends_attention), the front end
    # hands the operands to it instead (its plan, not this backend's).
    borrows_attention: ClassVar[bool] = True

    # spec (attention_masks.MaskSpec): causal, window and segment ids, described; a backend's own kernels that do not
    # take a structured one (spec.structured) leave it to this path, which skips the blocks it masks.
    def attention_plan(self, q: Any, k: Any, v: Any, mask: Any, spec: MaskSpec, scale: float, layout: str,
                       policy: str) -> Plan:
        from unarray._backends import attention_blocked

        return attention_blocked.blocked_plan(self, q, k, v, mask, spec, scale, layout, policy)

    def attention_signature(self, q: Any, k: Any, v: Any) -> Any:
        """What an attention route reads of q, k and v (shapes, dtypes, device), hashable; None (a trace, or no
        route that runs again: Plan.again) plans every call in full."""
        return None

    # Note: axis may be left out for a 1-D x only (the standard); NumPy and JAX would flatten an N-D x.
    def take(self, x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
        if axis is None:
            if x.ndim != 1:
                raise ArgumentError(f"take without axis needs a 1-D x, got shape {tuple(x.shape)}; pass axis=",
                                    op="take", backend=self.name)
            axis = 0
        return self.xp.take(x, indices, axis=axis)

    # Note: NumPy's diff takes prepend=None as a value to prepend (its default is a sentinel).
    def diff(self, x: Any, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
        kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
        return self.xp.diff(x, axis=axis, n=n, **kw)

    # -- what generic code needs on immutable and lazy arrays (ua.at, ua.apply_numpy) ---------------
    def writable(self, x: Any) -> bool:
        """Whether ``x`` may be written in place (``ua.at(..., copy=False)``)."""
        flags = getattr(x, "flags", None)
        # Note: CuPy's flags have no writeable (its arrays always are)
        return not (self.immutable or self.lazy) and bool(getattr(flags, "writeable", True))

    def at_update(self, x: Any, idx: Any, op: str, v: Any, in_place: bool) -> Any:
        out = x if in_place else x.copy()
        return updates.numpy_update(out, idx, op, self.xp.asarray(v, dtype=x.dtype))

    def host_numpy(self, x: Any) -> Any:
        # Note: not named to_numpy, which only backends with their own device-to-host route define (the handoff's
        # device move takes that route where it exists).
        own = getattr(type(self), "to_numpy", None)  # (on the class: the instance serves any name from xp)
        return own(self, x) if own is not None else updates.host(x)

    def apply_numpy(self, call: Any, arrays: list[Any], shape: tuple[int, ...], dtype: Any) -> Any:
        out = call(*[self.host_numpy(a) for a in arrays])
        return self.xp.asarray(out, **(self.creation_device(arrays[0]) if arrays else {}))

    # -- helpers ---------------------------------------------------------------------------
    def _unordered(self, op: str, x: Any) -> DTypeError:
        """The refusal of ``max``/``min``/``argmax``/``argmin`` on a complex array (no order in the standard)."""
        return DTypeError(f"got a {self.dtype_name(x)} array, but complex numbers have no order in the standard; "
                          f"reduce the real part or the magnitude instead (ua.real(x), ua.abs(x))", op=op,
                          backend=self.name)

    # max/min/argmax/argmin: the standard orders no complex numbers and reduces nothing empty (``is_complex``
    # is the caller's: each library reads its dtype's kind its own fastest way).
    def _ordered(self, op: str, fn: Any, x: Any, axis: Any, keepdims: bool, is_complex: bool) -> Any:
        if is_complex:
            raise self._unordered(op, x)
        self._check_nonempty(op, x, axis)
        return fn(x, axis=axis, keepdims=keepdims)

    def _check_nonempty(self, op: str, x: Any, axis: Any) -> None:
        shape = tuple(x.shape)
        if 0 not in shape:
            return
        axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
        if 0 in (shape[a] for a in axes):
            raise EmptyReductionError(f"cannot reduce over zero elements (shape {shape}, axis={axis!r}): {op} has no "
                                      "identity; check x.size first or use a reduction with an identity", op=op,
                                      backend=self.name)


# Front-end ops that are another op under a second name (ua.linalg.matmul is ua.matmul): the method they run.
_SAME_AS = {"linalg.matmul": "matmul", "linalg.matrix_transpose": "matrix_transpose",
            "linalg.tensordot": "tensordot", "linalg.vecdot": "vecdot"}


def callable_name(fn: Any, alias: str | None = None, home: str | None = None) -> str:
    """The dotted name of ``fn`` where it can be found (``numpy.add``,
    ``unarray._backends.torch.backend.TorchBackend.sum``); a wrapper made at run time (``__wrapped__``, a
    ``functools.partial``) is named by what it wraps, and says it wraps it."""
    f = getattr(fn, "__func__", fn)
    found = find_name(f, alias, home)
    if found is not None:
        return found
    inner = f.func if isinstance(f, functools.partial) else getattr(f, "__wrapped__", None)
    where = f"{getattr(f, '__module__', None) or type(f).__module__}.{getattr(f, '__qualname__', type(f).__name__)}"
    if inner is not None:
        named = callable_name(inner, alias, home)
        return named if where in _TRANSPARENT else f"{named} (wrapped by {where})"
    return where


# Wrappers that only drop the precision policy a backend ignores (_precision.ignoring_policy): named by what they
# wrap, with nothing added.
_TRANSPARENT = frozenset({"unarray._gate.Unswitched", "unarray._precision.ignoring_policy.<locals>.unswitched"})


def find_name(fn: Any, alias: str | None = None, home: str | None = None) -> str | None:
    """``module.name`` that imports as ``fn`` itself, for its qualified name, its name or ``alias`` in its
    module, or in ``home`` (the library's top module: where a library exports an object, such as a CuPy ufunc,
    whose own module does not name it); None: none does."""
    f = getattr(fn, "__func__", fn)
    own = getattr(f, "__module__", None) or type(f).__module__
    for module in (own, home) if home and home != own else (own,):
        for name in (getattr(f, "__qualname__", None), getattr(f, "__name__", None), alias):
            if name and "<" not in name and _lookup(f"{module}.{name}", module) is f:
                return f"{module}.{name}"
    return None


def _lookup(dotted: str, module: str | None = None) -> Any:
    # The object a dotted name reaches from an imported module (``module``: where the name starts), or None.
    if module is None:
        module, _, rest = dotted.partition(".")
        while module not in sys.modules and rest:
            head, _, rest = rest.partition(".")
            module = f"{module}.{head}"
    else:
        rest = dotted[len(module) + 1:]
    obj: Any = sys.modules.get(module)
    for part in rest.split(".") if rest else ():
        obj = getattr(obj, part, None)
    return getattr(obj, "__func__", obj)


def _too_few(x: Any, axis: Any, correction: float) -> bool:
    # N - correction <= 0 for the reduced count N, where the shape tells N (a TensorFlow shape may not).
    try:
        shape = tuple(x.shape)
    except ValueError:  # a TensorFlow shape of unknown rank
        return False
    dims = shape if axis is None else (shape[axis],) if isinstance(axis, int) else tuple(shape[a] for a in axis)
    n = 1
    for d in dims:
        if d is None:
            return False
        n *= int(d)
    return n - correction <= 0
