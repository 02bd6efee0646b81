"""Does the CuPy backend give the float64 reference's answers on a GPU?

GPU check of the CuPy backend: every hot op against a float64 NumPy reference, matmul precision
policies, device placement, and a multi-op smoke test. Needs a CUDA (or ROCm) GPU and CuPy.

    OUT=./out python benchmarks/gpu/cupy_check.py

Writes $OUT/cupy_check.json (pass/fail counts, each failure with its error) and prints a table last.
Each case runs in its own try/except, so one failure never loses the others.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

RESULTS: list[dict[str, Any]] = []


def record(name: str, fn: Any) -> None:
    t0 = time.perf_counter()
    try:
        detail = fn()
        RESULTS.append({"case": name, "ok": True, "detail": detail, "s": round(time.perf_counter() - t0, 4)})
    except Exception as e:  # noqa: BLE001 - every failure is recorded, none stops the run
        RESULTS.append({"case": name, "ok": False, "error": f"{type(e).__name__}: {e}",
                        "trace": traceback.format_exc(limit=4)[-1500:]})


def close(got: Any, ref: np.ndarray, dtype: str, n: int = 1) -> str:
    g = got.get() if hasattr(got, "get") else np.asarray(got)
    eps = {"float32": 2.0**-23, "float64": 2.0**-52}.get(dtype, 0.0)
    if g.shape != ref.shape:
        raise AssertionError(f"shape {g.shape} != {ref.shape}")
    if eps == 0.0:
        np.testing.assert_array_equal(g, ref)
        return "exact"
    tol = 8 * eps * max(1, n) ** 0.5
    np.testing.assert_allclose(g.astype(np.float64), ref, rtol=tol, atol=tol * max(1.0, float(np.abs(ref).max())),
                               equal_nan=True)
    err = float(np.nanmax(np.abs(g.astype(np.float64) - ref))) if ref.size else 0.0
    return f"max abs err {err:.2e}"


def main() -> None:
    import cupy

    import unarray as ua

    rng = np.random.default_rng(0)
    record("device count", lambda: int(cupy.cuda.runtime.getDeviceCount()))
    record("backend and device", lambda: _eq(ua.backend_of(cupy.zeros(2)), "cupy") + str(ua.device(cupy.zeros(2))))

    for dtype in ("float32", "float64", "int32", "int64"):
        record(f"hot ops [{dtype}] set-up", lambda dtype=dtype: _hot_ops(ua, cupy, rng, dtype) or "")

    big = rng.standard_normal((1024, 1024)).astype(np.float32)
    ref = big.astype(np.float64) @ big.astype(np.float64)
    cb = cupy.asarray(big)
    record("matmul float32 'highest' is float32-accurate (1024^2)",
           lambda: close(ua.matmul(cb, cb), ref, "float32", 1024))
    record("matmul 'tf32' runs and is tf32-close", lambda: _tf32_close(ua.matmul(cb, cb, precision="tf32"), ref))
    record("compute type restored after matmul", lambda: _restored(cupy, ua, cb))
    record("empty max raises EmptyReductionError", lambda: _raises(lambda: ua.max(cupy.zeros((0, 3)), axis=0),
                                                                   ua.EmptyReductionError))
    record("NaN propagates through max", lambda: _eq(bool(cupy.isnan(ua.max(cupy.asarray([1.0, np.nan])))), True))
    record("multi-device: results stay on device 1", lambda: _device1(cupy, ua))
    record("smoke: normalise, project, softmax, attention", lambda: _smoke(cupy, ua, rng))
    record("explain", lambda: ua.explain("matmul", cb, cb).precision)

    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    passed = sum(r["ok"] for r in RESULTS)
    summary = {"passed": passed, "failed": len(RESULTS) - passed, "cases": RESULTS,
               "device": _name(cupy), "cupy": cupy.__version__}
    (out / "cupy_check.json").write_text(json.dumps(summary, indent=1, default=str))
    print(f"{'case':60s} result")
    for r in RESULTS:
        shown = "ok  " + str(r.get("detail", ""))[:40] if r["ok"] else "FAIL " + r["error"][:80]
        print(f"{r['case'][:60]:60s} {shown}")
    print(f"cupy_check: {passed} passed, {len(RESULTS) - passed} failed on {summary['device']}")


def _hot_ops(ua: Any, cupy: Any, rng: Any, dtype: str) -> None:
    a = (rng.standard_normal((33, 17)) * 4).astype(dtype)
    b = (rng.standard_normal((17, 9)) * 4).astype(dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ca, cb = cupy.asarray(a), cupy.asarray(b)
    exact = dtype.startswith("int")
    ref_sum = a.sum(axis=0, dtype=np.int64) if exact else a64.sum(axis=0)
    cases = {
        "matmul": (lambda: ua.matmul(ca, cb), (a @ b) if exact else a64 @ b64, 17),
        "matmul 1-D": (lambda: ua.matmul(ca[0], cb), (a[0] @ b) if exact else a64[0] @ b64, 17),
        "matrix_transpose": (lambda: ua.matrix_transpose(ca), a.T if exact else a64.T, 1),
        "permute_dims": (lambda: ua.permute_dims(ca[None], (2, 0, 1)), np.transpose(a[None], (2, 0, 1))
                         if exact else np.transpose(a64[None], (2, 0, 1)), 1),
        "sum axis=0": (lambda: ua.sum(ca, axis=0), ref_sum, 33),
        "sum axis=()": (lambda: ua.sum(ca, axis=()), a.astype(np.int64) if exact else a64, 1),
        "prod": (lambda: ua.prod(ca[:3, :3], axis=1), np.prod(a[:3, :3], axis=1, dtype=np.int64) if exact
                 else np.prod(a64[:3, :3], axis=1), 3),
        "min": (lambda: ua.min(ca, axis=1), a.min(axis=1) if exact else a64.min(axis=1), 1),
        "max keepdims": (lambda: ua.max(ca, axis=0, keepdims=True), a.max(axis=0, keepdims=True) if exact
                         else a64.max(axis=0, keepdims=True), 1),
        "argmin": (lambda: ua.argmin(ca, axis=1), a.argmin(axis=1), 1),
        "argmax": (lambda: ua.argmax(ca), np.asarray(a.argmax()), 1),
        "any": (lambda: ua.any(ca > 3, axis=0), (a > 3).any(axis=0), 1),
        "all": (lambda: ua.all(ca > -100, axis=1), (a > -100).all(axis=1), 1),
        "cumulative_sum": (lambda: ua.cumulative_sum(ca, axis=1, include_initial=True),
                           np.concatenate([np.zeros((33, 1), np.int64 if exact else np.float64),
                                           np.cumsum(a.astype(np.int64) if exact else a64, axis=1)], 1), 17),
    }
    if not exact:
        cases |= {
            "mean": (lambda: ua.mean(ca, axis=1), a64.mean(axis=1), 17),
            "var correction=1": (lambda: ua.var(ca, axis=0, correction=1), a64.var(axis=0, ddof=1), 33),
            "std": (lambda: ua.std(ca), np.asarray(a64.std()), 33 * 17),
            "cumulative_prod": (lambda: ua.cumulative_prod(ca[:2, :4] / 4, axis=1),
                                np.cumprod(a64[:2, :4] / 4, axis=1), 4),
        }
    for name, (fn, ref, n) in cases.items():
        record(f"{name} [{dtype}]", lambda fn=fn, ref=ref, n=n: _check_native(fn(), cupy)
               + close(fn(), np.asarray(ref), dtype if not exact else "int", n))


def _name(cupy: Any) -> str:
    try:
        return str(cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    except Exception:
        return "?"


def _eq(a: Any, b: Any) -> str:
    if a != b:
        raise AssertionError(f"{a!r} != {b!r}")
    return ""


def _check_native(x: Any, cupy: Any) -> str:
    if not isinstance(x, cupy.ndarray):
        raise AssertionError(f"result is {type(x)}, not cupy.ndarray")
    return ""


def _raises(fn: Any, exc: type) -> str:
    try:
        fn()
    except exc as e:
        return type(e).__name__
    raise AssertionError(f"did not raise {exc.__name__}")


def _tf32_close(got: Any, ref: np.ndarray) -> str:
    g = got.get().astype(np.float64)
    err = float(np.abs(g - ref).max() / np.abs(ref).max())
    if err > 2.0**-8:
        raise AssertionError(f"relative error {err:.2e} beyond tf32")
    return f"rel err {err:.2e}"


def _restored(cupy: Any, ua: Any, cb: Any) -> str:
    from cupy._core import _routines_linalg as rl

    before = rl.get_compute_type(np.dtype("float32"))
    ua.matmul(cb, cb, precision="tf32")
    ua.matmul(cb, cb)
    after = rl.get_compute_type(np.dtype("float32"))
    return _eq(after, before) + f"compute type {rl.compute_type_to_str(after)}"


def _device1(cupy: Any, ua: Any) -> str:
    if cupy.cuda.runtime.getDeviceCount() < 2:
        return "skipped: one GPU"
    with cupy.cuda.Device(1):
        x = cupy.arange(12.0).reshape(3, 4)
    outs = [ua.sum(x, axis=0), ua.matmul(x, x.T), ua.exp(x), ua.concat([x, x]), ua.argmax(x, axis=1)]
    ids = [o.device.id for o in outs]
    return _eq(ids, [1] * len(outs)) + str(ua.device(x))


def _smoke(cupy: Any, ua: Any, rng: Any) -> str:
    x = rng.standard_normal((4, 8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    cx, cw = cupy.asarray(x), cupy.asarray(w)
    mu = ua.mean(cx, axis=-1, keepdims=True)
    sd = ua.std(cx, axis=-1, keepdims=True)
    h = ua.matmul((cx - mu) / sd, cw)
    e = ua.exp(h - ua.max(h, axis=-1, keepdims=True))
    p = e / ua.sum(e, axis=-1, keepdims=True)
    x64 = x.astype(np.float64)
    h64 = ((x64 - x64.mean(-1, keepdims=True)) / x64.std(-1, keepdims=True)) @ w.astype(np.float64)
    e64 = np.exp(h64 - h64.max(-1, keepdims=True))
    msg = close(p, e64 / e64.sum(-1, keepdims=True), "float32", 64)
    q = cupy.asarray(rng.standard_normal((2, 4, 8, 16)).astype(np.float32))
    o = ua.scaled_dot_product_attention(q, q, q, is_causal=True)
    _check_native(o, cupy)
    return msg + f"; attention {tuple(o.shape)}"


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - even an import failure leaves a result file
        out = Path(os.environ.get("OUT", "out"))
        out.mkdir(parents=True, exist_ok=True)
        (out / "cupy_check.json").write_text(json.dumps({"passed": 0, "failed": 1, "fatal": repr(e),
                                                         "cases": RESULTS}, indent=1, default=str))
        print(f"cupy_check: fatal {e!r}")
        raise SystemExit(1) from e
