"""cuDNN's fused SDPA for CuPy arrays (unarray/_backends/attention_cudnn.py).

Without a GPU (CI): the rules that decide which inputs cuDNN takes, as pure functions of shapes, strides
and dtypes: the 4-D view of q, k, v and the output (checked against NumPy's own strided views), the
refusals, the mask's bias plan, the graph cache key, and the library loader's fallbacks.

With ``--devices gpu``: ``inside()`` runs in a fresh interpreter that never imports torch (asserted),
Hypothesis problems on CuPy float16/bfloat16 against a float64 NumPy reference, with ``ua.explain``
naming the kernel each took; then torch is imported: its kernels go first (through a zero-copy
handoff), and both routes agree.
"""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unarray._backends.cupy import attention_cudnn as ac

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


# -- the 4-D view: what cuDNN addresses is what the array holds ------------------------------------------
def _bhsd(x: np.ndarray, layout: str) -> np.ndarray:
    y = x if layout == "bhsd" else np.swapaxes(x, -2, -3)
    return y.reshape(-1, *y.shape[-3:])


def _view(x: np.ndarray, op: ac.Operand) -> np.ndarray:
    item = x.itemsize
    return np.lib.stride_tricks.as_strided(x, shape=op.dims, strides=[s * item for s in op.strides])


@st.composite
def strided(draw: Any) -> tuple[np.ndarray, str]:
    """A float16 array (*B, X, Y, D) that is a view into a bigger buffer: permuted and sliced."""
    batch = draw(st.lists(st.integers(1, 3), max_size=3))
    dims = [*batch, draw(st.integers(1, 4)), draw(st.integers(1, 5)), draw(st.integers(1, 6))]
    pad = [draw(st.integers(0, 2)) for _ in dims]
    base = np.arange(math.prod(n + p for n, p in zip(dims, pad, strict=True)), dtype=np.float16)
    x = base.reshape([n + p for n, p in zip(dims, pad, strict=True)])
    perm = draw(st.permutations(range(len(dims) - 3)))  # batch axes in any order in memory
    x = np.transpose(x, [*perm, *range(len(dims) - 3, len(dims))])
    x = x[tuple(slice(0, n) for n in np.array(dims)[[*perm, *range(len(dims) - 3, len(dims))]])]
    return x, draw(st.sampled_from(["bhsd", "bshd"]))


