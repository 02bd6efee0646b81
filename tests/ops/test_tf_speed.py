"""TensorFlow's hot ops and reductions stay cheap per call, without timing anything.

What made them slow was work per call: extra TF ops for the standard's corrections (NaN
propagation, first occurrence, empty reductions) paid on every input, and the public op wrappers'
Python. The eager CPU fast paths (unarray/_backends/tensorflow/fast.py) run the one native op
and correct only inputs that need it. These tests count what a call does, deterministically:
the TF ops it runs (an op callback sees each one, and whether it is built into a graph, i.e.
traced) and the Python calls it makes (a profiler hook), across shapes that vary call to call;
and they check the fast paths against a float64 NumPy reference, ties and NaN included.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

tf = pytest.importorskip("tensorflow")

from tensorflow.python.framework import op_callbacks  # noqa: E402

import unarray as ua  # noqa: E402
from unarray._backends.tensorflow import backend as tfb  # noqa: E402

pytestmark = pytest.mark.skipif(tfb._has_gpu(), reason="the fast paths are CPU-only; with a GPU the general path runs")

# op -> (the call, the TF ops it may run: the native op plus what the standard's semantics need)
HOT: dict[str, tuple[Callable[[Any], Any], list[str]]] = {
    "matmul": (lambda a: ua.matmul(a, _RIGHT[a.shape]), ["MatMul", "BatchMatMulV2"]),
    "sum": (lambda a: ua.sum(a), ["Sum"]),
    "sum(axis=0)": (lambda a: ua.sum(a, axis=0), ["Sum"]),
    "mean": (lambda a: ua.mean(a), ["Mean"]),
    "mean(axis=-1)": (lambda a: ua.mean(a, axis=-1), ["Mean"]),
    "prod": (lambda a: ua.prod(a, axis=0), ["Prod"]),
    "max": (lambda a: ua.max(a), ["Max"]),
    "max(axis=1)": (lambda a: ua.max(a, axis=1, keepdims=True), ["Max"]),
    "min": (lambda a: ua.min(a, axis=0), ["Min"]),
    "argmax": (lambda a: ua.argmax(a), ["Reshape", "ArgMax"]),
    "argmax(axis=1)": (lambda a: ua.argmax(a, axis=1), ["ArgMax"]),
    "argmin(keepdims)": (lambda a: ua.argmin(a, axis=0, keepdims=True), ["ArgMin", "ExpandDims"]),
    "var": (lambda a: ua.var(a, correction=1), ["Mean", "Sub", "Square", "Sum", "RealDiv"]),
    "std": (lambda a: ua.std(a, axis=0), ["Mean", "Sub", "Square", "Sum", "RealDiv", "Sqrt"]),
}
SHAPES = [(4, 4), (3, 7), (16, 2), (5, 5, 3)]
_RIGHT = {tf.TensorShape(s): tf.ones((*s[:-2], s[-1], 2)) for s in SHAPES}  # matmul's right operand
# Python-level calls one hot call may make (front end, dispatch, backend, the TF op function);
# the corrections of the general path cost 3 to 10 times as many.
MAX_PY_CALLS = 90


def _ops_of(f: Callable[[], Any]) -> list[tuple[str, bool]]:
    seen: list[tuple[str, bool]] = []

    def cb(op_type: str, inputs: Any, attrs: Any, outputs: Any, op_name: Any = None, graph: Any = None) -> None:
        name = op_type.decode() if isinstance(op_type, bytes) else op_type
        seen.append((name, graph is None))

    op_callbacks.add_op_callback(cb)
    try:
        f()
    finally:
        op_callbacks.remove_op_callback(cb)
    return seen


def _py_calls(f: Callable[[], Any]) -> int:
    n = [0]

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            n[0] += 1

    sys.setprofile(prof)
    try:
        f()
    finally:
        sys.setprofile(None)
    return n[0]


@pytest.mark.parametrize("name", list(HOT))
def test_hot_op_runs_only_its_native_ops_eagerly_at_every_shape(name: str) -> None:
    call, allowed = HOT[name]
    rng = np.random.default_rng(len(name))
    for shape in SHAPES:
        a = tf.constant(rng.standard_normal(shape).astype(np.float32))
        call(a)  # first call: one-time set-up (cached axis constants) is not per-call cost
        ops = _ops_of(lambda a=a: call(a))  # type: ignore[misc]
        assert ops, f"{name}: no TF op seen (the op callback is not reporting)"
        assert all(eager for _op, eager in ops), f"{name} at {shape}: traced a graph: {ops}"
        assert [op for op, _ in ops] == [op for op in allowed if op in {o for o, _ in ops}], \
            f"{name} at {shape} ran {[op for op, _ in ops]}, expected at most {allowed}"


@pytest.mark.parametrize("name", list(HOT))
def test_hot_op_python_work_per_call_is_bounded(name: str) -> None:
    call, _ = HOT[name]
    counts = []
    for shape in SHAPES:
        a = tf.constant(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
        call(a)
        counts.append(_py_calls(lambda a=a: call(a)))  # type: ignore[misc]
    assert max(counts) <= MAX_PY_CALLS, f"{name}: {counts} Python calls per call at shapes {SHAPES}"
    # TF's own matmul wrapper takes a few more steps for 2-D operands; a retrace would be hundreds.
    assert max(counts) - min(counts) <= 10, f"{name}: work changes with the shape: {counts}"


def test_nan_input_takes_the_corrected_path() -> None:
    a = tf.constant([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    ops = [op for op, _ in _ops_of(lambda: ua.max(a, axis=1))]
    assert "Max" in ops and len(ops) > 1  # the NaN correction ran
    np.testing.assert_array_equal(np.isnan(ua.max(a, axis=1).numpy()), [True, False])
    assert int(ua.argmax(a)) == 1 and ua.argmin(a, axis=1).numpy().tolist() == [1, 0]


# -- the fast paths give the standard's answers ------------------------------------------------------
_DTYPES = st.sampled_from(["float32", "float64", "float16", "int32", "int64", "uint8"])


@st.composite
def _cases(draw: st.DrawFn) -> tuple[np.ndarray, Any, bool]:
    dtype = draw(_DTYPES)
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
    # Few distinct values: ties are common, which is what the first-occurrence rule is about.
    vals = draw(hnp.arrays(np.int8, shape, elements=st.integers(1, 4))).astype(dtype)
    if dtype.startswith("float") and draw(st.booleans()):
        mask = draw(hnp.arrays(np.bool_, shape, elements=st.booleans()))
        vals = np.where(mask & (vals == 2), np.nan, vals).astype(dtype)
    axis = draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    return vals, axis, draw(st.booleans())


def _ref(op: str, x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    x64 = x.astype(np.float64)
    if op in ("argmax", "argmin"):
        return getattr(np, op)(x64, axis=axis, keepdims=keepdims)
    if op in ("var", "std"):
        return getattr(np, op)(x64, axis=axis, keepdims=keepdims, ddof=1)
    return getattr(np, op)(x64, axis=axis, keepdims=keepdims)


@settings(max_examples=150, deadline=None)
@given(case=_cases(), op=st.sampled_from(["max", "min", "argmax", "argmin", "mean", "prod", "var", "std"]))
def test_fast_paths_match_the_float64_reference(case: tuple[np.ndarray, Any, bool], op: str) -> None:
    x, axis, keepdims = case
    is_float = x.dtype.kind == "f"
    if op in ("mean", "var", "std") and not is_float:
        return  # the standard defines these for floating arrays only (DTypeError, tested elsewhere)
    kw: dict[str, Any] = {"axis": axis, "keepdims": keepdims}
    if op in ("var", "std"):
        kw["correction"] = 1
    n = x.size if axis is None else x.shape[axis]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns where N - correction <= 0 (the answer is NaN)
        want = _ref(op, x, axis, keepdims)
    top = float(np.finfo(x.dtype).max if is_float else np.iinfo(x.dtype).max)
    assume(not np.any(np.abs(want[np.isfinite(want)]) > top))  # a product past the dtype's range
    got = getattr(ua, op)(tf.constant(x), **kw).numpy()
    assert got.shape == want.shape
    if op in ("argmax", "argmin"):
        np.testing.assert_array_equal(got, want)
        return
    eps = float(np.finfo(x.dtype).eps) if is_float else 0.0
    rtol = eps * (4 * n + 8) if op in ("mean", "var", "std", "prod") else 0.0
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol, equal_nan=True)
    assert np.array_equal(np.isnan(got.astype(np.float64)), np.isnan(want))
