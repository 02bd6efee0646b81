"""ua.ascontiguousarray and the transpose plan (unarray/_kernels/layout_plan.py), on the CPU.

A compacting copy moves bits: results are compared with NumPy's ``np.ascontiguousarray`` exactly
(values bit for bit, dtype, shape, C strides). The plan is checked by running it with NumPy (the
reference executor) on random shapes, permutations and dtypes; the Triton kernel runs in Triton's
interpreter where triton is installed. GPU runs: tests/ops/test_layout_gpu.py.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, child_pythonpath
from unarray._kernels.layout_plan import plan, run_numpy

ROOT = Path(__file__).resolve().parents[2]
DTYPES = ["bool", "int8", "uint8", "int16", "float16", "int32", "float32", "int64", "float64", "complex64",
          "complex128"]


def fresh(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Distinct nonzero values of ``dtype`` (booleans: both values)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    n = int(np.prod(shape))
    vals = (rng.permutation(n) + 1).reshape(shape)  # distinct: a misplaced element shows
    if dtype.startswith("complex"):
        return (vals + 1j * (vals + 0.5) * rng.choice([-1, 1], shape)).astype(dtype)
    if dtype in ("int8", "uint8", "float16"):  # exact in the dtype (float16: integers up to 2048)
        vals = vals % (120 if dtype.endswith("int8") else 2000) + 1
    return (vals * rng.choice([-1, 1], shape) if not dtype.startswith("uint") else vals).astype(dtype)


@st.composite
def views(draw: Any, max_rank: int = 5) -> tuple[np.ndarray, tuple[int, ...], str]:
    rank = draw(st.integers(1, max_rank))
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=rank, max_size=rank)))
    perm = tuple(draw(st.permutations(range(rank))))
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**32 - 1))
    return fresh(np.random.default_rng(seed), shape, dtype), perm, dtype


# -- the plan -------------------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(views(max_rank=6))
def test_plan_reproduces_numpy(case: tuple[np.ndarray, tuple[int, ...], str]) -> None:
    a, perm, _ = case
    v = a.transpose(perm)
    p = plan(v.shape, tuple(s // v.itemsize for s in v.strides))
    expected = np.ascontiguousarray(v)
    if p is None:  # only a view that already is C-contiguous has no plan
        assert v.flags.c_contiguous
        return
    assert not v.flags.c_contiguous
    got = run_numpy(p, a, v.shape)
    assert got.dtype == expected.dtype and got.strides == expected.strides
    np.testing.assert_array_equal(got, expected)
    assert p.size == a.size
    assert min(p.rows, p.cols) >= 2 and len(p.batch) <= max(0, a.ndim - 2)
    # Merged and folded: no two output neighbours stay neighbours in the source.
    assert all(p.perm[i] + 1 != p.perm[i + 1] for i in range(len(p.perm) - 1))


def test_plan_folds_the_target_layouts() -> None:
    # NCHW -> NHWC: (N, C, HW) -> (N, HW, C), a transpose of C and HW per image.
    v = np.empty((64, 256, 56, 56), np.float16).transpose(0, 2, 3, 1)
    p = plan(v.shape, tuple(s // 2 for s in v.strides))
    assert p is not None and (p.rows, p.cols, p.vec, p.batch) == (256, 56 * 56, 1, ((64, 256 * 3136, 256 * 3136),))
    # attention's (B, S, H, D) -> (B, H, S, D): rows of D move whole.
    v = np.empty((32, 2048, 16, 128), np.float16).transpose(0, 2, 1, 3)
    p = plan(v.shape, tuple(s // 2 for s in v.strides))
    assert p is not None and (p.rows, p.cols, p.vec, p.perm) == (2048, 16, 128, (0, 2, 1, 3))
    # a 3-D reversal keeps two axes apart: one batch axis between them.
    v = np.empty((3, 4, 5)).transpose(2, 1, 0)
    p = plan(v.shape, tuple(s // 8 for s in v.strides))
    assert p is not None and (p.rows, p.cols, p.batch) == (3, 5, ((4, 5, 3),))


@pytest.mark.parametrize("make", [
    lambda a: a[:, ::2].T,                                   # a gap between rows
    lambda a: a[::-1].T,                                     # a negative stride
    lambda a: np.broadcast_to(a[:1], a.shape).T,             # a broadcast (stride 0)
    lambda a: a.T[1:],                                       # a window cutting every row
])
def test_no_plan_for_views_that_are_no_permutation(make: Any) -> None:
    a = fresh(np.random.default_rng(1), (6, 8), "float32")
    v = make(a)
    assert plan(v.shape, tuple(s // v.itemsize for s in v.strides)) is None


def test_plan_refuses_mismatched_strides() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        plan((2, 3), (1,))


# -- ua.ascontiguousarray on every backend --------------------------------------------------------------------------


def _strided(backend: TestBackend) -> bool:
    return backend.name in ("numpy", "torch", "cupy")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=views())  # the backend fixture is stateless: one per test is right
def test_ascontiguousarray_matches_numpy(backend: TestBackend, case: tuple[np.ndarray, tuple[int, ...], str]) -> None:
    a, perm, name = case
    if not backend.holds(name):  # (MLX has no complex128)
        return
    x = backend.asarray(a)
    held = backend.to_numpy(x)  # JAX without x64 holds int64 as int32: the reference is what x holds
    np.testing.assert_array_equal(held, a.astype(held.dtype))
    v = ua.permute_dims(x, perm)
    before = backend.to_numpy(v).copy()
    got = ua.ascontiguousarray(v)
    expected = np.ascontiguousarray(held.transpose(perm))
    assert backend.is_native(got)
    assert ua.device(got) == ua.device(x)
    g = backend.to_numpy(got)
    assert g.dtype == expected.dtype and g.shape == expected.shape
    np.testing.assert_array_equal(g, expected)
    np.testing.assert_array_equal(backend.to_numpy(v), before)  # never mutates
    if _strided(backend):
        assert _c_strides(got) == expected.strides
    if not _strided(backend) or _is_compact(v):
        assert got is v  # nothing to do: the same object


def test_compact_input_is_returned_as_is(backend: TestBackend) -> None:
    x = backend.asarray(fresh(np.random.default_rng(2), (3, 4, 5), "float32"))
    assert ua.ascontiguousarray(x) is x
    assert "returned as is" in ua.explain("ascontiguousarray", x).kernel


def test_explain_names_the_cpu_route(backend: TestBackend) -> None:
    x = ua.permute_dims(backend.asarray(fresh(np.random.default_rng(3), (4, 6), "float64")), (1, 0))
    kernel = ua.explain("ascontiguousarray", x).kernel
    if not _strided(backend):
        assert "carry no strides" in kernel
    elif backend.device == "cpu":
        assert kernel == {"numpy": "numpy.ascontiguousarray", "torch": "torch.Tensor.contiguous"}[backend.name]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=views())
def test_explain_prints_the_route_that_runs(backend: TestBackend, case: tuple[np.ndarray, tuple[int, ...], str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # One decision: the route ascontiguousarray runs is the one ua.explain prints (the backend's layout_route,
    # recorded as the call enters it), not a second reading of the rule.
    from unarray._lookup import BY_TYPE

    a, perm, name = case
    if not backend.holds(name):  # (MLX has no complex128)
        return
    v = ua.permute_dims(backend.asarray(a), perm)
    b = BY_TYPE[type(v)]
    taken: list[Any] = []
    declared = b.layout_route

    def recorded(x: Any) -> Any:
        r = declared(x)
        taken.append(r)
        return r

    with monkeypatch.context() as m:
        m.setattr(b, "layout_route", recorded)
        got = ua.ascontiguousarray(v)
        (ran,) = taken
        assert ua.explain("ascontiguousarray", v).kernel == ran.kernel
    assert (got is v) == (ran.how == "as is")
    np.testing.assert_array_equal(backend.to_numpy(got), backend.to_numpy(v))


def test_torch_bfloat16_and_autograd() -> None:
    torch = pytest.importorskip("torch")
    a = torch.from_numpy(fresh(np.random.default_rng(4), (5, 7, 3), "float32")).to(torch.bfloat16)
    v = a.permute(2, 0, 1)
    got = ua.ascontiguousarray(v)
    assert got.is_contiguous() and got.dtype == torch.bfloat16 and torch.equal(got, v.contiguous())
    w = torch.from_numpy(fresh(np.random.default_rng(5), (4, 6), "float64")).requires_grad_()
    out = ua.ascontiguousarray(w.T)
    (out * torch.arange(24.0, dtype=torch.float64).reshape(6, 4)).sum().backward()
    assert w.grad is not None
    np.testing.assert_array_equal(w.grad.numpy(), np.arange(24.0).reshape(6, 4).T)


def test_errors_are_typed() -> None:
    with pytest.raises(ua.UnknownArrayTypeError, match="ascontiguousarray"):
        ua.ascontiguousarray([[1, 2], [3, 4]])  # type: ignore[arg-type]
    with pytest.raises(ua.ArgumentTypeError, match="ascontiguousarray"):
        ua.ascontiguousarray(2.5)  # type: ignore[arg-type]
    torch = pytest.importorskip("torch")
    sparse = torch.eye(3).to_sparse()
    with pytest.raises(ua.UnsupportedError, match=r"ascontiguousarray \[torch\].*to_dense"):
        ua.ascontiguousarray(sparse)


def _c_strides(x: Any) -> tuple[int, ...]:
    if hasattr(x, "element_size"):  # torch: strides in elements
        return tuple(s * x.element_size() for s in x.stride())
    return tuple(x.strides)


def _is_compact(x: Any) -> bool:
    return bool(x.is_contiguous()) if hasattr(x, "is_contiguous") else bool(x.flags.c_contiguous)


# -- the Triton kernel in Triton's interpreter ---------------------------------------------------------------------

_INTERPRETED = """
import itertools, sys
import numpy as np, torch
from unarray._kernels.layout_plan import plan
from unarray._kernels.transpose_triton import transpose
rng = np.random.default_rng(int(sys.argv[1]))
dtypes = [torch.bool, torch.int8, torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
          torch.complex128]
