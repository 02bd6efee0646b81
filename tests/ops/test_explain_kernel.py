"""``ua.explain`` names the callable an op actually runs: for every op of the conformance cases on every
backend, the object it names exists (it imports by its qualified name), is the callable the backend resolves
for the op (or the kernel that callable wraps), and is entered by the call (recorded by patching the resolved
callable)."""

from __future__ import annotations

import functools
import importlib
from typing import Any

import numpy as np
import pytest

import unarray as ua
from tests._support import TestBackend
from unarray import _backends
from unarray._backends._base import _SAME_AS
from unarray.conformance.cases import all_cases
from unarray.conformance.cases_hot import DT
from unarray.conformance.check import _function, _to_backend
from unarray.conformance.results import Env

# Ops whose call runs no kernel of the backend's (queries, namespace lookups, a callback into NumPy), and
# from_dlpack, whose route is the handoff's (ua.explain("to", ...) names it: tests/ops/test_explain_validation.py).
_NOT_PLAIN = frozenset({
    "array_namespace", "backend_of", "backends", "device", "explain", "get_precision", "isdtype", "can_cast",
    "broadcast_shapes", "apply_numpy", "from_dlpack",
})
# One case per op (the first of the quick profile), except attention, layout and ua.nn, whose routes have
# their own explain tests (tests/attention/test_attention.py, tests/ops/test_layout.py,
# tests/attention/test_nn_trust.py).
_CASES = {c.op: c for c in reversed(list(all_cases("quick")))
          if c.op not in ("scaled_dot_product_attention", "ascontiguousarray", *_NOT_PLAIN)
          and not c.op.startswith("nn.")}
OPS = sorted(_CASES)
# The dtype a backend without 64-bit types (JAX without x64) holds for each 64-bit one.
_NARROW = {"int64": np.int32, "uint64": np.uint32, "float64": np.float32, "complex128": np.complex64}


def resolve(name: str) -> Any:
    """The object a dotted name names: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise AssertionError(f"{name!r} names nothing importable")


def _chain(fn: Any) -> list[Any]:
    # The callable and what it wraps (__wrapped__, a partial's function), innermost last (bound methods by
    # their function).
    out = []
    while fn is not None and len(out) < 8:
        out.append(getattr(fn, "__func__", fn))
        fn = fn.func if isinstance(fn, functools.partial) else getattr(fn, "__wrapped__", None)
    return out


def _held(a: Any, backend: TestBackend) -> Any:
    # The drawn input in a dtype the backend holds (a 64-bit one narrowed where the backend has none).
    if isinstance(a, list):
        return [_held(i, backend) for i in a]
    if isinstance(a, np.ndarray) and not backend.has_float64 and a.dtype.name in _NARROW:
        return a.astype(_NARROW[a.dtype.name])
    if isinstance(a, DT) and not backend.has_float64 and a in _NARROW:
        return DT(np.dtype(_NARROW[a]).name)
    return a


@pytest.mark.parametrize("op", OPS)
def test_explain_names_the_callable_the_call_enters(backend: TestBackend, monkeypatch: pytest.MonkeyPatch,
                                                   op: str) -> None:
    case = _CASES[op]
    env = Env(backend.name, ua.device(backend.asarray(np.ones(1))))
    args, kw = case.draw(case.rng(0, 0), case.dtype)
    bargs = tuple(_to_backend(ua, _held(a, backend), env) for a in args)
    bkw = {k: _to_backend(ua, _held(v, backend), env) for k, v in kw.items()}
    if case.creation:
        bkw.update(backend=env.backend, device=env.device)

    def call() -> Any:
        if case.call is not None:
            return case.call(ua, bargs, bkw, env) if case.with_env else case.call(ua, bargs, bkw)
        return _function(ua, op)(*bargs, **bkw)

    kernel = ua.explain(op, *bargs, **bkw).kernel
    b = _backends.get(backend.name)
    attr = _SAME_AS.get(op, op.replace(".", "_"))
    try:
        resolved = getattr(b, attr)
    except ua.UnsupportedError:  # a hole of the backend: nothing runs, and ua.explain says so
        assert kernel.startswith(f"none on {backend.name}"), kernel
        with pytest.raises(ua.UnsupportedError):
            call()
        return
    named = resolve(kernel.split(" ")[0])
    assert getattr(named, "__func__", named) in _chain(resolved), (
        f"ua.explain names {kernel!r}, but {backend.name} resolves {op} to {resolved!r}")

    entered: list[str] = []

    def record(*a: Any, **k: Any) -> Any:
        entered.append(attr)
        return resolved(*a, **k)

    monkeypatch.setattr(b, attr, record, raising=False)
    try:
        call()
    except ua.UnsupportedError:  # refused inside the kernel (the deviation table): the kernel was entered
        pass
    assert entered, f"ua.{op} on {backend.name} did not enter {kernel!r}"
