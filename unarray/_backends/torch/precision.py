# The precision policy on torch: torch's float32 matmul precision is process-global (a legacy value
# and a tree of per-backend fp32_precision slots), so it is one _precision.Switch. See
# unarray/_precision.py for the discipline and the residual exposure of native calls in other threads.
from __future__ import annotations

import platform
from _thread import get_ident
from typing import Any

import torch

from unarray import _precision
from unarray._backends.torch import watch

_C = torch._C
_get = _C._get_fp32_precision_getter
_set = _C._set_fp32_precision_setter
# unarray policy -> torch.set_float32_matmul_precision value (it writes the legacy value and the
# cuda/mkldnn matmul slots consistently, so that none of torch's mixed-API checks can fire).
TORCH_PRECISION = {"highest": "highest", "tf32": "high", "bf16": "medium", "fastest": "medium"}
# What the mkldnn matmul slot must read for a policy on a CPU that has reduced-precision paths.
_CPU_WANT = {"highest": ("ieee", "none"), "tf32": ("tf32",), "bf16": ("bf16",), "fastest": ("bf16",)}
_REDUCIBLE = (torch.float32, torch.complex64)

_dynamo_compiling = torch.compiler.is_dynamo_compiling
_session = torch.compiler.is_compiling
_context = torch._guards.TracingContext.try_get


def compiling() -> bool:
    # Whether this thread traces for torch.compile or torch.export. is_compiling() alone is process-global (true
    # in every thread while one compiles); Dynamo folds is_dynamo_compiling() to true in the code it traces, and
    # the tracing context is per thread (AOTAutograd's and export's tracing too).
    return _dynamo_compiling() or (_session() and _context() is not None)


def cpu_can_reduce() -> bool:
    # Whether torch's CPU (oneDNN) matmul may have a bf16 or TF32 path: broad on purpose, oneDNN taking its bf16
    # mode as a hint (docs/design-notes.md).
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return True  # Arm BF16 and anything unknown: assume the setting can matter
    caps = torch.cpu.get_capabilities()
    # Note: oneDNN's bf16 (avx512_core or avx_ne_convert) and TF32 (amx_fp16) checks.
    avx512 = all(caps.get(k, False) for k in ("avx512_bw", "avx512_vl", "avx512_dq"))
    return bool(avx512 or caps.get("avx_ne_convert") or caps.get("amx_fp16"))


CPU_REDUCES = cpu_can_reduce()


def matters(x: Any) -> bool:
    # (is_cpu and dtype are C attribute reads; x.device would build a torch.device per call)
    return (not x.is_cpu or CPU_REDUCES or _precision.FORCE_ARBITRATION) and x.dtype in _REDUCIBLE


# What each want reads and the states that give it: (read, its arguments, states), the slot of the call's device
# only (cuBLAS's TF32 flag, oneDNN's matmul slot); the C gate takes the table as it is.
_READS: dict[tuple[str, str], tuple[Any, tuple[Any, ...], tuple[Any, ...]]]
_READS = {("cpu", p): (_get, ("mkldnn", "matmul"), _CPU_WANT[p]) for p in _precision.POLICIES}
_READS.update({("cuda", p): (_C._get_cublas_allow_tf32, (), (p != "highest",)) for p in _precision.POLICIES})


def _read(want: tuple[str, str]) -> Any:
    read, args, _ = _READS[want]
    try:
        return read(*args)
    except RuntimeError:  # the legacy and new APIs disagree: torch's cuBLAS path would raise
        return None


def _satisfies(state: Any, want: tuple[str, str]) -> bool:
    return state in _READS[want][2]  # (None, the mixed-API reading, is in no state tuple)


def _follows(slot: tuple[str, str], parent: tuple[str, str], parent_raw: str, value: str) -> str:
    # The raw value of a slot whose getter gives ``value``, the parent's: "none" where the slot follows the parent,
    # probed by changing the parent for an instant (its raw value restored exactly).
    z = "tf32" if value == "ieee" else "ieee"
    _set(*parent, z)
    follows = _get(*slot) == z
    _set(*parent, parent_raw)
    return "none" if follows else value


def _raw_all(b: str) -> str:
    # The raw value of (b, "all"): the getter resolves "none" to the parent's value (the root's is raw).
    a, g = _get(b, "all"), _get("generic", "all")
    if a == "none" or a != ("none" if b == "cuda" and g == "bf16" else g):
        return a
    return _follows((b, "all"), ("generic", "all"), g, a)


def _raw_matmul(b: str) -> str:
    r = _get(b, "matmul")
    if r == "none" or r != _get(b, "all"):
        return r
    return _follows((b, "matmul"), (b, "all"), _raw_all(b), r)


def snapshot() -> tuple[str, str, str]:
    # The user's matmul precision exactly: the legacy value and the raw cuda/mkldnn matmul slots.
    raw_cuda, raw_mkldnn = _raw_matmul("cuda"), _raw_matmul("mkldnn")
    try:
        legacy = _C._get_float32_matmul_precision()
    except RuntimeError:  # mixed APIs: read the legacy value with the new slots neutral
        _set("cuda", "matmul", "ieee")
        _set("mkldnn", "matmul", "ieee")
        try:
            legacy = _C._get_float32_matmul_precision()
        finally:
            _set("cuda", "matmul", raw_cuda)
            _set("mkldnn", "matmul", raw_mkldnn)
    return legacy, raw_cuda, raw_mkldnn