cases = [((37, 70), (1, 0)), ((3, 5, 33), (0, 2, 1)), ((2, 9, 4, 6), (0, 2, 1, 3)), ((4, 3, 5), (2, 1, 0)),
         ((2, 3, 2, 3, 2, 3), (5, 3, 1, 4, 2, 0)), ((2, 17, 40), (2, 0, 1))]
n = 0
for (shape, perm), dt in itertools.product(cases, dtypes):
    base = torch.from_numpy(rng.permutation(int(np.prod(shape))).reshape(shape) + 1.0)
    a = (base > base.mean()) if dt == torch.bool else (base * (1 + 1j) if dt.is_complex else base).to(dt)
    v = a.permute(perm)
    p = plan(tuple(v.shape), tuple(v.stride()))
    assert p is not None, (shape, perm)
    out = transpose(v, p)
    assert out.is_contiguous() and out.dtype == dt and out.shape == v.shape
    assert torch.equal(out, v.contiguous()), (shape, perm, dt, p)
    n += 1
print("checked", n)
"""


@pytest.mark.skipif(importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None,
                    reason="triton (or torch) is not installed")
def test_triton_kernel_in_the_interpreter() -> None:
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=child_pythonpath(ROOT))
    out = subprocess.run([sys.executable, "-c", _INTERPRETED, "7"], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    assert "checked 48" in out.stdout
