"""Handoff safety (issue 16, classes 1 and 3): no input crashes the process, nothing handed out writes
through memory its owner made read-only, and every refusal is a typed error naming ua.to (or
ua.from_dlpack), the backend and the fix. Crash cases run in a subprocess, so that a regression is
a failed test rather than a dead test run. Both ua.to paths are covered: the suite runs once with
the C module and once with UNARRAY_PURE_PYTHON=1."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend
from unarray._backends import _host as _np_h
from unarray._devices import Device, parse_device
from unarray.interop import _cache

ROOT = Path(__file__).resolve().parents[2]
HAVE = {n: importlib.util.find_spec(n) is not None for n in ("torch", "jax", "tensorflow")}
needs = {n: pytest.mark.skipif(not ok, reason=f"{n} is not installed") for n, ok in HAVE.items()}

NUMERIC = ["float32", "float64", "int8", "int32", "int64", "uint8", "complex64", "bool"]


def unaligned(n: int, dtype: str, offset: int) -> np.ndarray:
    """n values (1.5, 2.5, ...) at `offset` bytes past a 64-byte boundary (offset a multiple of the itemsize)."""
    dt = np.dtype(dtype)
    raw = np.empty(n * dt.itemsize + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    out = raw[start:start + n * dt.itemsize].view(dt)
    out[...] = (np.arange(n) % 7 + 1.5).astype(dt) if dt.kind != "b" else np.arange(n) % 2 == 0
    return out


class Producer:
    """A DLPack producer of no library unarray knows (what ua.from_dlpack hands to the backend's own import)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __dlpack__(self, **kw: object) -> object:
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.a.__dlpack_device__()


CHILD_PRELUDE = """
import numpy as np, unarray as ua
from tests.interop.test_handoff_safety import Producer, unaligned
"""


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    # The checkout first, then whatever the caller's path holds (a GPU image runs the suite uninstalled,
    # with the test dependencies on PYTHONPATH).
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=path)
    code = CHILD_PRELUDE + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          cwd=ROOT)


def assert_child_ok(r: subprocess.CompletedProcess[str], done: str) -> None:
    # A negative return code is a signal (an abort or a segfault): the crash this module guards against.
    assert r.returncode == 0, f"child died with {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    assert done in r.stdout


# -- class 1: crashes ----------------------------------------------------------------------------

@needs["tensorflow"]
def test_unaligned_buffers_into_tensorflow_then_ops_do_not_abort() -> None:
    # Every route into TF with a buffer off the 64-byte boundary TF's kernels CHECK: a foreign producer
    # through ua.from_dlpack, a NumPy array through ua.to and ua.from_dlpack, any dtype and offset.
    r = run_child("""
    import tensorflow as tf
    for dtype in ("float32", "float64", "int32", "int8", "complex64"):
        size = np.dtype(dtype).itemsize
        for offset in sorted({size, 8, 32, 48} - {0}):
            offset -= offset % size
            a = unaligned(257, dtype, offset)
            assert a.ctypes.data % 64, "the test array must be unaligned"
            for make in (lambda: ua.from_dlpack(Producer(a), backend="tensorflow"),
                         lambda: ua.from_dlpack(a, backend="tensorflow"), lambda: ua.to(a, "tensorflow")):
                before = ua.stats()["copies"]
                t = make()
                got = (t * 2).numpy()  # any TF op reads the buffer
                assert np.array_equal(got, a * 2), (dtype, offset)
                assert ua.stats()["copies"] == before + 1, (dtype, offset, "the copy is counted")
    print("done")
    """)
    assert_child_ok(r, "done")


@needs["jax"]
def test_unaligned_foreign_producer_into_jax_is_one_counted_copy() -> None:
    r = run_child("""
    import jax.numpy as jnp
    for offset in (4, 12, 36):
        a = unaligned(100, "float32", offset)
        before = ua.stats()["copies"]
        j = ua.from_dlpack(Producer(a), backend="jax")
        assert np.array_equal(np.asarray(jnp.sum(j)), a.sum()), offset
        assert ua.stats()["copies"] == before + 1, offset
        try:
            ua.from_dlpack(Producer(a), backend="jax", copy=False)
        except ua.HandoffError as e:
            assert "ua.from_dlpack [jax]" in str(e) and "copy=False" in str(e), e
        else:
            raise AssertionError("copy=False must refuse the unaligned buffer")
    print("done")
    """)
    assert_child_ok(r, "done")