def restore(saved: tuple[str, str, str]) -> None:
    legacy, raw_cuda, raw_mkldnn = saved
    _C._set_float32_matmul_precision(legacy)
    _set("cuda", "matmul", raw_cuda)
    _set("mkldnn", "matmul", raw_mkldnn)


def _swap(want: tuple[str, str]) -> tuple[Any, Any]:
    saved = snapshot()
    try:
        _C._set_float32_matmul_precision(TORCH_PRECISION[want[1]])
    except BaseException:
        restore(saved)
        raise
    return saved, _read(want)


# ua.jit's boundary: ua.jit holds the switch once around the whole compiled call, and traces under a marker
# (HELD) that lets ops whose policy is the held one emit plain torch ops; why that is sound, and what other
# threads see meanwhile: docs/design-notes.md, "Precision: the torch hold under ua.jit".
HELD: list[tuple[str, str]] = []  # the held want, inside a ua.jit trace only (Dynamo traces a plain list)
_HOLDS: dict[int, list[list[Any]]] = {}  # thread id -> its ua.jit holds, innermost last: [want, token]


def held_for(policy: str, x: Any, *more: Any) -> bool:
    # Inside a ua.jit trace: whether the call holds ``policy`` ("": the call's own) for an op on x and ``more``
    # that records no gradient (one that does keeps the custom op: its backward runs after the hold).
    h = HELD[-1] if HELD else None
    if h is None or h != WANT[x.is_cpu, policy or h[1]]:
        return False
    return not (torch.is_grad_enabled() and (x.requires_grad or any(y.requires_grad for y in more)))


class _Switch(_precision.Switch):
    def _run(self, want: Any, fn: Any, *args: Any) -> Any:
        holds = _HOLDS.get(get_ident()) if _HOLDS else None
        if not holds or holds[-1][1] is None or self._satisfies(self._read(want), want):
            return super()._run(want, fn, *args)
        # A call needing another setting inside this thread's ua.jit hold: the hold is given up for it.
        return _yielding(holds[-1], lambda: super(_Switch, self)._run(want, fn, *args))


def _yielding(rec: list[Any], call: Any) -> Any:
    # rec = [want, token], a hold of this thread: left, call() run, taken back (also after an error).
    token, rec[1] = rec[1], None
    SWITCH.leave(token)
    try:
        return call()
    finally:
        rec[1] = SWITCH.enter(rec[0])


def hold(want: Any, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    # fn(args, kwargs), a ua.jit compiled call, with the switch held at ``want`` for its whole run.
    me = get_ident()
    holds = _HOLDS.get(me)
    # nested in another ua.jit call of this thread that holds another setting: that hold is given up for it
    if holds is not None and holds[-1][1] is not None and not _satisfies(_read(want), want):
        return _yielding(holds[-1], lambda: hold(want, fn, args, kwargs))
    rec: list[Any] = [want, SWITCH.enter(want)]
    if holds is None:
        holds = _HOLDS[me] = []
    holds.append(rec)
    try:
        return fn(args, kwargs)
    finally:
        holds.pop()
        if not holds:
            del _HOLDS[me]
        if rec[1] is not None:
            SWITCH.leave(rec[1])


# Note: in the C gate a cuBLAS read raising RuntimeError (mixed APIs) sends the call to the Python path.
SWITCH = _Switch(_read, _satisfies, _swap, restore, _READS)
# RUN(WANT[x.is_cpu, policy], fn, *args): fn(*args) under the policy's setting (see arbitrate below).
RUN = SWITCH.run
WANT = {(cpu, p): ("cpu" if cpu else "cuda", p) for cpu in (True, False) for p in _precision.POLICIES}


def arbitrate(x: Any, policy: str, fn: Any, *args: Any) -> Any:
    # fn(*args) under policy's setting for a computation on x's device, where matters(x).
    return RUN(WANT[x.is_cpu, policy], fn, *args)


def used(policy: str, x: Any) -> str:
    # What a float32 matmul on x computes with under ``policy`` (ua.explain).
    if not policy:  # inside a torch.compile trace, no policy scoped in the compiled function
        return "the policy in force when the compiled graph runs ('highest' unless the caller scopes another)"
    kind = x.device.type
    try:
        amp = torch.get_autocast_dtype(kind) if torch.is_autocast_enabled(kind) else None
    except (RuntimeError, TypeError, AttributeError):
        amp = None
    if amp is not None:
        return (f"{str(amp).removeprefix('torch.')} (torch.autocast is on for {kind}: it casts float32 matmul "
                "inputs; the policy is moot)")
    if kind == "cpu":
        if not CPU_REDUCES:
            return "float32 (the CPU runs no reduced-precision matmul passes)"
        return {"highest": "float32 (oneDNN reduced-precision passes off)",
                "tf32": "tf32 where the CPU has AMX-FP16 (oneDNN), else float32",
                "bf16": "bf16 passes (oneDNN)", "fastest": "bf16 passes (oneDNN)"}[policy]
    return {"highest": "float32 (cuBLAS, TF32 off)", "tf32": "tf32 (cuBLAS TF32 tensor cores)",
            "bf16": "tf32 (cuBLAS has no bf16 passes for float32; TF32 tensor cores)",
            "fastest": "tf32 (cuBLAS TF32 tensor cores)"}[policy]


# Dynamo cannot trace the front end's policy read (a ContextVar): in its traces it reads the policy scoped inside the
# compiled function, or "" (the one in force when the graph runs); registered as torch._dynamo loads (watch.py).
def _trace_the_scope() -> None:
    torch.compiler.substitute_in_graph(_precision.scope, skip_signature_check=True)(_precision.traced)


watch.after_import(_trace_the_scope)
