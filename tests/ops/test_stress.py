"""Threads x backends x precision policies: 8 threads call matmul-like ops with mixed policies, eagerly
and through ``ua.jit`` (compiled, the first compiles made by the threads themselves); every result is
bitwise the single-threaded result for its policy, and the frameworks' global settings are what they
were once the threads join (issue 16 class 4).

A few seconds by default; ``UNARRAY_STRESS_SECONDS=60`` runs longer.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from typing import Any

import numpy as np
import pytest

import unarray as ua
from tests._support import TestBackend
from unarray import _precision

SECONDS = float(os.environ.get("UNARRAY_STRESS_SECONDS", "2"))
POLICIES = ("highest", "tf32", "bf16", "fastest")
THREADS = 8


def _inputs(backend: str, device: str) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 96), dtype=np.float32)
    b = rng.standard_normal((96, 32), dtype=np.float32)
    q = rng.standard_normal((1, 2, 16, 8), dtype=np.float32)
    if backend == "torch":
        import torch

        return tuple(torch.from_numpy(x).to(device) for x in (a, b, q))  # type: ignore[return-value]
    if backend == "tensorflow":
        import tensorflow as tf

        return tuple(tf.constant(x) for x in (a, b, q))  # type: ignore[return-value]
    mod = importlib.import_module(backend if backend != "jax" else "jax.numpy")
    return tuple(mod.asarray(x) for x in (a, b, q))  # type: ignore[return-value]


def _state(backend: str) -> Any:
    if backend == "torch":
        import torch

        from tests._torch_state import _read

        return _read(torch)
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.config.experimental.tensor_float_32_execution_enabled()
    return None


def _work(policy: str, a: Any, b: Any, q: Any) -> list[np.ndarray]:
    with ua.precision(policy):  # type: ignore[arg-type]
        scoped = ua.matmul(a, b)
    return [np.asarray(ua.to(x, "numpy", device="cpu")) for x in (
        ua.matmul(a, b, precision=policy), scoped,
        ua.scaled_dot_product_attention(q, q, q, precision=policy))]


def _in_threads(work: Any, expected: dict[str, list[np.ndarray]], seconds: float) -> list[str]:
    # THREADS threads cycle through the policies for ``seconds`` (four calls each at least); every result must
    # equal the single-threaded one for its policy. The mismatches, named by thread, call and policy.
    errors: list[str] = []
    stop = time.monotonic() + seconds

    def run(i: int) -> None:
        n = 0
        while time.monotonic() < stop or n < 4:
            policy = POLICIES[(i + n) % len(POLICIES)]
            for got, want in zip(work(policy), expected[policy], strict=True):
                if not np.array_equal(got, want):
                    errors.append(f"thread {i}, call {n}, {policy}: result differs from the single-threaded one")
            n += 1

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _stress(backend: str, device: str = "cpu") -> None:
    a, b, q = _inputs(backend, device)
    expected = {p: _work(p, a, b, q) for p in POLICIES}
    before = _state(backend)
    errors = _in_threads(lambda policy: _work(policy, a, b, q), expected, SECONDS)
    assert not errors, errors[:5]
    assert _state(backend) == before


@pytest.mark.parametrize("lib", ["numpy", "torch", "jax", "tensorflow"])
@pytest.mark.parametrize("forced", [False, True], ids=["auto", "forced"])
def test_threads_mixed_policies(lib: str, forced: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = lib
    pytest.importorskip(backend)
    # forced: the switch is arbitrated even on a CPU where it cannot change a result, so the
    # save / write / restore path runs under contention here too.
    monkeypatch.setattr(_precision, "FORCE_ARBITRATION", forced)
    if backend == "torch":
        import torch

        torch.backends.cuda.matmul.fp32_precision = "tf32"  # the user's own, new-API setting
        try:
            _stress(backend)
        finally:
            torch.backends.cuda.matmul.fp32_precision = "none"
        return
    _stress(backend)


def _jitted() -> Any:
    # A fresh ua.jit function: its entries (one per policy) are compiled by whichever thread calls first.
    def f(a: Any, b: Any) -> Any:
        return (ua.matmul(a, b),)

    return ua.jit(f, torch={"backend": "eager"})


def _jit_work(f: Any, policy: str, a: Any, b: Any) -> list[np.ndarray]:
    with ua.precision(policy):  # type: ignore[arg-type]
        out = f(a, b)
    return [np.asarray(ua.to(x, "numpy", device="cpu")) for x in out]


def test_threads_mixed_policies_jit(backend: TestBackend) -> None:
    # One thread's policy never reaches another thread's compiled result: the policy is read by each call, and
    # a thread tracing or compiling changes nothing another thread reads (every backend the run's devices have).
    lib = backend.name
    rng = np.random.default_rng(4)
    # Note: a long inner dimension: the CPU's reduced-precision matmul paths, where it has them, change the result.
    a, b = (backend.asarray(rng.standard_normal(s, dtype=np.float32)) for s in ((16, 512), (512, 16)))
    # Note: a single matmul compiles to the kernel its eager call runs, so eager results are the reference.
    expected = {p: _jit_work(lambda a, b: (ua.matmul(a, b),), p, a, b) for p in POLICIES}
    f = _jitted()
    before = _state(lib)
    errors = _in_threads(lambda policy: _jit_work(f, policy, a, b), expected, SECONDS / 2)  # (compiles on top)
    assert not errors, errors[:5]
    assert _state(lib) == before
    assert f.cache_info()["entries"] == len(POLICIES)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["torch", "cupy", "jax"])
def test_threads_mixed_policies_gpu(lib: str) -> None:
    backend = lib
    pytest.importorskip(backend)
    if backend == "torch":
        import torch

        if not torch.cuda.is_available():
            pytest.skip("no CUDA device")
        torch.backends.cuda.matmul.allow_tf32 = True  # the legacy flag, as in training scripts
        try:
            _stress(backend, "cuda")
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
        return
    if backend == "jax":
        import jax

        if jax.devices()[0].platform == "cpu":
            pytest.skip("no JAX GPU")
    _stress(backend)