@SETTINGS
@given(strided())
def test_as_bhsd_addresses_the_arrays_elements(case: tuple[np.ndarray, str]) -> None:
    x, layout = case
    op = ac.as_bhsd(x.shape, tuple(s // x.itemsize for s in x.strides), layout)
    if op is None:
        # Refused only where NumPy itself cannot merge the batch axes without a copy.
        with pytest.raises(ValueError):
            np.reshape(x, (-1, *x.shape[-3:]), copy=False)
        return
    np.testing.assert_array_equal(_view(x, op), _bhsd(x, layout))
    np.testing.assert_array_equal(_view(x, ac._tidy(op)), _bhsd(x, layout))


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_out_operand_describes_the_contiguous_output(layout: str) -> None:
    b, h, s, d = 3, 4, 5, 8
    shape = (b, h, s, d) if layout == "bhsd" else (b, s, h, d)
    out = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(_view(out, ac.out_operand(b, h, s, d, layout)), _bhsd(out, layout))


def test_fused_qkv_buffer_needs_no_copy() -> None:
    # q, k, v sliced out of one (B, S, 3, H, D) projection: bshd views with a gap between heads' rows.
    qkv = np.zeros((2, 64, 3, 8, 128), np.float16)
    q = qkv[:, :, 0]
    op = ac.as_bhsd(q.shape, tuple(s // 2 for s in q.strides), "bshd")
    assert op == ac.Operand((2, 8, 64, 128), (64 * 3 * 8 * 128, 128, 3 * 8 * 128, 1))
    assert ac.refusal("float16", op, op, op, False, "cuda") is None


# -- refusals ---------------------------------------------------------------------------------------------
def _op(b: int, h: int, s: int, d: int) -> ac.Operand:
    return ac.Operand((b, h, s, d), (h * s * d, s * d, d, 1))


def test_the_benchmark_problem_is_taken() -> None:
    q = _op(4, 16, 4096, 128)
    for dtype in ac.HALF:
        for causal in (False, True):
            assert ac.refusal(dtype, q, q, q, causal, "cuda") is None


@pytest.mark.parametrize(("args", "words"), [
    (("float32", _op(1, 2, 8, 64), _op(1, 2, 8, 64), _op(1, 2, 8, 64), False, "cuda"), "float16 and bfloat16"),
    (("float16", _op(1, 2, 8, 64), _op(1, 2, 8, 64), _op(1, 2, 8, 64), False, "rocm"), "NVIDIA"),
    (("float16", None, _op(1, 2, 8, 64), _op(1, 2, 8, 64), False, "cuda"), "without a copy"),
    (("float16", _op(1, 2, 0, 64), _op(1, 2, 8, 64), _op(1, 2, 8, 64), False, "cuda"), "zero-size"),
    (("float16", _op(1, 2, 8, 64), _op(1, 2, 8, 64), _op(1, 2, 0, 64), False, "cuda"), "zero-size"),
    (("float16", _op(1, 2, 8, 12), _op(1, 2, 8, 12), _op(1, 2, 8, 12), False, "cuda"), "multiples of 8"),
    (("float16", _op(1, 2, 8, 512), _op(1, 2, 8, 512), _op(1, 2, 8, 512), False, "cuda"), "up to 256"),
    (("float16", _op(1, 2, 8, 64), _op(1, 2, 8, 64), _op(1, 2, 8, 20), False, "cuda"), "Dv=20"),
    (("float16", _op(1, 2, 9, 64), _op(1, 2, 8, 64), _op(1, 2, 8, 64), True, "cuda"), "no key"),
    (("bfloat16", ac.Operand((1, 2, 8, 64), (1024, 512, 64, 2)), _op(1, 2, 8, 64), _op(1, 2, 8, 64), False,
      "cuda"), "head dim contiguous"),
    (("bfloat16", ac.Operand((1, 2, 8, 64), (1030, 515, 65, 1)), _op(1, 2, 8, 64), _op(1, 2, 8, 64), False,
      "cuda"), "multiples of 8"),
])
def test_refusals_say_why(args: tuple[Any, ...], words: str) -> None:
    why = ac.refusal(*args)
    assert why is not None and words in why


def test_gqa_and_causal_with_longer_keys_are_taken() -> None:
    assert ac.refusal("bfloat16", _op(2, 8, 100, 64), _op(2, 2, 300, 64), _op(2, 2, 300, 32), True, "cuda") is None


# -- masks and the cache key --------------------------------------------------------------------------------
@pytest.mark.parametrize(("shape", "dtype", "sk", "want"), [
    ((7, 9), "bool", 9, ac.MaskPlan("bool", 1, 1, 16)),
    ((4, 7, 9), "float16", 9, ac.MaskPlan("additive", 1, 4, 16)),
    ((2, 3, 1, 7, 9), "bool", 9, ac.MaskPlan("bool", 6, 1, 16)),
    ((1, 3, 4, 1, 16), "float32", 16, ac.MaskPlan("additive", 6, 4, 16)),
    ((1, 1, 4, 7, 8), "bool", 8, ac.MaskPlan("bool", 1, 4, 8)),
])
def test_mask_plan(shape: tuple[int, ...], dtype: str, sk: int, want: ac.MaskPlan) -> None:
    # q (2, 3, Hq=4, Sq=7, D): the bias broadcasts over the batch or the heads where the mask does.
    assert ac.mask_plan(shape, dtype, (2, 3), 4, 7, sk) == want


def test_cache_key_separates_what_the_graph_depends_on() -> None:
    q, k = _op(1, 4, 8, 64), _op(1, 2, 8, 64)
    o = ac.out_operand(1, 4, 8, 64, "bhsd")
    base = ("float16", q, k, k, o, None, False, 0.125, 0)
    key = ac.cache_key(*base)
    assert key == ac.cache_key(*base)
    changes = {0: "bfloat16", 1: _op(1, 4, 16, 64), 2: _op(1, 1, 8, 64), 4: ac.out_operand(1, 4, 8, 64, "bshd"),
               5: ac.MaskPlan("bool", 1, 1, 8), 6: True, 7: 0.25, 8: 1}
    for i, value in changes.items():
        other = list(base)
        other[i] = value
        assert ac.cache_key(*other) != key, i
    # A stride of a one-element dimension addresses nothing: it does not split the cache.
    b1 = ac.Operand((1, 4, 8, 64), (12345, 512, 64, 1))
    assert ac.cache_key("float16", b1, k, k, o, None, False, 0.125, 0) == key


# -- loading the library -----------------------------------------------------------------------------------
@pytest.fixture
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ac, "_STATE", {})


def test_missing_frontend_is_a_reason(fresh_state: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cudnn", None)  # import cudnn raises ImportError
    mod, why = ac.library()
    assert mod is None and why is not None and "pip install nvidia-cudnn-frontend" in why
    assert ac.library() == (None, why)  # cached


def test_missing_libcudnn_is_a_reason(fresh_state: None, monkeypatch: pytest.MonkeyPatch) -> None:
    cudnn = pytest.importorskip("cudnn")

    def broken() -> int:
        raise RuntimeError("Unable to find symbol cudnnGetVersion")

    monkeypatch.setattr(cudnn, "backend_version", broken)
    monkeypatch.setattr(ac, "_find_libcudnn", lambda: None)
    mod, why = ac.library()
    assert mod is None and why is not None and "libcudnn.so.9 was not found" in why


def test_a_broken_libcudnn_is_a_reason(fresh_state: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    cudnn = pytest.importorskip("cudnn")

    def broken() -> int:
        raise RuntimeError("Unable to find symbol cudnnGetVersion")

    lib = tmp_path / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(b"not an ELF file")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert ac._find_libcudnn() == str(lib / "libcudnn.so.9")
    monkeypatch.setattr(cudnn, "backend_version", broken)
    mod, why = ac.library()
    assert mod is None and why is not None and "did not load" in why and str(lib) in why


# -- on the GPU: CuPy without torch --------------------------------------------------------------------------
def test_cupy_attention_through_cudnn_without_torch(request: pytest.FixtureRequest) -> None:
    if request.config.getoption("--devices") != "gpu":
        pytest.skip("cuDNN SDPA on CuPy arrays: run with --devices gpu")
    pytest.importorskip("cupy")
    if importlib.util.find_spec("cudnn") is None:  # not installed: skipped; installed but broken: fails below
        pytest.skip("nvidia-cudnn-frontend is not installed (pip install nvidia-cudnn-frontend)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", "from tests import _cudnn_inside as t; t.inside()"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=900)
    print(done.stdout[-6000:])
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "inside: all checks passed" in done.stdout