@needs["tensorflow"]
def test_unaligned_foreign_producer_refused_under_copy_false() -> None:
    import tensorflow as tf  # noqa: F401

    a = unaligned(64, "float32", 4)
    with pytest.raises(ua.HandoffError, match=r"ua.from_dlpack \[tensorflow\].*copy=False"):
        ua.from_dlpack(Producer(a), backend="tensorflow", copy=False)


@needs["torch"]
def test_read_only_memmap_written_by_torch_does_not_crash(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    np.arange(4096, dtype=np.float32).tofile(path)
    r = run_child(f"""
    import torch
    m = np.memmap({str(path)!r}, dtype=np.float32, mode="r")
    for call in (lambda: ua.to(m, "torch"), lambda: ua.from_dlpack(m, backend="torch"),
                 lambda: ua.from_dlpack(Producer(m), backend="torch")):
        t = call()
        t.add_(1)  # writes: into a copy, never into the read-only mapping
        assert float(t[5]) == 6.0 and float(m[5]) == 5.0
    print("done")
    """)
    assert_child_ok(r, "done")


def _layouts(a: np.ndarray) -> dict[str, np.ndarray]:
    return {"compact": a, "transposed": a.T, "strided": a[::2, 1:], "reversed": a[::-1]}


@needs["torch"]
@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(NUMERIC), layout=st.sampled_from(["compact", "transposed", "strided", "reversed"]),
       read_only=st.booleans(), rows=st.integers(2, 6), cols=st.integers(2, 6))
def test_read_only_numpy_never_aliased_by_torch(dtype: str, layout: str, read_only: bool, rows: int,
                                                cols: int) -> None:
    import torch

    base = (np.arange(rows * cols).reshape(rows, cols) % 5 + 1).astype(dtype)
    x = _layouts(base)[layout]
    keep = x.copy()
    x.flags.writeable = not read_only  # a view's flag: the base stays writable
    for _ in range(3):  # the first handoff, and the route's later ones (C guard or Python check)
        before = ua.stats()["copies"]
        t = ua.to(x, "torch")
        assert isinstance(t, torch.Tensor) and np.array_equal(t.numpy(), keep)
        copied = ua.stats()["copies"] - before
        if read_only:
            assert copied == 1  # a counted copy: torch cannot hold a read-only buffer
            t.fill_(0)
            assert np.array_equal(x, keep)  # the owner's data is untouched
        elif layout != "reversed":  # torch takes any positive strides: zero-copy
            assert copied == 0 and t.data_ptr() == x.ctypes.data
    if read_only:
        with pytest.raises(ua.HandoffError, match=r"ua.to \[torch\].*read-only.*copy=False"):
            ua.to(x, "torch", copy=False)


# -- class 3: handoff safety ---------------------------------------------------------------------

def _targets(*names: str) -> list[object]:
    return [pytest.param(n, marks=needs[n]) if n in needs else n for n in names]


@needs["torch"]
@pytest.mark.parametrize("dst", _targets("numpy", "jax", "tensorflow"))
@pytest.mark.parametrize("copy", [None, True, False])
def test_tensor_requiring_grad_is_refused(dst: str, copy: bool | None) -> None:
    import torch

    __import__(dst)
    t = torch.arange(6.0, requires_grad=True)
    with pytest.raises(ua.HandoffError, match=rf"ua.to \[{dst}\].*requires grad.*detach\(\)"):
        ua.to(t, dst, copy=copy)
    out = ua.to(t.detach(), dst)  # the fix the message names
    assert np.array_equal(np.asarray(out), np.arange(6.0))


@needs["torch"]
def test_mixed_call_refuses_a_tensor_requiring_grad() -> None:
    import torch

    with pytest.raises(ua.HandoffError, match=r"ua.add \[numpy\].*detach\(\)"):
        ua.add(np.ones(3), torch.ones(3, requires_grad=True))


