"""The GPU half of tests/attention/test_attention_cudnn.py, run in a fresh interpreter that never imports torch
until its last check: ``python -c "from tests import _cudnn_inside as t; t.inside()"``.

Each check compares ``ua.scaled_dot_product_attention`` on CuPy float16/bfloat16 arrays with a float64
NumPy reference on the same (rounded) inputs, and reads ``ua.explain`` to know which kernel ran.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._support import assert_close

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
TAKEN: dict[str, int] = {"cudnn": 0, "other": 0}


def dtypes() -> list[str]:
    import cupy

    out = ["float16"]
    try:
        cupy.zeros(2, dtype="bfloat16")
        out.append("bfloat16")
    except Exception as e:
        print(f"inside: CuPy {cupy.__version__} has no bfloat16 ({type(e).__name__}: {e}); float16 only")
    return out


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: Any, causal: bool, scale: float,
              layout: str) -> np.ndarray:
    if layout == "bshd":
        q, k, v = (np.swapaxes(a, -2, -3) for a in (q, k, v))
    g = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, g, axis=-3), np.repeat(v, g, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * scale
    sq, sk = s.shape[-2:]
    allowed = np.ones(s.shape, bool)
    if mask is not None:
        if mask.dtype == bool:
            allowed &= mask
        else:
            s = s + mask
            allowed &= mask != -np.inf
    if causal:
        allowed &= np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq
    s = np.where(allowed, s, -np.inf)
    with np.errstate(all="ignore"):
        top = s.max(-1, keepdims=True)
        p = np.exp(s - np.where(np.isfinite(top), top, 0))
        total = p.sum(-1, keepdims=True)
        out = (p @ v) / np.where(total == 0, 1, total)
    return np.swapaxes(out, -2, -3) if layout == "bshd" else out


def to_gpu(a: np.ndarray, dtype: str) -> tuple[Any, np.ndarray]:
    """The CuPy array in ``dtype`` and its values in float64 (what the kernel actually sees)."""
    import cupy

    x = cupy.asarray(a.astype(np.float32)).astype(dtype)
    return x, x.astype(cupy.float32).get().astype(np.float64)


@st.composite
def problems(draw: Any) -> dict[str, Any]:
    d = draw(st.sampled_from([8, 16, 64, 72, 128, 256]))
    return dict(batch=tuple(draw(st.lists(st.integers(1, 3), max_size=2))), hk=draw(st.integers(1, 3)),
                g=draw(st.integers(1, 3)), sq=draw(st.integers(1, 300)), sk=draw(st.integers(1, 300)), d=d,
                dv=draw(st.sampled_from([d, 64])), causal=draw(st.booleans()),
                layout=draw(st.sampled_from(["bhsd", "bshd"])),
                mask=draw(st.sampled_from(["none", "none", "bool", "additive", "bool-2d", "empty-row"])),
                scale=draw(st.one_of(st.none(), st.floats(0.05, 1.0))), seed=draw(st.integers(0, 2**31 - 1)))


def run_problem(p: dict[str, Any], dtype: str) -> None:
    import cupy

    import unarray as ua

    rng = np.random.default_rng(p["seed"])
    hq = p["hk"] * p["g"]

    def shape(h: int, s: int, d: int) -> tuple[int, ...]:
        return (*p["batch"], h, s, d) if p["layout"] == "bhsd" else (*p["batch"], s, h, d)

    (q, q64), (k, k64), (v, v64) = (to_gpu(rng.standard_normal(shape(h, s, d)), dtype) for h, s, d in
                                    ((hq, p["sq"], p["d"]), (p["hk"], p["sk"], p["d"]), (p["hk"], p["sk"], p["dv"])))
    full = (*p["batch"], hq, p["sq"], p["sk"])
    m = m64 = None
    if p["mask"] in ("bool", "empty-row"):
        m64 = rng.random(full) < 0.7
        if p["mask"] == "empty-row":
            m64[..., 0, :] = False
        m = cupy.asarray(m64)
    elif p["mask"] == "bool-2d":
        m64 = rng.random(full[-2:]) < 0.7
        m = cupy.asarray(m64)
    elif p["mask"] == "additive":
        m, m64 = to_gpu(np.where(rng.random(full[-3:]) < 0.7, rng.standard_normal(full[-3:]), -np.inf), dtype)
    before = [a.copy() for a in (q, k, v)]
    kw = dict(mask=m, is_causal=p["causal"], layout=p["layout"])
    out = ua.scaled_dot_product_attention(q, k, v, scale=p["scale"], **kw)
    kernel = ua.explain("scaled_dot_product_attention", q, k, v, **kw).kernel
    assert isinstance(out, cupy.ndarray) and out.dtype == q.dtype, (type(out), out.dtype, p, kernel)
    for a, b in zip(before, (q, k, v), strict=True):
        assert bool((a == b).all()), "an input was changed"
    scale = p["scale"] if p["scale"] is not None else 1 / math.sqrt(p["d"])
    want = reference(q64, k64, v64, m64, p["causal"], scale, p["layout"])
    got = out.astype(cupy.float32).get().astype(np.float64)
    assert not np.isnan(got).any(), (p, kernel)
    assert_close(got, want, dtype, n_terms=p["sk"] + p["d"], scale=float(np.abs(v64).max()))
    eligible = not (p["causal"] and p["sq"] > p["sk"])
    if kernel.startswith("unarray._backends.cupy.attention_cudnn.run (cudnn sdpa"):
        TAKEN["cudnn"] += 1
        assert eligible, kernel
    else:
        TAKEN["other"] += 1
        assert "cudnn sdpa not used" in kernel, kernel
        if eligible and p["d"] % 8 == 0:
            print(f"inside: cuDNN declined {p}: {kernel}")


def check_hypothesis(dtype: str) -> None:
    @SETTINGS
    @given(problems())
    def check(p: dict[str, Any]) -> None:
        run_problem(p, dtype)

    check()


def check_cases(dtype: str) -> None:
    import cupy

    import unarray as ua

    rng = np.random.default_rng(0)
    # The benchmark's shape, scaled down, each way: plain, causal, GQA, bshd, masks.
    for p in ({"sq": 256, "sk": 256, "causal": False}, {"sq": 256, "sk": 256, "causal": True},
              {"sq": 100, "sk": 384, "causal": True}):
        base = dict(batch=(2,), hk=2, g=4, d=128, dv=128, layout="bhsd", mask="none", scale=None, seed=1)
        for extra in ({}, {"layout": "bshd"}, {"mask": "bool"}, {"mask": "additive"}, {"g": 1, "hk": 8}):
            run_problem({**base, **p, **extra}, dtype)
    # A fused QKV projection (B, S, 3, H, D): q, k, v are bshd views into it, taken without a copy.
    qkv, qkv64 = to_gpu(rng.standard_normal((2, 200, 3, 4, 64)), dtype)
    q, k, v = (qkv[:, :, i] for i in range(3))
    kernel = ua.explain("scaled_dot_product_attention", q, k, v, layout="bshd", is_causal=True).kernel
    assert kernel.startswith("unarray._backends.cupy.attention_cudnn.run (cudnn sdpa"), kernel
    out = ua.scaled_dot_product_attention(q, k, v, layout="bshd", is_causal=True)
    want = reference(*(qkv64[:, :, i] for i in range(3)), None, True, 1 / 8, "bshd")
    assert_close(out.astype(cupy.float32).get(), want, dtype, n_terms=264, scale=float(np.abs(qkv64).max()))
    # NaN in, NaN out: a NaN in q's row makes that row NaN, and only that row.
    (q, q64), (k, k64), (v, v64) = (to_gpu(rng.standard_normal((1, 2, 64, 64)), dtype) for _ in range(3))
    q[0, 1, 5, 3] = float("nan")
    got = ua.scaled_dot_product_attention(q, k, v).astype(cupy.float32).get()
    assert np.isnan(got[0, 1, 5]).all() and not np.isnan(np.delete(got[0, 1], 5, axis=0)).any()
    assert not np.isnan(got[0, 0]).any()
    # A NaN in an attended key reaches every row that attends it (causal: rows >= its position).
    k2 = k.copy()
    k2[0, 0, 40, 0] = float("nan")
    got = ua.scaled_dot_product_attention(q, k2, v, is_causal=True).astype(cupy.float32).get()
    assert np.isnan(got[0, 0, 40:]).all() and not np.isnan(got[0, 0, :40]).any()
    # Fully masked rows are zeros.
    (q, _), (k, _), (v, _) = (to_gpu(rng.standard_normal((1, 2, 64, 64)), dtype) for _ in range(3))
    mask = np.ones((64, 64), bool)
    mask[[0, 17]] = False
    got = ua.scaled_dot_product_attention(q, k, v, mask=cupy.asarray(mask)).astype(cupy.float32).get()
    assert (got[..., [0, 17], :] == 0).all() and (np.abs(got[..., 1, :]) > 0).any()
    # On a stream of the caller's: ordered with the work around it.
    with cupy.cuda.Stream(non_blocking=True):
        (q, q64), (k, k64), (v, v64) = (to_gpu(rng.standard_normal((2, 4, 128, 64)), dtype) for _ in range(3))
        got = ua.scaled_dot_product_attention(q, k, v, is_causal=True).astype(cupy.float32).get()
    assert_close(got, reference(q64, k64, v64, None, True, 1 / 8, "bhsd"), dtype, n_terms=192,
                 scale=float(np.abs(v64).max()))


def check_fallbacks() -> None:
    import cupy

    import unarray as ua
    from unarray._backends.cupy import attention_cudnn as ac

    q = cupy.ones((1, 2, 16, 64), cupy.float32)
    kernel = ua.explain("scaled_dot_product_attention", q, q, q).kernel
    assert "blocked online-softmax" in kernel and "takes float16 and bfloat16" in kernel, kernel
    h = cupy.ones((1, 2, 16, 12), cupy.float16)
    kernel = ua.explain("scaled_dot_product_attention", h, h, h).kernel
    assert "blocked online-softmax" in kernel and "multiples of 8" in kernel, kernel
    # Without the library: the blocked path, and explain says why.
    saved = dict(ac._STATE)
    ac._STATE.clear()
    ac._STATE.update(cudnn=None, why="nvidia-cudnn-frontend is not importable (test)")
    try:
        h = cupy.asarray(np.random.default_rng(2).standard_normal((1, 2, 16, 64))).astype(cupy.float16)
        kernel = ua.explain("scaled_dot_product_attention", h, h, h).kernel
        assert "blocked online-softmax" in kernel and "not importable (test)" in kernel, kernel
        fallback = ua.scaled_dot_product_attention(h, h, h).astype(cupy.float32).get()
    finally:
        ac._STATE.clear()
        ac._STATE.update(saved)
    fused = ua.scaled_dot_product_attention(h, h, h).astype(cupy.float32).get()
    assert_close(fused, fallback, "float16", n_terms=80, scale=4.0)


def check_with_torch(dtype: str) -> None:
    # Once torch is imported, CuPy half inputs take torch's kernels through a zero-copy handoff (measured
    # faster than cuDNN's frontend at every size of benchmarks/gpu/cupy_attention_routes.py), and both
    # routes agree with torch's own SDPA on the same memory.
    import cupy
    import torch
    import torch.nn.functional as F

    import unarray as ua

    rng = np.random.default_rng(7)
    q, k, v = (to_gpu(rng.standard_normal((2, 8, 256, 128)), dtype)[0] for _ in range(3))
    kernel = ua.explain("scaled_dot_product_attention", q, k, v, is_causal=True).kernel
    assert kernel.startswith("torch"), kernel
    ours = ua.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert isinstance(ours, cupy.ndarray)
    from unarray._backends.cupy import attention_cudnn

    direct = attention_cudnn.sdpa(q, k, v, None, True, 1 / np.sqrt(128), "bhsd")
    theirs = F.scaled_dot_product_attention(*(torch.from_dlpack(a) for a in (q, k, v)), is_causal=True)
    ref = cupy.from_dlpack(theirs.float().contiguous()).get().astype(np.float64)
    for got in (ours, direct):
        assert_close(got.astype(cupy.float32).get(), ref, dtype, n_terms=384, scale=4.0)


def inside() -> None:
    import cupy

    import unarray as ua
    from unarray._backends.cupy import attention_cudnn as ac

    assert "torch" not in sys.modules
    mod, why = ac.library()
    print(f"inside: CuPy {cupy.__version__}, {ac.versions() if mod is not None else why}")
    assert mod is not None, why
    for dtype in dtypes():
        check_cases(dtype)
        print(f"inside: {dtype} cases passed")
        check_hypothesis(dtype)
        print(f"inside: {dtype} Hypothesis passed, kernels taken {TAKEN}")
    check_fallbacks()
    assert "torch" not in sys.modules, "unarray or cudnn imported torch"
    assert TAKEN["cudnn"] > TAKEN["other"], TAKEN
    print("inside: torch was never imported")
    for dtype in dtypes():
        check_with_torch(dtype)
    print(ua.explain("scaled_dot_product_attention", *(cupy.ones((1, 2, 8, 64), "float16"),) * 3).kernel)
    print("inside: all checks passed")
