"""ua.to(..., readonly=True): the caller's promise not to write makes the zero-copy alias of immutable or
read-only memory the result (JAX and TensorFlow to torch, a read-only NumPy array to torch), served from the
cache on repeat, named by ua.explain, and checked by ua.checking_readonly(). The default stays one copy.
Both ua.to paths: this module runs once more with UNARRAY_PURE_PYTHON=1 (the last test)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import child_pythonpath
from unarray import _native

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]
DTYPES = ["float32", "float64", "int32", "int8", "uint8", "bool", "complex64"]


def _values(draw_seed: int, dtype: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(draw_seed)
    a = rng.standard_normal(n) * 5 + 1
    return (a > 1) if dtype == "bool" else a.astype(dtype)


def _jax(a: np.ndarray) -> Any:
    jax = pytest.importorskip("jax")
    return jax.device_put(a, jax.devices("cpu")[0])  # (this module is about host memory: a GPU's default too)


def _tf(a: np.ndarray) -> Any:
    tf = pytest.importorskip("tensorflow")
    return tf.constant(a)


def _ro_numpy(a: np.ndarray) -> np.ndarray:
    out = a.copy()
    out.flags.writeable = False
    return out


SOURCES = {"jax": _jax, "tensorflow": _tf, "numpy": _ro_numpy}


def _pointer(src: str, x: Any) -> int:
    if src == "jax":
        return int(x.unsafe_buffer_pointer())
    if src == "tensorflow":
        return int(np.asarray(x).ctypes.data)
    return int(x.ctypes.data)


@pytest.mark.parametrize("src", list(SOURCES))
@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(DTYPES), n=st.integers(1, 300), seed=st.integers(0, 2**16))
def test_promise_is_the_zero_copy_alias_and_the_default_a_copy(src: str, dtype: str, n: int, seed: int) -> None:
    if src == "jax" and dtype == "float64":
        dtype = "float32"  # (JAX without x64 mode has none)
    a = _values(seed, dtype, n)
    x = SOURCES[src](a)
    before = ua.stats()
    t = ua.to(x, "torch", readonly=True)
    mid = ua.stats()
    assert isinstance(t, torch.Tensor) and np.array_equal(t.numpy(), a)
    assert t.data_ptr() == _pointer(src, x)  # zero-copy: the source's own memory
    assert mid["copies"] == before["copies"] and mid["zero_copy"] == before["zero_copy"] + 1
    copied = ua.to(x, "torch")  # the default: one counted copy, memory of its own
    assert ua.stats()["copies"] == mid["copies"] + 1
    assert copied.data_ptr() != _pointer(src, x) and np.array_equal(copied.numpy(), a)
    assert ua.to(x, "torch", readonly=True, copy=False).data_ptr() == _pointer(src, x)


@pytest.mark.parametrize("src", list(SOURCES))
def test_repeat_promises_are_cache_hits(src: str, fresh_handoff: None) -> None:
    x = SOURCES[src](np.arange(1.0, 65.0, dtype=np.float32))
    first, second = ua.to(x, "torch", readonly=True), ua.to(x, "torch", readonly=True)
    assert first.data_ptr() == second.data_ptr() == _pointer(src, x)
    hits = ua.stats()["cache_hits"]
    third = ua.to(x, "torch", readonly=True)
    assert third is second  # the stored view
    assert ua.stats()["cache_hits"] == hits + 1 and ua.stats()["copies"] == 0


def test_read_only_numpy_flavours_alias_without_torch_warning(tmp_path: Path) -> None:
    path = tmp_path / "m.bin"
    np.arange(1.0, 33.0, dtype=np.float32).tofile(path)
    ro = np.arange(1.0, 33.0, dtype=np.float32)
    ro.flags.writeable = False
    flavours = {"memmap": np.memmap(path, dtype=np.float32, mode="r"), "view": ro[3:20:2],
                "bytes": np.frombuffer(np.arange(1.0, 9.0, dtype=np.float32).tobytes(), np.float32)}
    for name, x in flavours.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # torch's not-writable warning would fail here
            t = ua.to(x, "torch", readonly=True)
        assert t.data_ptr() == x.ctypes.data and np.array_equal(t.numpy(), x), name
        assert not x.flags.writeable, name  # the source's flag is left as it was
        del t


def test_explain_names_the_promise() -> None:
    x = _jax(np.arange(1.0, 5.0, dtype=np.float32))
    e = ua.explain("to", x, "torch", readonly=True)
    assert e.copies == 0 and "readonly=True promise" in str(e)
    d = ua.explain("to", x, "torch")
    assert d.copies == 1 and "readonly=True would alias it" in str(d)
    assert ua.explain("to", np.arange(3.0), "torch").copies == 0


def test_readonly_must_be_a_bool() -> None:
    with pytest.raises(ua.ArgumentError, match=r"ua.to \[torch\].*readonly must be True or False"):
        ua.to(np.ones(2), "torch", readonly="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("src", ["jax", "numpy"])
def test_the_debug_check_catches_a_write(src: str, fresh_handoff: None) -> None:
    x = SOURCES[src](np.arange(1.0, 17.0, dtype=np.float32))
    keep = np.array(x)
    with pytest.raises(ua.ReadOnlyViolationError, match=r"readonly=True.*changed"):
        with ua.checking_readonly():
            for _ in range(3):  # checked on a cache hit too
                t = ua.to(x, "torch", readonly=True)
            assert ua.verify_readonly() == 1  # nothing written yet
            t[0] = -7.0  # the promise broken
            ua.to(x, "torch", readonly=True)  # the next promised handoff of x verifies it
    assert float(np.asarray(x)[0]) == -7.0 and np.array_equal(np.asarray(x)[1:], keep[1:])
    assert ua.verify_readonly() == 0  # off again: nothing recorded


def test_the_debug_check_at_the_end_of_the_block(fresh_handoff: None) -> None:
    x = _ro_numpy(np.arange(1.0, 9.0))
    with pytest.raises(ua.ReadOnlyViolationError):
        with ua.checking_readonly():
            ua.to(x, "torch", readonly=True).mul_(2)
    with ua.checking_readonly():  # a kept promise: no error
        y = ua.to(x, "torch", readonly=True)
        assert float(y.sum()) == float(x.sum())


def test_the_environment_variable_turns_the_check_on() -> None:
    code = ("import numpy as np, unarray as ua, torch\n"
            "x = np.arange(1.0, 9.0); x.flags.writeable = False\n"
            "ua.to(x, 'torch', readonly=True).add_(1)\n"
            "try:\n    ua.verify_readonly()\nexcept ua.ReadOnlyViolationError:\n    print('caught')\n")
    env = dict(os.environ, UNARRAY_CHECK_READONLY="1", PYTHONPATH=child_pythonpath(ROOT))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 0 and "caught" in r.stdout, r.stderr[-2000:]


def test_module_passes_on_the_python_path() -> None:
    if _native.pure_python_requested():
        pytest.skip("already on the Python path")
    env = dict(os.environ, UNARRAY_PURE_PYTHON="1", PYTHONPATH=child_pythonpath(ROOT))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