@needs["tensorflow"]
@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from(NUMERIC), shape=st.lists(st.integers(0, 4), max_size=3))
def test_tensorflow_tensor_to_numpy_is_read_only(dtype: str, shape: list[int]) -> None:
    import tensorflow as tf

    a = (np.arange(int(np.prod(shape))).reshape(shape) % 3 + 1).astype(dtype)
    t = tf.constant(a)
    for _ in range(3):
        out = ua.to(t, "numpy")  # a 0-d tensor gives TF's NumPy scalar, itself immutable
        assert np.array_equal(out, a) and not out.flags.writeable
        with pytest.raises((ValueError, TypeError), match="read-only|does not support item assignment"):
            out[...] = 0
    assert np.array_equal(t.numpy(), a)


@needs["tensorflow"]
def test_tf_variable_to_numpy_is_a_read_only_snapshot_counted_as_a_copy(fresh_handoff: None) -> None:
    import tensorflow as tf

    v = tf.Variable(np.arange(8.0, dtype=np.float32))
    out = ua.to(v, "numpy")
    s = ua.stats()
    # a snapshot: a later assign does not show in it (TF copies the buffer on that write), so a copy
    assert s["zero_copy"] == 0 and s["copies"] == 1
    assert not out.flags.writeable
    v.assign_add(np.ones(8, np.float32))
    assert np.array_equal(out, np.arange(8.0)) and np.array_equal(v.numpy(), np.arange(8.0) + 1)
    with pytest.raises(ua.HandoffError, match=r"ua.to \[numpy\].*tf.Variable.*copy=False"):
        ua.to(v, "numpy", copy=False)


@needs["tensorflow"]
@pytest.mark.parametrize("dst", _targets("numpy", "torch", "jax"))
def test_tf_variable_is_handed_over_and_never_served_stale(dst: str) -> None:
    import tensorflow as tf

    __import__(dst)
    v = tf.Variable(np.arange(4.0, dtype=np.float32))
    for step in range(4):  # repeated handoffs (a cached route would store the second)
        got = np.asarray(ua.to(v, dst))
        assert np.array_equal(got, np.arange(4.0) + step), (dst, step)
        v.assign_add(np.ones(4, np.float32))


@pytest.mark.parametrize("dst", _targets("jax", "tensorflow", "torch"))
@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
def test_cache_is_not_stale_after_the_buffer_is_replaced_in_place(dst: str, dtype: str) -> None:
    mod = __import__(dst)
    if dst == "jax" and dtype in ("int64", "float64"):
        mod.config.update("jax_enable_x64", True)
    try:
        a = _np_h.aligned_copy((np.arange(16) + 1).astype(dtype))
        for _ in range(3):  # the third handoff is a cache hit on cached routes
            first = ua.to(a, dst)
        assert np.array_equal(np.asarray(first), np.arange(16) + 1)
        a.__setstate__((np.arange(16) + 100).astype(dtype).__reduce__()[2])  # pickle's in-place load
        assert np.array_equal(np.asarray(ua.to(a, dst)), np.arange(16) + 100)
    finally:
        if dst == "jax":
            mod.config.update("jax_enable_x64", False)
        _cache.clear()


def _torch_cases() -> list[tuple[str, object]]:
    import torch

    return [
        ("sparse_coo", lambda: torch.eye(3).to_sparse()),
        ("sparse_csr", lambda: torch.eye(3).to_sparse_csr()),
        ("quantized", lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.quint8)),
        ("complex32", lambda: torch.ones(3).to(torch.complex32)),
    ]


TORCH_FIX = {"sparse_coo": (ua.HandoffError, "to_dense"), "sparse_csr": (ua.HandoffError, "to_dense"),
             "quantized": (ua.DTypeError, "dequantize"), "complex32": (ua.DTypeError, "complex64")}


@needs["torch"]
@pytest.mark.parametrize("dst", _targets("numpy", "jax", "tensorflow"))
@pytest.mark.parametrize("case", list(TORCH_FIX))
def test_torch_tensors_without_a_counterpart_are_typed_refusals(case: str, dst: str) -> None:
    __import__(dst)
    x = dict(_torch_cases())[case]()
    err, fix = TORCH_FIX[case]
    for copy in (None, True):
        with pytest.raises(err, match=rf"ua.to \[{dst}\].*{fix}"):
            ua.to(x, dst, copy=copy)


