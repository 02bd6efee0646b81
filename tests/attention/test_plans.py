"""``ua.explain`` names the kernel the call enters (issue 28, "decide once"): for every backend on the fixture and
every ``ua.nn`` op and attention route reachable on the CPU (MLX and dask with their own arrays), the call runs
with a recorder in place of each plan's kernel; the kernel it entered must be the one ``ua.explain`` names, which
must be the object its qualified name imports to."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import unarray as ua
from unarray import nn as _nn  # noqa: F401  (ua.nn loads on first use; importing it registers its planners)
from unarray._backends._nn import Plan, resolve
from unarray._backends.attention_masks import CAUSAL, NONE
from unarray._explanation import PLANNERS

OPS: dict[str, dict[str, Any]] = {
    "softmax": {}, "log_softmax": {"axis": 0}, "logsumexp": {"axis": 1}, "logsumexp ()": {"axis": ()},
    "layer_norm": {}, "layer_norm (0,)": {"axis": 0}, "rms_norm": {}, "gelu": {}, "gelu tanh": {"approximate": True},
    "silu": {},
}


def _entered(monkeypatch: pytest.MonkeyPatch, call: Any) -> list[Any]:
    # The kernels the call enters: every plan run hands its call a recorder in place of its kernel.
    seen: list[Any] = []

    def run(plan: Plan) -> Any:
        def recorder(*args: Any, **kwargs: Any) -> Any:
            seen.append(plan.kernel)
            return plan.kernel(*args, **kwargs)

        return plan.call(recorder)

    monkeypatch.setattr(Plan, "run", run)
    call()
    return seen


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", list(OPS))
def test_explain_names_the_kernel_the_call_enters(backend: Any, case: str, dtype: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    op = case.split()[0]
    kwargs = OPS[case]
    x = backend.asarray(np.random.default_rng(3).standard_normal((3, 4)).astype(dtype))
    b, plan = PLANNERS[f"nn.{op}"](x, **kwargs)
    label = ua.explain(f"nn.{op}", x, **kwargs).kernel
    name = label.split(" ")[0]
    kernel = resolve(name)
    assert kernel is plan.kernel, f"{label!r} names {kernel!r}, not the plan's kernel {plan.kernel!r}"
    out = getattr(ua.nn, op)
    seen = _entered(monkeypatch, lambda: out(x, **kwargs))
    assert seen == [kernel], f"ua.explain names {name}; ua.nn.{op} on {b.name} entered {seen}"


# -- attention: every route reachable on the CPU (masks, causal, layouts, grouped-query heads, no keys) ------
# (q's shape, k's shape, v's head dim or None for k's, keyword arguments; shapes in the bhsd layout, mask "bool"
# or "add" is made of shape (Sq, Sk))
ATTENTION: dict[str, tuple[tuple[int, ...], tuple[int, ...], int | None, dict[str, Any]]] = {
    "plain": ((2, 2, 6, 8), (2, 2, 6, 8), None, {}),
    "causal gqa Sq<Sk": ((2, 4, 5, 8), (2, 2, 7, 8), None, {"is_causal": True}),
    "causal Sq>Sk": ((1, 2, 7, 8), (1, 2, 5, 8), None, {"is_causal": True}),
    "bool mask": ((1, 2, 5, 8), (1, 2, 7, 8), None, {"mask": "bool"}),
    "additive mask causal": ((1, 2, 5, 8), (1, 2, 7, 8), None, {"mask": "add", "is_causal": True}),
    "bshd causal": ((2, 4, 5, 8), (2, 2, 7, 8), None, {"is_causal": True, "layout": "bshd"}),
    "Dv != D": ((1, 2, 5, 8), (1, 2, 5, 8), 4, {}),
    "no keys": ((1, 2, 5, 8), (1, 2, 0, 8), None, {}),
}


def _attention_args(asarray: Any, case: str, dtype: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    qs, ks, dv, kw = ATTENTION[case]
    kw = dict(kw)
    rng = np.random.default_rng(5)
    vs = (*ks[:-1], dv or ks[-1])
    if kw.get("layout") == "bshd":
        qs, ks, vs = ((*s[:-3], s[-2], s[-3], s[-1]) for s in (qs, ks, vs))
    q, k, v = (asarray(rng.standard_normal(s).astype(dtype)) for s in (qs, ks, vs))
    sq, sk = (qs[-2], ks[-2]) if kw.get("layout") != "bshd" else (qs[-3], ks[-3])
    if kw.get("mask") is not None:
        allowed = rng.random((sq, sk)) < 0.7
        allowed[0] = False  # a row with nothing to attend
        kw["mask"] = asarray(allowed if kw["mask"] == "bool" else np.where(allowed, 0.0, -np.inf).astype(dtype))
    return (q, k, v), kw


def _check_attention_plan(asarray: Any, case: str, dtype: str, monkeypatch: pytest.MonkeyPatch,
                          planned: Any = None) -> str:
    # ua.explain's kernel is the plan's, it imports to that object, and the call enters it, once.
    args, kw = _attention_args(asarray, case, dtype)
    b, plan = PLANNERS["scaled_dot_product_attention"](*args, **kw)
    if planned is not None:
        planned(b, plan)
    label = ua.explain("scaled_dot_product_attention", *args, **kw).kernel
    assert ua.explain("nn.scaled_dot_product_attention", *args, **kw).kernel == label
    name = label.split(" ")[0]
    kernel = resolve(name)
    assert kernel is plan.kernel, f"{label!r} names {kernel!r}, not the plan's kernel {plan.kernel!r}"
    seen = _entered(monkeypatch, lambda: ua.scaled_dot_product_attention(*args, **kw))
    assert seen == [kernel], f"ua.explain names {name}; attention ({case}) on {b.name} entered {seen}"
    return label


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", list(ATTENTION))
def test_explain_names_the_attention_kernel_the_call_enters(backend: Any, case: str, dtype: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    label = _check_attention_plan(backend.asarray, case, dtype, monkeypatch)
    if backend.name in ("numpy", "tensorflow"):  # no kernel of their own on the CPU: the blocked path
        assert "unarray blocked online-softmax" in label


def _mlx(a: np.ndarray) -> Any:
    mx = pytest.importorskip("mlx.core")
    return mx.array(a, dtype=getattr(mx, "bool_" if a.dtype == np.bool_ else a.dtype.name))


def _dask(a: np.ndarray) -> Any:
    da = pytest.importorskip("dask.array")
    return da.from_array(a, chunks=(*(-1,) * (a.ndim - 2), 3, -1))  # the sequence in chunks of 3


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", list(ATTENTION))
@pytest.mark.parametrize("lib", ["mlx", "dask"])
def test_explain_names_the_attention_kernel_on_mlx_and_dask(lib: str, case: str, dtype: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    label = _check_attention_plan(_mlx if lib == "mlx" else _dask, case, dtype, monkeypatch)
    fast = lib == "mlx" and case in ("plain", "causal gqa Sq<Sk", "Dv != D")  # no mask, bhsd, a key per row
    assert label.startswith("mlx.core.fast.scaled_dot_product_attention") == fast, label


@pytest.mark.parametrize("case", ["causal gqa Sq<Sk", "bool mask", "bshd causal"])
def test_the_blocked_path_and_the_torch_route_are_plans(backend: Any, case: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from unarray import _backends
    from unarray._backends import attention_blocked

    # The blocked path (every backend's fallback): its plan enters attention_blocked.blocked.
    args, kw = _attention_args(backend.asarray, case, "float32")
    b = _backends.get(ua.backend_of(args[0]))
    plan = attention_blocked.blocked_plan(b, *args, kw.get("mask"), CAUSAL if kw.get("is_causal") else NONE, 0.5,
                                          kw.get("layout", "bhsd"), "highest")
    assert resolve(plan.label.split(" ")[0]) is attention_blocked.blocked
    seen = _entered(monkeypatch, lambda: plan.run())
    assert seen == [attention_blocked.blocked]
    if backend.name not in ("numpy", "tensorflow"):
        return
    # The torch route, which GPU arrays without a kernel of their own take, forced for CPU arrays: the kernel
    # entered is torch's, named by explain with the handoff.
    pytest.importorskip("torch")
    lenders = tuple((n, root, (*kinds, "cpu")) for n, root, kinds in _backends._LENDERS)
    monkeypatch.setattr(_backends, "_LENDERS", lenders)
    label = _check_attention_plan(backend.asarray, case, "float32", monkeypatch)
    assert label.startswith("torch.") and f"reached from {backend.name} through DLPack" in label, label


class DeviceNDArray:
    # A stand-in for numba.cuda's device array (its class name and module identify it), on "cuda:0" with no driver.
    __module__ = "numba.cuda.cudadrv.devicearray"

    def __init__(self, a: np.ndarray) -> None:
        self.a, self.shape, self.dtype, self.ndim = a, a.shape, a.dtype, a.ndim
        self.__cuda_array_interface__ = {"data": (a.ctypes.data, True), "shape": a.shape, "typestr": a.dtype.str}


@pytest.mark.parametrize("lender", [True, False])
def test_numba_arrays_borrow_attention_else_a_typed_refusal_names_the_fix(lender: bool,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from unarray import _backends
    from unarray._backends.numba import backend as nb

    monkeypatch.setattr(nb, "_device_of_pointer", lambda ptr: 0)
    q = DeviceNDArray(np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32))
    if lender:  # torch imported: its fused kernels take the arrays (the route test_the_blocked_path... runs)
        pytest.importorskip("torch")
        assert _backends.attention_lender(nb.BACKEND, q) == "torch"
        return
    monkeypatch.setattr(_backends, "_LENDERS", ())  # no library that lends its kernels imported
    assert _backends.attention_lender(nb.BACKEND, q) is None
    with pytest.raises(ua.UnsupportedError, match=r"scaled_dot_product_attention \[numba\].*ua\.to\(x, 'torch'\)"
                                                  r".*import torch"):
        ua.scaled_dot_product_attention(q, q, q)
    for op in OPS:  # ua.nn's ops: the same refusal, naming each
        with pytest.raises(ua.UnsupportedError, match=rf"ua\.nn\.{op.split()[0]} \[numba\].*ua\.to\(x, 'cupy'\)"):
            getattr(ua.nn, op.split()[0])(q, **OPS[op])
