"""The C hot path of the front end (unarray/_hot.py, ``unarray._fast.Hot``) against its Python reference, and the
backends' hot calls (unarray/_backends/hot_calls.py), one declaration read by the Python op and the C path alike.

Each hot public function is a C callable whose ``__wrapped__`` is the Python function it replaces; the
reference stays the op's definition. On every backend and any arguments, the two give the same result bit
for bit, or raise the same error with the same message, and neither changes its inputs. The fallbacks
(mixed libraries, Python scalars, unknown keywords, a cleared lookup table, a backend op replaced at run
time, a failing backend op), torch.compile's substitution and the function's introspection are held here.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import pickle
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, make_backend
from unarray import _axes, _hot, _lookup, _native

if importlib.util.find_spec("torch") is not None:
    import torch._dynamo  # noqa: F401  (before TensorFlow: see tests/jit/test_jit.py)

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]
REDUCTIONS = ["sum", "prod", "mean", "min", "max", "argmax", "argmin", "var", "std"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "less", "pow", "floor_divide", "atan2",
          "bitwise_and", "logical_or"]
UNARY = ["abs", "negative", "sqrt", "isnan", "exp", "round"]
OPS = ["matmul", "matrix_transpose", "permute_dims", "ascontiguousarray", *REDUCTIONS, *BINARY, *UNARY]

HOT = sorted(n for n in ua.__all__ if type(getattr(ua, n)).__name__ == "Hot")


def _array(backend: TestBackend, rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> Any:
    a = rng.standard_normal(shape) * 7
    if dtype == "bool":
        a = a > 0
    elif not dtype.startswith("float"):
        a = np.abs(a) if dtype.startswith("uint") else a
        a = np.rint(a) + (a == 0)
    return backend.asarray(np.asarray(a).astype(dtype))


def _outcome(backend: TestBackend, fn: Callable[..., Any], args: tuple[Any, ...],
             kw: dict[str, Any]) -> tuple[Any, ...]:
    # What a call gives: its result's type, dtype, shape and bytes, or its error's type and message.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(*args, **kw)
            host = np.ascontiguousarray(backend.to_numpy(out))
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            return ("raised", type(e), str(e))
    return ("ok", type(out), host.dtype, host.shape, host.tobytes())


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, int, list[tuple[tuple[int, ...], str]], dict[str, Any]]:
    op = draw(st.sampled_from(OPS))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(DTYPES))
    kw: dict[str, Any] = {}
    if op == "matmul":
        k = draw(st.integers(0, 3))
        s1 = (*shape[:1], draw(st.integers(1, 3)), k)[-draw(st.integers(0, 3)):]
        s2 = (k, draw(st.integers(1, 3)))[-draw(st.integers(0, 2)):] if draw(st.booleans()) else (k + 1, 2)
        specs = [(s1, dtype), (s2, draw(st.sampled_from([dtype, *DTYPES])))]
        if draw(st.booleans()):
            kw["precision"] = draw(st.sampled_from([None, "highest", "tf32", "bf16", "fastest", "bogus", 3]))
    elif op in BINARY:
        other = shape[draw(st.integers(0, len(shape))):]
        specs = [(shape, dtype), (other, draw(st.sampled_from([dtype, *DTYPES])))]
    elif op == "permute_dims":
        specs = [(shape, dtype)]
        kw["axes"] = tuple(draw(st.permutations(range(ndim)))) if draw(st.booleans()) else (0,) * ndim
    elif op == "ascontiguousarray":
        specs = [(shape, dtype)]
        kw["view"] = tuple(draw(st.permutations(range(ndim))))  # (the input is this permuted view)
    else:
        specs = [(shape, dtype)]
    if op in REDUCTIONS:
        kw["axis"] = draw(st.one_of(
            st.none(), st.integers(-ndim - 1, ndim), st.sampled_from([True, 1.0, (), (0,), (-1, 0), (0, 0)])))
        if draw(st.booleans()):
            kw["keepdims"] = draw(st.booleans())
        if op in ("sum", "prod") and draw(st.booleans()):
            kw["dtype"] = draw(st.sampled_from([None, ua.float64, ua.int64, ua.float32]))
        if op in ("var", "std") and draw(st.booleans()):
            kw["correction"] = draw(st.sampled_from([0, 1, 2.5, 4]))
    return op, draw(st.integers(0, 2**32 - 1)), specs, kw


@SETTINGS
@given(call=calls())
def test_the_c_path_is_its_reference_bit_for_bit(backend: TestBackend, call: Any) -> None:
    op, seed, specs, kw = call
    rng = np.random.default_rng(seed)
    arrays = tuple(_array(backend, rng, shape, dtype) for shape, dtype in specs)
    before = [backend.to_numpy(a).copy() for a in arrays]
    args: tuple[Any, ...] = arrays
    if op == "ascontiguousarray":
        args = (ua.permute_dims(arrays[0], kw.pop("view")),)
    if op == "permute_dims" and seed % 2:
        args = (*arrays, kw.pop("axes"))  # axes positionally
    fn = getattr(ua, op)
    fast = _outcome(backend, fn, args, kw)
    reference = _outcome(backend, fn.__wrapped__, args, kw)
    assert fast == reference, (op, specs, kw)
    for a, b in zip(arrays, before, strict=True):
        np.testing.assert_array_equal(backend.to_numpy(a), b)


def test_the_hot_calls_are_c_where_built() -> None:
    # The C path is on wherever the extension is built and not switched off.
    built = _native.load("_fast") is not None
    assert set(OPS) <= set(HOT) if built else not HOT
    if built:
        assert len(HOT) > 70 and all(inspect.isfunction(getattr(ua, n).__wrapped__) for n in HOT)


needs_c = pytest.mark.skipif(not HOT, reason="the C extension unarray._fast is not built here")


@needs_c
@pytest.mark.parametrize("name", HOT)
def test_each_reference_is_a_lookup_then_one_backend_call(name: str) -> None:
    # What the C reproduces: a reference whose body is the backend lookup, the axis rule, and one call into the
    # backend op of its name inside the error frame. A front end doing more stays Python.
    # A reduction's reference is the one shared body, _axes.reduce, called with its name and backend op.
    fn = getattr(ua, name)
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn.__wrapped__))).body[0]
    assert isinstance(tree, ast.FunctionDef)
    body = tree.body[1:]  # after the docstring
    op = f"b.{_hot.BACKEND_OPS.get(name, name)}"
    shared = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    if isinstance(shared, ast.Call) and ast.unparse(shared.func) == "_axes.reduce":
        attr = {k.arg: ast.literal_eval(k.value) for k in shared.keywords}.get("attr") or name
        assert ast.literal_eval(shared.args[0]) == name and f"b.{attr}" == op, ast.unparse(tree)
        tree = ast.parse(textwrap.dedent(inspect.getsource(_axes.reduce))).body[0]
        assert isinstance(tree, ast.FunctionDef)
        body, op = tree.body[1:], "getattr(b, attr or op)"
    tries = [s for s in body if isinstance(s, ast.Try)]
    assert len(tries) == 1 and len(body) <= 3, ast.unparse(tree)
    call = tries[0].body[-1]
    assert isinstance(call, ast.Return) and isinstance(call.value, ast.Call), ast.unparse(call)
    assert ast.unparse(call.value.func) == op, ast.unparse(call)
    allowed = ("b = _BY_TYPE.get(", "b = BY_TYPE.get(", "if b is None or type(x2) is not type(x1)",
               "if axis is not None:\n    axis = _axes.", "if axis is not None:\n    axis = many(")
    assert all(ast.unparse(s).startswith(allowed) for s in body if s is not tries[0]), ast.unparse(tree)


# -- the fallbacks ---------------------------------------------------------------------------------------------


@needs_c
def test_mixed_libraries_and_scalars_take_the_reference() -> None:
    torch = pytest.importorskip("torch")
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(x.copy())
    for args in ((x, t), (t, x), (x, 2), (2.5, x), (t, True)):
        out, ref = ua.add(*args), ua.add.__wrapped__(*args)
        assert type(out) is type(ref) and np.array_equal(np.asarray(out), np.asarray(ref))
    assert type(ua.matmul(t, x.T)) is torch.Tensor
    # A keyword the reference refuses: the C path raises the typed error naming the standard's keyword.
    with pytest.raises(ua.ArgumentTypeError, match=r"^ua\.sum \[numpy\]: unexpected keyword axes=.*axis="):
        ua.sum(x, axes=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        ua.sum.__wrapped__(x, axes=0)
    with pytest.raises(TypeError) as fast:
        ua.sum(x, 0)
    with pytest.raises(TypeError) as slow:
        ua.sum.__wrapped__(x, 0)
    assert str(fast.value) == str(slow.value)


@needs_c
def test_the_c_path_reads_the_backend_op_and_the_scope_at_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.ones((2, 2), dtype=np.float32)
    b = _lookup.one(x)
    seen: list[tuple[Any, ...]] = []
    monkeypatch.setattr(b, "matmul", lambda x1, x2, policy: seen.append((x1 is x, x2 is x, policy)) or "patched")
    monkeypatch.setattr(b, "sum", lambda x, axis, dtype, keepdims: ("sum", axis, dtype, keepdims))
    assert ua.matmul(x, x) == "patched"
    with ua.precision("tf32"):
        ua.matmul(x, x)
    ua.matmul(x, x, precision="bf16")
    assert seen == [(True, True, "highest"), (True, True, "tf32"), (True, True, "bf16")]
    assert ua.sum(x, axis=-1, keepdims=True) == ("sum", 1, None, True)
    monkeypatch.undo()
    assert ua.matmul(x, x).tolist() == [[2.0, 2.0], [2.0, 2.0]]


@needs_c
def test_the_c_path_finds_a_backend_op_as_getattr_does() -> None:
    # The C path calls a method of the backend's class without building a bound method: it must still see a
    # method replaced on the class at run time, and an attribute of the backend itself that shadows it.
    torch = pytest.importorskip("torch")
    x = torch.arange(6.0).reshape(2, 3)
    b = _lookup.one(x)
    cls = type(b)
    original = cls.__dict__["sum"]
    try:
        cls.sum = lambda self, x, axis, dtype, keepdims: ("class", self is b, axis, keepdims)
        assert ua.sum(x, axis=-1) == ("class", True, 1, False)
        b.sum = lambda x, axis, dtype, keepdims: ("own", axis)
        assert ua.sum(x, axis=0) == ("own", 0)
    finally:
        cls.sum = original
        vars(b).pop("sum", None)
    assert ua.sum(x, axis=1).tolist() == [3.0, 12.0]


def _torch_and_declarations() -> tuple[Any, Any, Any, Any]:
    # (torch, the declarations' module, a float32 tensor, torch's backend) for the hot-call tests
    torch = pytest.importorskip("torch")
    from unarray._backends import hot_calls

    t = torch.arange(6.0).reshape(2, 3)
    return torch, hot_calls, t, _lookup.one(t)


@needs_c
def test_a_one_dtype_op_goes_native_on_the_c_path_and_a_replaced_op_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # HotCall(op, native, cls, arrays=2).bind(general): the C path sends two arrays of exactly cls with one dtype to
    # native (the op's declared branch), anything else to general; a backend op replaced at run time is not
    # declared, so it runs.
    torch, hc, t, b = _torch_and_declarations()
    seen: list[str] = []

    def op(x1: Any, x2: Any) -> Any:
        seen.append("op")
        return torch.add(x1, x2)

    def native(x1: Any, x2: Any) -> Any:
        seen.append("native")
        return torch.add(x1, x2)

    monkeypatch.setattr(b, "add", hc.HotCall("add", native, torch.Tensor, arrays=2).bind(op))
    assert torch.equal(ua.add(t, t), t + t) and seen == ["native"]
    seen.clear()
    assert torch.equal(ua.add(t, t.double()), t + t.double()) and seen == ["op"]  # two dtypes
    seen.clear()
    p = torch.nn.Parameter(t.clone(), requires_grad=False)
    assert torch.equal(ua.add(p, p), t + t) and seen == ["op"]  # a subclass: not exactly cls
    seen.clear()

    def replaced(x1: Any, x2: Any) -> Any:
        seen.append("replaced")
        return torch.sub(x1, x2)

    monkeypatch.setattr(b, "add", replaced)
    assert torch.equal(ua.add(t, t), torch.zeros_like(t)) and seen == ["replaced"]


@needs_c
def test_a_one_array_call_goes_native_only_with_every_parameter_at_its_default(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # HotCall(op, native, cls, dtypes=, defaults=): the C path sends exactly cls, every parameter at the declared
    # default and a dtype in the set to native(x); anything else runs the general method, and a method replaced at
    # run time runs itself.
    torch, hc, t, b = _torch_and_declarations()
    seen: list[str] = []

    def method(self: Any, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        seen.append("method")
        return torch.sum(x) if axis is None else torch.sum(x, dim=axis, keepdim=keepdims)

    def native(x: Any) -> Any:
        seen.append("native")
        return torch.sum(x)

    declared = hc.HotCall("sum", native, torch.Tensor, dtypes=frozenset({torch.float32}), defaults=(None, None, False))
    monkeypatch.setattr(type(b), "sum", declared.bind(method))
    assert ua.sum(t).item() == 15.0 and seen == ["native"]
    for call in (lambda: ua.sum(t, axis=0), lambda: ua.sum(t, keepdims=True), lambda: ua.sum(t.double()),
                 lambda: ua.sum(torch.nn.Parameter(t.clone(), requires_grad=False))):
        seen.clear()
        call()
        assert seen == ["method"]

    def replaced(self: Any, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        seen.append("replaced")
        return torch.zeros(())

    seen.clear()
    monkeypatch.setattr(type(b), "sum", replaced)
    assert ua.sum(t).item() == 0.0 and seen == ["replaced"]


@needs_c
def test_a_one_array_branch_passes_its_keywords_and_then_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    # HotCall(..., keywords=kw, then=f): the branch is f(native(x, **kw)) on the C path and in the Python op alike
    # (NumPy's argmax: its dims kept, then squeezed); a call off the branch runs the method; both are one-array only.
    torch, hc, t, b = _torch_and_declarations()
    seen: list[str] = []

    def method(self: Any, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        seen.append("method")
        return torch.sum(x, dim=axis, keepdim=keepdims)

    def then(r: Any) -> Any:
        seen.append("then")
        return r + 1

    op = hc.HotCall("sum", torch.sum, torch.Tensor, dtypes=frozenset({torch.float32}), defaults=(None, None, False),
                    keywords={"dtype": torch.float64}, then=then).bind(method)
    monkeypatch.setattr(type(b), "sum", op)
    for r in (ua.sum(t), op(b, t, None, None, False)):
        assert r.dtype == torch.float64 and r.item() == 16.0
    assert seen == ["then", "then"]
    seen.clear()
    assert ua.sum(t, axis=0).tolist() == [3.0, 5.0, 7.0] and seen == ["method"]
    for bad in ({"then": then}, {"keywords": {"alpha": 2}}):
        with pytest.raises(TypeError, match="keywords or then one"):
            hc.HotCall("add", torch.add, torch.Tensor, arrays=2, **bad).bind(method)  # type: ignore[arg-type]


@needs_c
def test_a_native_registered_with_here_is_taken_only_on_the_current_device(monkeypatch: pytest.MonkeyPatch) -> None:
    # here=(attr, sub, current): for a library whose calls run on the current device (CuPy), the C path takes the
    # native only where x1.attr.sub == current(); elsewhere the backend's op or method runs (it enters the device).
    torch, hc, t, b = _torch_and_declarations()
    seen: list[str] = []
    current = ["cpu"]
    here = hc.Here("device", "type", lambda: current[0])

    def op(x1: Any, x2: Any) -> Any:
        seen.append("op")
        return torch.add(x1, x2)

    def method(self: Any, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        seen.append("method")
        return torch.sum(x)

    def native(*xs: Any) -> Any:
        seen.append("native")
        return torch.add(*xs) if len(xs) == 2 else torch.sum(*xs)

    monkeypatch.setattr(b, "add", hc.HotCall("add", native, torch.Tensor, arrays=2, device=here).bind(op))
    monkeypatch.setattr(type(b), "sum", hc.HotCall("sum", native, torch.Tensor, dtypes=frozenset({torch.float32}),
                                                   defaults=(None, None, False), device=here).bind(method))
    assert torch.equal(ua.add(t, t), t + t) and ua.sum(t).item() == 15.0 and seen == ["native", "native"]
    seen.clear()
    current[0] = "cuda"
    assert torch.equal(ua.add(t, t), t + t) and ua.sum(t).item() == 15.0 and seen == ["op", "method"]
    for bad in (hc.Here("device", 1, len), hc.Here("device", "type", 3)):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="device is None or a Here"):
            hc.HotCall("add", native, torch.Tensor, arrays=2, device=bad).bind(op)


@needs_c
def test_a_one_array_native_with_a_bound_is_taken_only_within_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # bound=(same, on, size, limit): the native only where x.<same[0]> is same[1] and, wherever x.<on> is true,
    # x.<size> < limit; elsewhere (another layout, a large array where the rule applies) the method runs.
    torch, hc, _, b = _torch_and_declarations()
    seen: list[str] = []

    def method(self: Any, x: Any) -> Any:
        seen.append("method")
        return x.contiguous() if x.layout is torch.strided else x

    def native(x: Any) -> Any:
        seen.append("native")
        return x.contiguous()

    every = frozenset({torch.float32, torch.float64})
    bound = hc.Bound("nbytes", 64, on="is_cpu", same=("layout", torch.strided))
    declared = hc.HotCall("ascontiguousarray", native, torch.Tensor, dtypes=every, max_size=bound)
    monkeypatch.setattr(type(b), "ascontiguousarray", declared.bind(method))
    for x, way in ((torch.ones(3, 5).T, "native"), (torch.ones(4, 5).T, "method"), (torch.ones(2, 4), "native"),
                   (torch.ones(4, 4), "method"), (torch.eye(3).to_sparse(), "method"),
                   (torch.ones(4, 5, device="meta").T, "native")):
        seen.clear()
        out = ua.ascontiguousarray(x)
        assert seen == [way], (tuple(x.shape), x.layout)
        assert out.is_meta or torch.equal(out.to_dense(), x.to_dense())
    declared = hc.HotCall("ascontiguousarray", native, torch.Tensor, dtypes=every, max_size=hc.Bound("nbytes", 64))
    monkeypatch.setattr(type(b), "ascontiguousarray", declared.bind(method))
    for x, way in ((torch.ones(3, 5).T, "native"), (torch.ones(4, 5).T, "method")):
        seen.clear()
        ua.ascontiguousarray(x)
        assert seen == [way]
    for bad in (hc.Bound("nbytes", 1.0), hc.Bound(3, 1), hc.Bound("nbytes", 1, same="layout")):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="max_size is None or a Bound"):
            hc.HotCall("ascontiguousarray", native, torch.Tensor, max_size=bad).bind(method)


@needs_c
def test_a_one_array_native_for_every_dtype_takes_exactly_its_class(monkeypatch: pytest.MonkeyPatch) -> None:
    # dtypes=None: any dtype goes native (no dtype is read), still only exactly cls within the bound; a subclass
    # runs the method. dtypes is a frozenset or None.
    torch, hc, _, b = _torch_and_declarations()
    seen: list[str] = []

    def method(self: Any, x: Any) -> Any:
        seen.append("method")
        return x.contiguous()

    def native(x: Any) -> Any:
        seen.append("native")
        return x.contiguous()

    monkeypatch.setattr(type(b), "ascontiguousarray", hc.HotCall("ascontiguousarray", native, torch.Tensor,
                                                                 max_size=hc.Bound("nbytes", 64)).bind(method))
    for x, way in ((torch.ones(3, 5).T, "native"), (torch.ones(3, 5, dtype=torch.int8).T, "native"),
                   (torch.ones(2, 3, dtype=torch.complex64).T, "native"), (torch.ones(4, 5).T, "method"),
                   (torch.nn.Parameter(torch.ones(3, 5), requires_grad=False).T, "native"),
                   (torch.nn.Parameter(torch.ones(3, 5), requires_grad=False), "method")):
        seen.clear()
        out = ua.ascontiguousarray(x)
        assert seen == [way], (tuple(x.shape), x.dtype, type(x))
        assert torch.equal(out, x) and out.is_contiguous()
    with pytest.raises(TypeError, match="dtypes a frozenset or None"):
        hc.HotCall("ascontiguousarray", native, torch.Tensor, dtypes={torch.float32}).bind(method)  # type: ignore[arg-type]


@needs_c
def test_a_one_policy_method_passes_the_policys_value_as_its_keyword(monkeypatch: pytest.MonkeyPatch) -> None:
    # HotCall(..., policy=Keyword(kw, values)): two arrays of exactly cls and one dtype go to
    # native(x1, x2, kw=values[policy]), the policy the call's precision= or else the scope's; anything else runs
    # the general method, with the policy as its last argument.
    torch, hc, t, b = _torch_and_declarations()
    seen: list[Any] = []

    def method(self: Any, x1: Any, x2: Any, policy: str) -> Any:
        seen.append(("method", policy))
        return torch.matmul(x1.double(), x2.double()) if x1.dtype != x2.dtype else torch.matmul(x1, x2)

    def native(x1: Any, x2: Any, *, how: Any) -> Any:
        seen.append(("native", how))
        return torch.matmul(x1, x2)

    values = {p: f"value of {p}" for p in ("highest", "tf32", "bf16", "fastest")}
    declared = hc.HotCall("matmul", native, torch.Tensor, arrays=2, policy=hc.Keyword("how", values))
    monkeypatch.setattr(type(b), "matmul", declared.bind(method))
    m = t @ t.T
    assert torch.equal(ua.matmul(t, t.T), m) and seen == [("native", "value of highest")]
    seen.clear()
    with ua.precision("bf16"):
        ua.matmul(t, t.T)
        ua.matmul(t, t.T, precision="tf32")
    assert seen == [("native", "value of bf16"), ("native", "value of tf32")]
    seen.clear()
    ua.matmul(t, t.T.double())
    ua.matmul(torch.nn.Parameter(t.clone(), requires_grad=False), t.T)
    assert seen == [("method", "highest"), ("method", "highest")]
    for bad in (hc.Keyword(3, values), hc.Keyword("how", [])):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="Keyword policy"):
            hc.HotCall("matmul", native, torch.Tensor, arrays=2, policy=bad).bind(method)


@needs_c
def test_a_gated_method_of_a_current_device_library_reads_no_place(monkeypatch: pytest.MonkeyPatch) -> None:
    # Gated(host=None, ...) with device=Here(...), CuPy's declaration: no dtype is direct by place or size, a
    # reducible dtype goes through the gate with the policy's want, and only where x1's device is the current one;
    # elsewhere the general method runs (it enters the device).
    torch, hc, t, b = _torch_and_declarations()
    seen: list[Any] = []
    current = ["cpu"]

    def method(self: Any, x1: Any, x2: Any, policy: str) -> Any:
        seen.append(("method", policy))
        return torch.matmul(x1, x2)

    def native(x1: Any, x2: Any) -> Any:
        seen.append("native")
        return torch.matmul(x1, x2)

    def gate(want: Any, fn: Any, x1: Any, x2: Any) -> Any:
        seen.append(("gate", want))
        return fn(x1, x2)

    from unarray import _precision

    wants = {(False, p): f"want {p}" for p in _precision.POLICIES}
    def gated(host: Any = None) -> Any:
        return hc.Gated(anywhere=frozenset({torch.float64}), on_host=frozenset({torch.int64}),
                        reducible=frozenset({torch.float32}), host=host, limit=-1, flags=_precision,
                        flag="FORCE_ARBITRATION", gate=gate, wants=wants)

    here = hc.Here("device", "type", lambda: current[0])
    monkeypatch.setattr(type(b), "matmul",
                        hc.HotCall("matmul", native, torch.Tensor, arrays=2, device=here, policy=gated()).bind(method))
    d, i = t.double(), t.long()
    ua.matmul(d, d.T)
    ua.matmul(t, t.T, precision="tf32")
    ua.matmul(i, i.T)  # (local: direct only where x1.<where>, which None never is)
    assert seen == ["native", ("gate", "want tf32"), "native", ("method", "highest")]
    seen.clear()
    current[0] = "cuda"
    ua.matmul(d, d.T)
    ua.matmul(t, t.T)
    assert seen == [("method", "highest"), ("method", "highest")]
    with pytest.raises(TypeError, match="a Gated policy holds"):
        hc.HotCall("matmul", native, torch.Tensor, arrays=2, policy=gated(3)).bind(method)
    with pytest.raises(TypeError, match="a call with a policy takes two arrays"):
        hc.HotCall("matmul", native, torch.Tensor, policy=gated()).bind(method)


@needs_c
def test_the_c_path_takes_declarations_only() -> None:
    # A backend hands the C path a HotCall (named fields), never positional registrations: the module has one way in.
    fast = _native.load("_fast")
    assert {n for n in dir(fast) if not n.startswith("_")} == {"Hot", "hot", "register", "set_keyword_error"}
    with pytest.raises(TypeError, match="native a callable"):
        from unarray._backends.hot_calls import HotCall

        HotCall("sum", None, int).bind(lambda self, x: x)  # type: ignore[arg-type]


def test_the_python_op_reads_the_same_declaration() -> None:
    # Without the C path (UNARRAY_PURE_PYTHON=1, or a tracer) the op bind writes takes the declared branch itself:
    # the same guards, the native where they hold, the general path elsewhere and where the native raises.
    torch = pytest.importorskip("torch")
    from unarray._backends.hot_calls import HotCall

    seen: list[str] = []

    def native(x: Any) -> Any:
        seen.append("native")
        if x.numel() == 0:
            raise RuntimeError("empty")
        return torch.sum(x)

    def general(self: Any, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
        seen.append("general")
        return torch.sum(x) if axis is None else torch.sum(x, dim=axis, keepdim=keepdims)

    op = HotCall("sum", native, torch.Tensor, dtypes=frozenset({torch.float32}),
                 defaults=(None, None, False)).bind(general, fast=False)
    t = torch.arange(6.0).reshape(2, 3)
    assert op(None, t, None, None, False).item() == 15.0 and seen == ["native"]
    for args in ((t, 0, None, False), (t.double(), None, None, False), (t, None, None, 0),
                 (torch.nn.Parameter(t, requires_grad=False), None, None, False)):
        seen.clear()
        op(None, *args)
        assert seen == ["general"], args
    seen.clear()
    op(None, torch.ones(0), None, None, False)
    assert seen == ["native", "general"]


@pytest.mark.parametrize("lib", ["torch", "jax", "cupy"])
def test_each_backends_hot_ops_are_written_from_their_declaration(lib: str) -> None:
    # The branch is declared once: the backend's op is the declaration's Python reading (HotCall.bind), for every
    # op the C path takes natively; the declared op is the op's own name.
    pytest.importorskip(lib)
    from unarray import _backends

    try:
        b = _backends.get(lib)
    except Exception as e:  # noqa: BLE001 - a library installed without a device (CuPy without a GPU)
        pytest.skip(f"{lib}'s backend does not load here: {e}")
    ops = ["sum", "mean", "argmax", "matmul", "add", "less"] + (["ascontiguousarray"] if lib != "jax" else [])
    for op in ops:
        fn = getattr(b, op)
        call = getattr(fn, "hot_call", None)
        assert call is not None and call.op == op, (lib, op)
        assert callable(fn.general) and fn.general is not fn


def _ran_python(code: Any, call: Callable[[], Any]) -> tuple[Any, bool]:
    # call()'s result and whether the Python function of ``code`` ran in it (a profiler sees Python frames only)
    ran: list[bool] = []
    old = sys.getprofile()
    sys.setprofile(lambda frame, event, arg: ran.append(True) if event == "call" and frame.f_code is code else None)
    try:
        out = call()
    finally:
        sys.setprofile(old)
    return out, bool(ran)


@needs_c
@settings(max_examples=60, deadline=None)
@given(batch=st.sampled_from([(), (1,), (3,)]), m=st.integers(0, 40), k=st.integers(0, 40), n=st.integers(0, 40),
       dtype=st.sampled_from(["float32", "complex64", "float64", "float16", "int32", "int64"]),
       force=st.booleans(), precision=st.sampled_from([None, "highest", "tf32"]), seed=st.integers(0, 2**32 - 1))
def test_matmul_goes_native_on_the_c_path_exactly_where_the_policy_cannot_change_it(
        batch: tuple[int, ...], m: int, k: int, n: int, dtype: str, force: bool, precision: str | None,
        seed: int) -> None:
    # torch's declaration (natives.MATMUL, a Gated policy): the C path calls torch.matmul without the backend's
    # method where no precision policy can change the result (float32 and complex64 on the CPU only up to the size
    # at which oneDNN may reduce, and never with the arbiter forced), and through the precision switch (which
    # reads the setting in force for the call's precision= or the scope's) elsewhere; bit for bit the method's
    # result either way.
    torch = pytest.importorskip("torch")
    from unarray import _precision
    from unarray._backends.torch import backend as tb
    from unarray._backends.torch import precision as tp

    rng = np.random.default_rng(seed)
    x1 = torch.from_numpy((rng.standard_normal((*batch, m, k)) * 4).astype(dtype))
    x2 = torch.from_numpy((rng.standard_normal((k, n)) * 4).astype(dtype))
    ua.matmul(x1, x2)  # (a first call fills the lookup table through the reference)
    saved, reads = _precision.FORCE_ARBITRATION, dict(tp._READS)
    read: list[bool] = []

    def reading(read_fn: Any) -> Any:
        def run(*args: Any) -> Any:
            read.append(True)
            return read_fn(*args)
        return run

    _precision.FORCE_ARBITRATION = force
    tp._READS.update({w: (reading(r), a, states) for w, (r, a, states) in reads.items()})
    try:
        kw = {} if precision is None else {"precision": precision}
        out, ran = _ran_python(tb.TorchBackend.matmul.__code__, lambda: ua.matmul(x1, x2, **kw))
    finally:
        _precision.FORCE_ARBITRATION = saved
        tp._READS.update(reads)
    reference = ua.matmul.__wrapped__(x1, x2, **kw)
    size = x1.numel() * x2.numel()
    small = not tb._CPU_REDUCES or size <= tb._TINY or size <= tb._TINY * k
    native = dtype not in ("float32", "complex64") or (small and not force)
    assert not ran and bool(read) is not native, (batch, m, k, n, dtype, force)
    assert out.dtype == reference.dtype and torch.equal(out, reference)


@needs_c
@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=0, max_size=4), data=st.data(),
       dtype=st.sampled_from(["float32", "float64", "int32", "bool", "complex64"]), seed=st.integers(0, 2**32 - 1))
def test_ascontiguousarray_goes_native_on_the_c_path_bit_for_bit(shape: list[int], data: Any, dtype: str,
                                                                  seed: int) -> None:
    # torch's registration: a strided CPU tensor, any view of it, is torch's own copy (x itself where compact)
    # without the backend's method, with the reference's result, strides and identity.
    torch = pytest.importorskip("torch")
    from unarray._backends.torch import layout

    base = torch.from_numpy(np.asarray(np.random.default_rng(seed).standard_normal(shape) * 5).astype(dtype))
    x = base.permute(tuple(data.draw(st.permutations(range(base.ndim)), label="perm")))
    if x.ndim and x.shape[0] > 1 and data.draw(st.booleans(), label="step"):
        x = x[::2]
    ua.ascontiguousarray(x)
    out, ran = _ran_python(layout.compact.__code__, lambda: ua.ascontiguousarray(x))
    reference = ua.ascontiguousarray.__wrapped__(x)
    assert not ran
    assert out.is_contiguous() and out.stride() == reference.stride() and torch.equal(out, reference)
    assert (out is x) == (reference is x) == x.is_contiguous()


@needs_c
def test_a_cleared_lookup_table_is_filled_again() -> None:
    x = np.arange(6.0).reshape(2, 3)
    saved = dict(_lookup.BY_TYPE)
    try:
        _lookup.BY_TYPE.clear()
        assert ua.sum(x, axis=1).tolist() == [3.0, 12.0]
        assert np.ndarray in _lookup.BY_TYPE
    finally:
        _lookup.BY_TYPE.clear()
        _lookup.BY_TYPE.update(saved)


@needs_c
def test_a_failing_backend_op_runs_the_reference_and_only_an_exception_does(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.arange(6.0).reshape(2, 3)
    b = _lookup.one(x)
    calls: list[int] = []

    def flaky(x1: Any, x2: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("the first call fails")
        return "second"

    monkeypatch.setattr(b, "add", flaky)
    assert ua.add(x, x) == "second" and len(calls) == 2  # the C call failed; the reference ran it again

    def interrupted(x1: Any, x2: Any) -> Any:
        calls.append(1)
        raise KeyboardInterrupt

    calls.clear()
    monkeypatch.setattr(b, "add", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ua.add(x, x)
    assert len(calls) == 1  # a BaseException is not retried


def test_pure_python_keeps_the_python_functions() -> None:
    code = ("import inspect, types, unarray as ua\n"
            "assert type(ua.matmul) is types.FunctionType and ua.matmul.__module__ == 'unarray.linear_algebra'\n"
            "assert type(ua.add) is types.FunctionType and not hasattr(ua.sum, '__wrapped__')\n"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "UNARRAY_PURE_PYTHON": "1"})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


# -- tracers ---------------------------------------------------------------------------------------------------


def _three(xp_sum: Any, a: Any, b: Any) -> Any:
    return xp_sum(ua.add(ua.matmul(a, b), b), axis=-1)


def test_torch_compile_traces_the_reference_without_a_graph_break() -> None:
    torch = pytest.importorskip("torch")

    def f(a: Any, b: Any) -> Any:
        return ua.sum(ua.add(ua.matmul(a, b), b), axis=-1)

    a, b = torch.randn(4, 4, generator=torch.Generator().manual_seed(1)), torch.randn(4, 4)
    explained = torch._dynamo.explain(f)(a, b)
    assert explained.graph_break_count == 0, explained.break_reasons
    torch.testing.assert_close(torch.compile(f, fullgraph=True, backend="eager")(a, b), f(a, b), rtol=0, atol=0)
    torch.testing.assert_close(torch.compile(f, fullgraph=True)(a, b), f(a, b))


def test_jax_jit_and_tf_function_trace_the_hot_calls() -> None:
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(3).standard_normal((3, 3)).astype(np.float32)
    a = jax.numpy.asarray(x)
    # XLA fuses the traced matmul, add and sum (on a GPU in another order than eager's three kernels): equal
    # within float32 rounding of the terms' magnitudes, not bit for bit.
    bound = 8 * np.finfo(np.float32).eps * (np.abs(x) @ np.abs(x) + np.abs(x)).sum(-1)
    traced_sum = np.asarray(jax.jit(lambda a: _three(ua.sum, a, a))(a))
    assert (np.abs(traced_sum - np.asarray(_three(ua.sum, a, a))) <= bound).all()
    tf = pytest.importorskip("tensorflow")
    t = tf.constant(x)
    traced = tf.function(lambda t: ua.argmax(_three(ua.max, t, t)[None], axis=-1))
    assert traced(t).numpy().tolist() == ua.argmax(_three(ua.max, t, t)[None], axis=-1).numpy().tolist()


# -- introspection ---------------------------------------------------------------------------------------------


@needs_c
@pytest.mark.parametrize("name", ["matmul", "sum", "add", "argmax", "permute_dims"])
def test_a_hot_call_looks_like_its_function(name: str) -> None:
    fn = getattr(ua, name)
    ref = fn.__wrapped__
    assert inspect.isfunction(ref) and fn is not ref
    assert inspect.signature(fn) == inspect.signature(ref)
    assert (fn.__doc__, fn.__name__, fn.__qualname__, fn.__module__) == \
        (ref.__doc__, ref.__name__, ref.__qualname__, ref.__module__)
    assert fn.__annotations__ == ref.__annotations__ and inspect.getdoc(fn) == inspect.getdoc(ref)
    assert inspect.getsource(fn) == inspect.getsource(ref) and inspect.isroutine(fn)
    assert pickle.loads(pickle.dumps(fn)) is fn
    assert repr(fn).startswith(f"<function {name} at ")


@needs_c
def test_hot_calls_compare_and_hash_by_identity() -> None:
    fns = [getattr(ua, n) for n in HOT]
    assert len(set(fns)) == len(fns) and ua.add != ua.subtract and ua.add == ua.add
    assert {ua.add: 1, ua.subtract: 2}[ua.subtract] == 2


@needs_c
@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3),
       dtype=st.sampled_from(["float32", "float16", "bfloat16", "int32", "bool", "complex64"]),
       op=st.sampled_from(["add", "less", "sum", "mean", "argmax", "matmul"]),
       precision=st.sampled_from([None, "highest", "tf32", "bf16"]), seed=st.integers(0, 2**32 - 1))
def test_jax_takes_its_natives_on_the_c_path_bit_for_bit(shape: list[int], dtype: str, op: str, precision: str | None,
                                                         seed: int) -> None:
    # JAX's registrations: a same-dtype binary op of two concrete arrays, matmul with the policy's precision=, and
    # sum, mean (floating) and argmax (not complex) at their defaults, call JAX's function without the backend's
    # frame, with the reference's result or error; anything else runs the backend's frame.
    jnp = pytest.importorskip("jax.numpy")
    from unarray._backends.jax import backend as jb

    rng = np.random.default_rng(seed)
    x1, x2 = (jnp.asarray((rng.standard_normal(shape) * 5).astype("float32")).astype(dtype) for _ in range(2))
    if op == "matmul":  # (x1 @ x1.T where x1 has a dimension: shapes that multiply)
        x2 = jnp.swapaxes(x2, -1, -2) if x2.ndim >= 2 else x2
    args = (x1, x2) if op in ("add", "less", "matmul") else (x1,)
    kw = {} if op != "matmul" or precision is None else {"precision": precision}
    fast, outcome = getattr(ua, op), functools.partial(_outcome, make_backend("jax"))
    outcome(fast, args, kw)
    code = getattr(jb.BACKEND, op).general.__code__  # (the op less its declared branch: what runs where not taken)
    out, ran = _ran_python(code, lambda: outcome(fast, args, kw))
    assert out == outcome(fast.__wrapped__, args, kw)
    taken = len(args) == 2 or (op == "sum" or (op == "mean" and dtype in ("float32", "float16", "bfloat16"))
                                or (op == "argmax" and dtype != "complex64"))
    # (an empty argmax, a 0-d matmul, and any native error, run the method for unarray's error)
    assert ran is not taken or (op == "argmax" and 0 in shape) or (op == "matmul" and out[0] == "raised"), \
        (op, dtype, shape)


def test_cupy_takes_its_natives_on_the_current_device_bit_for_bit(cuda: Callable[[str], Any]) -> None:
    # CuPy's registrations (here: the array's device is the current one): the element-wise ops, sum, mean and
    # argmax at their defaults, and matmul (float32 through the precision switch, for the call's precision= or the
    # scope's) call CuPy's function without the backend's frames, with the reference's result.
    cupy = cuda("cupy")
    from unarray._backends.cupy import backend as cb

    rng = np.random.default_rng(7)
    for dtype in ("float32", "float16", "float64", "int32"):
        x1, x2 = (cupy.asarray((rng.standard_normal((5, 7)) * 9).astype(dtype)) for _ in range(2))
        ops = [("add", cb.BACKEND.add.__code__, (x1, x2)), ("argmax", cb.CupyBackend.argmax.__code__, (x1,)),
               ("matmul", cb.CupyBackend.matmul.__code__, (x1, x2.T))]
        if dtype != "int32":
            ops += [("sum", cb.CupyBackend.sum.__code__, (x1,)), ("mean", cb.CupyBackend.mean.__code__, (x1,))]
        calls = [(code, functools.partial(getattr(ua, op), *args),
                  functools.partial(getattr(ua, op).__wrapped__, *args)) for op, code, args in ops]
        for code, fast, reference in calls:
            fast()
            out, ran = _ran_python(code, fast)
            expected = reference()
            assert not ran, (dtype, code.co_name)
            assert out.dtype == expected.dtype and out.shape == expected.shape
            assert out.tobytes() == expected.tobytes(), (dtype, code.co_name)
    a, b = (cupy.asarray(rng.standard_normal((64, 64)).astype("float32")) for _ in range(2))
    for policy in ("highest", "tf32", "bf16"):
        with ua.precision(policy):
            out, ran = _ran_python(cb.CupyBackend.matmul.__code__, lambda: ua.matmul(a, b))
            assert not ran and out.tobytes() == ua.matmul.__wrapped__(a, b).tobytes(), policy
        out, ran = _ran_python(cb.CupyBackend.matmul.__code__, lambda p=policy: ua.matmul(a, b, precision=p))
        assert not ran and out.tobytes() == ua.matmul.__wrapped__(a, b, precision=policy).tobytes(), policy


def test_torch_cuda_small_views_take_torchs_copy_on_the_c_path(cuda: Callable[[str], Any]) -> None:
    # Below the kernel size a CUDA view is torch's copy without the backend's method; from it, the method plans
    # the route (and its kernel where one is worth it).
    torch = cuda("torch")
    from unarray._backends.torch import layout

    for shape, native in (((512, 384), True), ((4096, 4096), False)):
        v = torch.randn(shape, device="cuda").T
        ua.ascontiguousarray(v)
        out, ran = _ran_python(layout.compact.__code__, lambda v=v: ua.ascontiguousarray(v))
        assert ran is not native, shape
        assert out.is_contiguous() and torch.equal(out, v.contiguous())
        c = v.contiguous()
        assert ua.ascontiguousarray(c) is c


def test_cupy_small_views_take_cupys_copy_and_compact_arrays_come_back(cuda: Callable[[str], Any]) -> None:
    cupy = cuda("cupy")
    from unarray._backends.cupy import layout

    for shape in ((512, 384), (64, 48), (3,), ()):
        x = cupy.asarray(np.random.default_rng(3).standard_normal(shape).astype("float32"))
        assert ua.ascontiguousarray(x) is x
        v = x.T if x.ndim == 2 else x[::-1] if x.ndim else x
        got = ua.ascontiguousarray(v)
        assert got.flags.c_contiguous and got.shape == v.shape
        assert bool((got == cupy.ascontiguousarray(v)).all())
        assert (got is v) == bool(v.flags.c_contiguous)
        assert ua.explain("ascontiguousarray", v).kernel in ("cupy.ascontiguousarray", layout.lr.AS_IS.kernel)
    # below the kernel's size a view is CuPy's copy from C, without the backend's method; from it, the method plans
    for shape, native in (((512, 384), True), ((4096, 4096), False)):
        v = cupy.asarray(np.random.default_rng(5).standard_normal(shape).astype("float32")).T
        ua.ascontiguousarray(v)
        out, ran = _ran_python(layout.compact.__code__, lambda v=v: ua.ascontiguousarray(v))
        assert ran is not native, shape
        assert out.flags.c_contiguous and out.shape == v.shape and bool((out == v).all())