@needs["torch"]
@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "bfloat16"])
def test_float8_and_bfloat16_round_trip_with_numpy_or_are_refused(name: str) -> None:
    import ml_dtypes
    import torch

    t = torch.tensor([0.5, -1.0, 2.0, 448.0 if "e4m3" in name else 1024.0]).to(getattr(torch, name))
    a = ua.to(t, "numpy")  # the same bits as ml_dtypes' dtype, zero-copy
    assert a.dtype == np.dtype(getattr(ml_dtypes, name)) and a.ctypes.data == t.data_ptr()
    back = ua.to(a, "torch")
    assert back.dtype == t.dtype and torch.equal(back.float(), t.float())
    if HAVE["tensorflow"] and name != "bfloat16":
        import tensorflow as tf  # noqa: F401

        with pytest.raises(ua.DTypeError, match=rf"ua.to \[tensorflow\].*{name}"):
            ua.to(t, "tensorflow")


NP_BAD = {
    "object": lambda: np.array([1, "a", None], dtype=object),
    "structured": lambda: np.zeros(3, dtype=[("a", "<i2"), ("b", "<f4")]),
    "void": lambda: np.zeros(3, dtype="V2"),
    "str": lambda: np.array(["ab", "c"]),
    "bytes": lambda: np.array([b"ab", b"c"]),
    "datetime": lambda: np.array(["2024-01-01"], dtype="datetime64[D]"),
}


@pytest.mark.parametrize("dst", _targets("torch", "jax", "tensorflow"))
@pytest.mark.parametrize("case", list(NP_BAD))
def test_numpy_dtypes_without_a_counterpart_are_typed_refusals(case: str, dst: str) -> None:
    __import__(dst)
    x = NP_BAD[case]()
    for copy in (None, True, False):  # never reinterpreted (a void dtype once became bfloat16)
        with pytest.raises(ua.DTypeError, match=rf"ua.to \[{dst}\].*astype"):
            ua.to(x, dst, copy=copy)


def test_masked_array_is_refused_by_ua_to() -> None:
    m = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    for dst in ["numpy"] + [n for n in ("torch", "jax") if HAVE[n]]:
        __import__(dst)
        with pytest.raises(ua.ArgumentTypeError, match=r"ua.to.*masked.*filled"):
            ua.to(m, dst)


@settings(max_examples=40, deadline=None)
@given(copy=st.one_of(st.text(max_size=5), st.integers(), st.floats(allow_nan=False), st.just([]),
                      st.just(np.int64(1))))
def test_copy_other_than_true_false_none_is_refused(copy: object) -> None:
    with pytest.raises(ua.ArgumentError, match=r"ua.to.*copy must be True, False or None"):
        ua.to(np.ones(2), "numpy", copy=copy)  # type: ignore[arg-type]


def test_copy_accepts_numpy_bools() -> None:
    x = np.arange(3.0)
    assert ua.to(x, "numpy", copy=np.bool_(False)) is x
    y = ua.to(x, "numpy", copy=np.bool_(True))
    assert y is not x and np.array_equal(y, x)


def _device_cases() -> list[object]:
    return _targets("torch", "jax", "tensorflow") + ["numpy"]


@pytest.mark.parametrize("dst", _device_cases())
@pytest.mark.parametrize("device", ["cuda", "gpu", "gpu:0", "tpu", "cuda:7", "rocm:1"])
def test_absent_device_is_a_typed_error_naming_what_is_available(dst: str, device: str) -> None:
    __import__(dst)
    want = parse_device(device)
    from unarray._dispatch import backend_named

    available = backend_named(dst).devices()
    x = np.arange(4.0, dtype=np.float32)
    if want in available:  # a machine that has it: the array lands there
        assert ua.device(ua.to(x, dst, device=device)) == want
        return
    names = "|".join(str(d) for d in available)  # the message lists what this machine has
    with pytest.raises(ua.DeviceNotAvailableError, match=rf"ua.to \[{dst}\].*{want}.*available: .*({names})"):
        ua.to(x, dst, device=device)


@needs["torch"]
def test_native_device_object_that_is_absent_is_typed() -> None:
    import torch

    if torch.cuda.is_available():
        assert ua.device(ua.to(np.ones(2), "torch", device=torch.device("cuda"))).kind in ("cuda", "rocm")
        return
    with pytest.raises(ua.DeviceNotAvailableError, match=r"ua.to \[torch\].*available: cpu"):
        ua.to(np.ones(2), "torch", device=torch.device("cuda"))


TF_STRINGS = st.tuples(
    st.sampled_from(["", "/job:localhost/replica:0/task:0", "/job:worker/task:3"]),
    st.sampled_from(["/device:", "/", ""]), st.sampled_from(["CPU", "GPU", "cpu", "gpu", "TPU"]),
    st.integers(0, 7))


