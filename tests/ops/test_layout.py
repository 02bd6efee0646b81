"""ua.ascontiguousarray and the transpose plan (unarray/_kernels/layout_plan.py), on the CPU.

A compacting copy moves bits: results are compared with NumPy's ``np.ascontiguousarray`` exactly
(values bit for bit, dtype, shape, C strides). The plan is checked by running it with NumPy (the
reference executor) on random shapes, permutations and dtypes; the Triton kernel runs in Triton's
interpreter where triton is installed.

With ``--devices gpu`` the tests taking the ``cuda`` fixture (a CPU run deselects them) run the CUDA C and
Triton kernels themselves, bit for bit against NumPy, on dtypes of 1 to 16 bytes.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import unarray as ua
from tests._support import TestBackend, child_pythonpath
from unarray._dispatch import one
from unarray._kernels.layout_plan import Plan, plan

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


def run_numpy(p: Plan, src: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """Run ``p`` with NumPy on the compact source ``src`` (any shape holding the source's elements in C order):
    the reference executor that kernels and plans are compared with."""
    flat = np.ascontiguousarray(src).reshape(-1, p.vec)
    out = np.empty_like(flat)
    item = flat.strides[0]  # bytes of a vector element
    shape = tuple(n for n, _, _ in p.batch) + (p.rows, p.cols, p.vec)
    s = as_strided(flat, shape, tuple(st * item for _, st, _ in p.batch) + (p.src_row_stride * item, item,
                                                                            flat.strides[1]))
    d = as_strided(out, shape, tuple(st * item for _, _, st in p.batch) + (item, p.dst_col_stride * item,
                                                                           out.strides[1]))
    d[...] = s
    return out.reshape(out_shape)


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
        # A library may answer its common cases without the route (torch's CPU and small tensors): only cases
        # whose route is the library's own call or "as is", which the route, read here, must confirm.
        assert len(taken) <= 1
        ran = taken[0] if taken else declared(v)
        assert taken or ran.how in ("as is", "native"), ran
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


# -- the GPU kernels (--devices gpu) -----------------------------------------------------------------------------
# The Triton transpose on torch CUDA tensors and the CUDA C transpose on CuPy arrays, exact against NumPy: random
# shapes, permutations, offsets and dtypes of 1 to 16 bytes through each kernel directly (small arrays included,
# which ua.ascontiguousarray itself sends to the native copy), then through ua.ascontiguousarray on arrays large
# enough for its kernel route, which ua.explain must name. benchmarks/gpu/layout_gpu.py times the same routes.

# (numpy dtype, torch dtype name): bfloat16 is made from float32 values on the torch side.
GPU_DTYPES = ["bool", "int8", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
GPU_SETTINGS = settings(max_examples=60, deadline=None,
                        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def torch_cuda(cuda: Callable[[str], Any]) -> Any:
    pytest.importorskip("triton")
    return cuda("torch")


@pytest.fixture(scope="module")
def cupy_mod(cuda: Callable[[str], Any]) -> Any:
    return cuda("cupy")


@st.composite
def gpu_cases(draw: Any, max_side: int = 40) -> tuple[np.ndarray, tuple[int, ...], str, int]:
    """(a compact array, a permutation, the dtype name, an element offset into a larger buffer)."""
    rank = draw(st.integers(2, 5))
    shape = tuple(draw(st.lists(st.integers(1, max_side if rank <= 3 else 9), min_size=rank, max_size=rank)))
    perm = tuple(draw(st.permutations(range(rank))))
    dtype = draw(st.sampled_from(GPU_DTYPES))
    offset = draw(st.sampled_from([0, 0, 1, 3]))
    seed = draw(st.integers(0, 2**32 - 1))
    a = fresh(np.random.default_rng(seed), shape, "float32" if dtype == "bfloat16" else dtype)
    if dtype == "bfloat16":  # values exact in bfloat16: integers below 256 with a sign
        a = np.sign(a) * (np.abs(a) % 255 + 1)
    return a, perm, dtype, offset


def _torch_view(torch: Any, a: np.ndarray, dtype: str, perm: tuple[int, ...], offset: int) -> Any:
    # The array placed ``offset`` elements into a buffer (a view with a storage offset), then permuted.
    src = torch.from_numpy(a.reshape(-1).copy()).to("cuda")
    if dtype == "bfloat16":
        src = src.to(torch.bfloat16)
    buf = torch.zeros(a.size + offset, dtype=src.dtype, device="cuda")
    buf[offset:] = src
    return buf[offset:].view(a.shape).permute(perm)


def _cupy_view(cupy: Any, a: np.ndarray, perm: tuple[int, ...], offset: int) -> Any:
    buf = cupy.zeros(a.size + offset, dtype=a.dtype)
    buf[offset:] = cupy.asarray(a.reshape(-1))
    return buf[offset:].reshape(a.shape).transpose(perm)


def _check_torch(torch: Any, got: Any, expected: np.ndarray, dtype: str) -> None:
    assert got.is_cuda and got.is_contiguous() and tuple(got.shape) == expected.shape
    assert str(got.dtype) == f"torch.{dtype}"
    if dtype == "bfloat16":
        np.testing.assert_array_equal(got.float().cpu().numpy(), expected.astype(np.float32))
    else:
        np.testing.assert_array_equal(got.cpu().numpy(), expected)
    assert got.stride() == tuple(s // expected.itemsize for s in expected.strides)


@GPU_SETTINGS
@given(case=gpu_cases())
def test_triton_kernel_matches_numpy(torch_cuda: Any, case: tuple[np.ndarray, tuple[int, ...], str, int]) -> None:
    from unarray._kernels import transpose_triton

    a, perm, dtype, offset = case
    v = _torch_view(torch_cuda, a, dtype, perm, offset)
    before = v.clone()
    p = plan(tuple(v.shape), tuple(v.stride()))
    expected = np.ascontiguousarray(a.transpose(perm))
    if p is None:
        assert v.is_contiguous()
        return
    got = transpose_triton.transpose(v, p)
    torch_cuda.cuda.synchronize()
    _check_torch(torch_cuda, got, expected, dtype)
    assert torch_cuda.equal(v, before)  # the source is only read


@GPU_SETTINGS
@given(case=gpu_cases())
def test_cupy_kernel_matches_numpy(cupy_mod: Any, case: tuple[np.ndarray, tuple[int, ...], str, int]) -> None:
    from unarray._kernels import transpose_cupy

    a, perm, dtype, offset = case
    if dtype == "bfloat16":  # CuPy has no bfloat16: the same two-byte words as int16
        a, dtype = a.astype(np.int16), "int16"
    v = _cupy_view(cupy_mod, a, perm, offset)
    before = v.copy()
    p = plan(v.shape, tuple(s // v.itemsize for s in v.strides))
    expected = np.ascontiguousarray(a.transpose(perm))
    if p is None:
        assert v.flags.c_contiguous
        return
    if not transpose_cupy.transposable(v.itemsize, p, v.data.ptr):  # no word of this size, or misaligned: native
        run = p.vec * v.itemsize
        assert run <= 16 and (run not in (1, 2, 4, 8, 16) or v.data.ptr % run != 0)
        return
    got = transpose_cupy.transpose(v, p)
    assert got.flags.c_contiguous and got.dtype == expected.dtype and got.strides == expected.strides
    np.testing.assert_array_equal(got.get(), expected)
    np.testing.assert_array_equal(v.get(), before.get())


# Arrays large enough for the kernel route (KERNEL_MIN_BYTES), with the layouts of the issue.
BIG = [((4096, 3072), (1, 0), "float32"), ((32, 64, 96, 96), (0, 2, 3, 1), "float16"),
       ((16, 512, 16, 128), (0, 2, 1, 3), "bfloat16"), ((128, 256, 72), (2, 1, 0), "complex128"),
       ((8192, 4608), (1, 0), "int8"), ((32, 48, 48, 64), (0, 3, 1, 2), "float64"),
       ((256, 3, 128, 128), (0, 2, 3, 1), "float32"), ((4099, 2063), (1, 0), "float32")]


@pytest.mark.parametrize(("shape", "perm", "dtype"), BIG)
def test_ua_routes_big_torch_views(torch_cuda: Any, shape: tuple[int, ...], perm: tuple[int, ...],
                                   dtype: str) -> None:
    from unarray._kernels import layout_route as layout

    a = fresh(np.random.default_rng(11), shape, "float32" if dtype == "bfloat16" else dtype)
    if dtype == "bfloat16":
        a = np.sign(a) * (np.abs(a) % 255 + 1)
    v = _torch_view(torch_cuda, a, dtype, perm, 0)
    got = ua.ascontiguousarray(v)
    _check_torch(torch_cuda, got, np.ascontiguousarray(a.transpose(perm)), dtype)
    kernel = ua.explain("ascontiguousarray", v).kernel
    b = one(v)
    how = layout.route(b, v)
    assert ("transpose_triton" in kernel) == (how == "triton") and ("transpose_cupy" in kernel) == (how == "cuda")
    assert ua.ascontiguousarray(got) is got


@pytest.mark.parametrize(("shape", "perm", "dtype"), BIG)
def test_ua_triton_route(torch_cuda: Any, monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...],
                         perm: tuple[int, ...], dtype: str) -> None:
    # Without CuPy (or on ROCm) torch's kernel route is Triton's.
    from unarray._kernels import layout_route as layout

    monkeypatch.setattr(layout, "cuda_kernels", lambda: None)
    a = fresh(np.random.default_rng(14), shape, "float32" if dtype == "bfloat16" else dtype)
    if dtype == "bfloat16":
        a = np.sign(a) * (np.abs(a) % 255 + 1)
    v = _torch_view(torch_cuda, a, dtype, perm, 0)
    got = ua.ascontiguousarray(v)
    _check_torch(torch_cuda, got, np.ascontiguousarray(a.transpose(perm)), dtype)
    how = layout.route(one(v), v)
    assert how in ("triton", "native") and ("transpose_triton" in ua.explain("ascontiguousarray", v).kernel) == (
        how == "triton")


@pytest.mark.parametrize(("shape", "perm", "dtype"), BIG)
def test_ua_routes_big_views_to_cupy(cupy_mod: Any, shape: tuple[int, ...], perm: tuple[int, ...],
                                     dtype: str) -> None:
    from unarray._kernels import layout_route as layout

    a = fresh(np.random.default_rng(12), shape, "int16" if dtype == "bfloat16" else dtype)
    v = _cupy_view(cupy_mod, a, perm, 0)
    got = ua.ascontiguousarray(v)
    expected = np.ascontiguousarray(a.transpose(perm))
    assert got.flags.c_contiguous and got.strides == expected.strides
    np.testing.assert_array_equal(got.get(), expected)
    kernel = ua.explain("ascontiguousarray", v).kernel
    b = one(v)
    assert ("transpose_cupy" in kernel) == (layout.route(b, v) == "cuda"), kernel
    assert ua.ascontiguousarray(got) is got


def test_big_transposes_take_the_kernels(torch_cuda: Any, cupy_mod: Any) -> None:
    # The issue's case: a large float32 transpose is the kernels' own route on both libraries.
    t = torch_cuda.arange(4096 * 2048, dtype=torch_cuda.float32, device="cuda").reshape(4096, 2048).T
    assert "transpose_cupy" in ua.explain("ascontiguousarray", t).kernel
    assert torch_cuda.equal(ua.ascontiguousarray(t), t.contiguous())
    c = cupy_mod.arange(4096 * 2048, dtype=cupy_mod.float32).reshape(4096, 2048).T
    assert "transpose_cupy" in ua.explain("ascontiguousarray", c).kernel
    assert bool((ua.ascontiguousarray(c) == cupy_mod.ascontiguousarray(c)).all())


def test_big_transpose_takes_triton_without_cupy(torch_cuda: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from unarray._kernels import layout_route as layout

    monkeypatch.setattr(layout, "cuda_kernels", lambda: None)
    t = torch_cuda.randn(8192, 2304, device="cuda").T  # 72 MiB: over Triton's KERNEL_MIN_BYTES
    assert "transpose_triton" in ua.explain("ascontiguousarray", t).kernel
    assert torch_cuda.equal(ua.ascontiguousarray(t), t.contiguous())


def test_autograd_and_small_tensors_take_native(torch_cuda: Any) -> None:
    torch = torch_cuda
    w = torch.randn(1024, 1024, device="cuda", requires_grad=True)
    assert ua.explain("ascontiguousarray", w.T).kernel == "torch.Tensor.contiguous"
    out = ua.ascontiguousarray(w.T)
    out.sum().backward()
    assert w.grad is not None and bool((w.grad == 1).all())
    small = torch.randn(16, 24, device="cuda").T
    assert ua.explain("ascontiguousarray", small).kernel == "torch.Tensor.contiguous"
    assert torch.equal(ua.ascontiguousarray(small), small.contiguous())


def test_numba_device_arrays(cupy_mod: Any) -> None:
    numba_cuda = pytest.importorskip("numba.cuda")
    np.row_stack = np.vstack  # type: ignore[attr-defined]  # numba-cuda on NumPy 2.5 compiles with it
    a = fresh(np.random.default_rng(13), (4096, 2304), "float32")  # 36 MiB: over KERNEL_MIN_BYTES
    c = cupy_mod.asarray(a)
    for d, expected in [(numba_cuda.as_cuda_array(c.T), a.T),  # a permuted view: the kernel
                        (numba_cuda.as_cuda_array(c[:, ::2]), a[:, ::2])]:  # a view with gaps: CuPy's copy
        assert not d.is_c_contiguous()
        got = ua.ascontiguousarray(d)
        assert ua.backend_of(got) == "numba" and got.is_c_contiguous()
        np.testing.assert_array_equal(got.copy_to_host(), np.ascontiguousarray(expected))
    assert "transpose_cupy" in ua.explain("ascontiguousarray", numba_cuda.as_cuda_array(c.T)).kernel
    compact = numba_cuda.to_device(a)
    assert ua.ascontiguousarray(compact) is compact


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize(("shape", "perm"), [((200, 136), (1, 0)), ((3, 72, 264), (0, 2, 1)),
                                             ((2, 128, 3, 64), (0, 3, 1, 2)), ((5, 128, 8), (1, 0, 2))])
def test_cupy_vector_tiles(cupy_mod: Any, shape: tuple[int, ...], perm: tuple[int, ...], dtype: str) -> None:
    # Sides that are multiples of 16 bytes but not of the 64-word tile: the 16-byte-access kernel with
    # partial tiles (and the scalar tiles where a side is not a multiple).
    from unarray._kernels import transpose_cupy

    a = fresh(np.random.default_rng(15), shape, dtype)
    v = _cupy_view(cupy_mod, a, perm, 0)
    p = plan(v.shape, tuple(s // v.itemsize for s in v.strides))
    assert p is not None
    got = transpose_cupy.transpose(v, p)
    expected = np.ascontiguousarray(a.transpose(perm))
    assert got.flags.c_contiguous and got.strides == expected.strides
    np.testing.assert_array_equal(got.get(), expected)


def test_a_handoff_that_must_compact_a_big_permuted_view_uses_the_kernel(torch_cuda: Any, cupy_mod: Any) -> None:
    # A handoff whose consumer needs a compact buffer copies on the source side: for a large transposed
    # view that copy is ascontiguousarray's kernel route, and the result is exact.
    from unarray._backends import handoff

    a = fresh(np.random.default_rng(7), (6144, 2048), "float32")  # 48 MiB, over the kernels' minimum size
    for src, x in (("torch", torch_cuda.from_numpy(a).cuda().t()), ("cupy", cupy_mod.asarray(a).T)):
        assert one(x).layout_route(x).how == "cuda", one(x).layout_route(x)
        y = handoff(src).compact_copy(x, one(x))
        got = y.cpu().numpy() if src == "torch" else cupy_mod.asnumpy(y)
        assert got.flags.c_contiguous and np.array_equal(got, a.T), src
        moved = ua.to(x, "jax")
        assert np.array_equal(np.asarray(moved), a.T), src


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "float64"])
@pytest.mark.parametrize(("shape", "perm"), [((4, 3, 40, 24), (0, 2, 3, 1)), ((2, 16, 64), (0, 2, 1)),
                                             ((5, 2, 7, 32), (0, 2, 3, 1)), ((3, 6, 2, 5, 16), (1, 0, 3, 4, 2)),
                                             ((9, 48), (1, 0))])
def test_cupy_few_rows_kernel(cupy_mod: Any, shape: tuple[int, ...], perm: tuple[int, ...], dtype: str) -> None:
    # A few rows into whole 16-byte words (NCHW -> NHWC with 3 channels): the few-rows kernel, exact, and the
    # name ua.explain gives is the one launch runs.
    from unarray._kernels import transpose_cupy

    a = fresh(np.random.default_rng(16), shape, dtype)
    v = _cupy_view(cupy_mod, a, perm, 0)
    p = plan(v.shape, tuple(s // v.itemsize for s in v.strides))
    assert p is not None and p.rows <= 16
    name = transpose_cupy.kernel(p, v.itemsize, v.data.ptr % 16)
    assert name.startswith("transpose_few_rows") == transpose_cupy.few_rows(p, v.itemsize, v.data.ptr % 16, 0)
    got = transpose_cupy.transpose(v, p)
    expected = np.ascontiguousarray(a.transpose(perm))
    assert got.flags.c_contiguous and got.strides == expected.strides
    np.testing.assert_array_equal(got.get(), expected)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_three_channel_nhwc_takes_the_few_rows_kernel(torch_cuda: Any, cupy_mod: Any, dtype: str) -> None:
    from unarray._kernels.layout_route import KERNEL_MIN_BYTES

    a = fresh(np.random.default_rng(17), (64, 3, 224, 224), dtype)  # 19 to 38 MiB
    t = torch_cuda.from_numpy(a).cuda().permute(0, 2, 3, 1)
    c = cupy_mod.asarray(a).transpose(0, 2, 3, 1)
    for x in (t, c):
        kernel = ua.explain("ascontiguousarray", x).kernel
        assert ("transpose_few_rows" in kernel) == (a.nbytes >= KERNEL_MIN_BYTES["cuda"]), kernel
        got = ua.ascontiguousarray(x)
        host = got.cpu().numpy() if x is t else got.get()
        np.testing.assert_array_equal(host, np.ascontiguousarray(a.transpose(0, 2, 3, 1)))