@settings(max_examples=60, deadline=None)
@given(parts=TF_STRINGS)
def test_parse_device_reads_tensorflow_device_strings(parts: tuple[str, str, str, int]) -> None:
    prefix, sep, kind, index = parts
    spec = f"{prefix}{sep}{kind}:{index}" if (prefix or sep) else f"{kind}:{index}"
    if prefix and not sep:
        spec = f"{prefix}/{kind}:{index}"
    d = parse_device(spec)
    want = {"cpu": "cpu", "gpu": "cuda", "tpu": "tpu"}[kind.lower()]
    assert d == Device(want, 0 if want == "cpu" else index)


@pytest.mark.parametrize("bad", ["cuda:x", "", "/device:GPU:one", "cu da:1", (99, 0)])
def test_parse_device_refuses_what_names_no_device(bad: object) -> None:
    with pytest.raises(ua.ArgumentError, match="cannot read device"):
        parse_device(bad)


@needs["tensorflow"]
@pytest.mark.parametrize("spec", ["/job:localhost/replica:0/task:0/device:CPU:0", "/device:CPU:0", "/CPU:0",
                                  "CPU:0"])
def test_from_dlpack_reads_tensorflow_device_strings(spec: str) -> None:
    import tensorflow as tf

    a = _np_h.aligned_copy(np.arange(5.0, dtype=np.float32))
    t = ua.from_dlpack(a, backend="tensorflow", device=spec)
    assert "CPU:0" in t.device and np.array_equal(t.numpy(), a)
    t2 = ua.from_dlpack(Producer(a), backend="tensorflow", device=spec)
    assert "CPU:0" in t2.device and np.array_equal(t2.numpy(), a)
    gpu = spec.replace("CPU", "GPU")
    if any(d.device_type == "GPU" for d in tf.config.list_logical_devices()):
        assert "GPU:0" in ua.from_dlpack(a, backend="tensorflow", device=gpu).device
    else:  # soft placement would put it on the CPU without a word
        with pytest.raises(ua.DeviceNotAvailableError, match=r"ua.from_dlpack \[tensorflow\].*cuda:0.*available: cpu"):
            ua.from_dlpack(a, backend="tensorflow", device=gpu)


@needs["torch"]
@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(NUMERIC), read_only=st.booleans())
def test_foreign_read_only_producer_into_torch_is_copied(dtype: str, read_only: bool) -> None:
    a = (np.arange(6) % 4 + 1).astype(dtype)
    a.flags.writeable = not read_only
    before = ua.stats()["copies"]
    t = ua.from_dlpack(Producer(a), backend="torch")
    assert np.array_equal(t.numpy(), a)
    assert (ua.stats()["copies"] - before == 1) == read_only
    assert (t.data_ptr() == a.ctypes.data) != read_only


_SCALAR_DTYPES = ["bool", "int8", "int32", "int64", "uint16", "float32", "float64", "complex64"]


def test_a_numpy_scalar_hands_over_its_own_value(backend: TestBackend) -> None:
    # A NumPy scalar's data pointer is a temporary array's, freed at once: a route that aliased it read other
    # memory (on TensorFlow about one call in ten, on JAX where the temporary happened to be 64-byte aligned).
    dtypes = [d for d in _SCALAR_DTYPES if backend.holds(d)]

    @settings(max_examples=30, deadline=None)
    @given(st.sampled_from(dtypes), st.integers(-100, 100), st.lists(st.integers(1, 4), min_size=1, max_size=6))
    def run(dtype: str, value: int, sizes: list[int]) -> None:
        v = value % 2 if dtype == "bool" else abs(value) if dtype.startswith("u") else value
        s = np.asarray(v + 0.5 if dtype.startswith(("float", "complex")) else v, dtype=dtype)[()]
        assert isinstance(s, np.generic) and s.dtype == dtype
        want = s.item()
        for _ in range(10):  # the freed memory is reused at random: several handoffs per example
            out = ua.asarray(s, backend=backend.name)
            junk = [np.full(n, -7, np.int64) for n in sizes]  # reuse freed memory, as a program does
            assert backend.is_native(out) and backend.to_numpy(out).item() == want, (dtype, want)
            del junk

    run()
