"""CuPy backend: the logic that runs without a GPU (import, device and precision mapping, with fakes),
and GPU-side checks that run under ``--devices gpu``. Also the Numba edge-only backend."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("cupy")

import unarray as ua  # noqa: E402
from unarray._backends.cupy import backend as cpb  # noqa: E402


def _gpu(config: pytest.Config) -> bool:
    return str(config.getoption("--devices")) == "gpu"


@pytest.fixture
def gpu(request: pytest.FixtureRequest) -> Any:
    if not _gpu(request.config):
        pytest.skip("GPU-side CuPy check: run with --devices gpu")
    import cupy

    if cupy.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA/ROCm device visible")
    return cupy


# -- CPU side --------------------------------------------------------------------------------------
def test_backend_module_imports_without_a_gpu() -> None:
    code = ("import unarray._backends.cupy.backend as c, unarray._backends.numba.backend as n; "
            "print(c.BACKEND.name, n.BACKEND.name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"CUDA_VISIBLE_DEVICES": ""}
                         | {k: v for k, v in __import__("os").environ.items() if k != "CUDA_VISIBLE_DEVICES"},
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cupy", "numba"]


@pytest.mark.parametrize(("hip", "kind"), [(False, "cuda"), (True, "rocm")])
def test_device_kind_from_the_build(hip: bool, kind: str) -> None:
    assert cpb.device_from_id(1, hip=hip) == ua.Device(kind, 1)


def test_is_hip_reads_the_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    import cupy

    monkeypatch.setattr(cupy.cuda.runtime, "is_hip", True, raising=False)
    assert cpb.is_hip() is True
    assert cpb.device_from_id(0) == ua.Device("rocm", 0)
    monkeypatch.setattr(cupy.cuda.runtime, "is_hip", False, raising=False)
    assert cpb.device_from_id(0) == ua.Device("cuda", 0)


def test_native_device_refuses_the_cpu() -> None:
    with pytest.raises(ua.DeviceMismatchError):
        cpb.BACKEND.native_device("cpu")
    assert cpb.BACKEND.native_device(None) is None


def test_dtype_mapping() -> None:
    assert cpb.BACKEND.dtype(ua.float32) == np.float32
    assert cpb.BACKEND.dtype("int16") == np.int16
    with pytest.raises(ua.DTypeError):
        cpb.BACKEND.dtype("not-a-dtype")


class _FakeDevice:
    def __init__(self, id: int, log: list[str]):  # noqa: A002 - CuPy's attribute name
        self.id, self.log = id, log

    def __enter__(self) -> None:
        self.log.append(f"enter {self.id}")

    def __exit__(self, *exc: object) -> None:
        self.log.append(f"exit {self.id}")


class _FakeArray:
    def __init__(self, dev: _FakeDevice):
        # (CuPy's device and its memory pointer's device_id, which the device checks read)
        self.device, self.data = dev, types.SimpleNamespace(device_id=dev.id)


def test_ops_run_on_the_arrays_device(monkeypatch: pytest.MonkeyPatch) -> None:
    import cupy

    from unarray._backends.cupy import devices

    monkeypatch.setattr(devices, "current_id", lambda: 0)
    monkeypatch.setattr(cupy, "ndarray", _FakeArray)
    log: list[str] = []
    on1, on0 = _FakeArray(_FakeDevice(1, log)), _FakeArray(_FakeDevice(0, log))
    fn = cpb.pinned(lambda *a, **k: log.append("run") or "done")
    assert fn(on1) == "done"
    assert log == ["enter 1", "run", "exit 1"]
    log.clear()
    fn(on0)
    assert log == ["run"]  # already current: no device switch
    log.clear()
    fn([on1, on0])  # a sequence of arrays (concat, stack): the first leads
    assert log == ["enter 1", "run", "exit 1"]
    log.clear()
    with cpb.on_device_of(on1):
        log.append("body")
    assert log == ["enter 1", "body", "exit 1"]


def test_ascontiguousarray_copies_on_the_arrays_device(monkeypatch: pytest.MonkeyPatch) -> None:
    # CuPy allocates and launches on the current device: a small view on another device is copied under that
    # device, so the result lives where x does (the C path takes CuPy's copy only on the current device).
    import cupy

    from unarray._backends.cupy import devices, layout

    log: list[str] = []
    monkeypatch.setattr(devices, "current_id", lambda: 0)
    monkeypatch.setattr(cupy, "ndarray", _FakeArray)
    monkeypatch.setattr(layout, "_ascontiguous", lambda x: log.append("copy") or "copied")
    for dev, expected in ((1, ["enter 1", "copy", "exit 1"]), (0, ["copy"])):
        view = _FakeArray(_FakeDevice(dev, log))
        view.flags, view.nbytes = types.SimpleNamespace(c_contiguous=False), 64
        for call in (lambda v=view: layout.compact(cpb.BACKEND, v), lambda v=view: layout.NATIVE.run(v)):
            log.clear()
            assert call() == "copied" and log == expected, dev


def test_effective_float32_compute_reads_cupy_tf32() -> None:
    types = {"highest": 1, "tf32": 2, "bf16": 3, "default": 0, "fastest": 3}
    assert cpb.effective_float32_compute(0, types, {}) == "highest"
    assert cpb.effective_float32_compute(0, types, {"CUPY_TF32": "1"}) == "tf32"
    assert cpb.effective_float32_compute(1, types, {"CUPY_TF32": "1"}) == "highest"
    assert cpb.effective_float32_compute(2, types, {}) == "tf32"


@contextlib.contextmanager
def precision_scope(policy: str) -> Iterator[None]:
    # CuPy's float32 compute type for the block through the backend's switch, the user's restored after.
    token = cpb._COMPUTE.enter(policy)
    try:
        yield
    finally:
        cpb._COMPUTE.leave(token)


def test_precision_scope_sets_and_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    from cupy._core import _routines_linalg as rl

    state = {"f32": rl.COMPUTE_TYPE_DEFAULT}
    seen: list[int] = []
    monkeypatch.setattr(rl, "get_compute_type", lambda dt: state["f32"])

    def set_(dt: Any, ct: int) -> None:
        state["f32"] = ct
        seen.append(ct)

    monkeypatch.setattr(rl, "set_compute_type", set_)
    monkeypatch.setenv("CUPY_TF32", "1")
    with precision_scope("highest"):
        assert state["f32"] == rl.COMPUTE_TYPE_FP32
    assert state["f32"] == rl.COMPUTE_TYPE_DEFAULT
    monkeypatch.setenv("CUPY_TF32", "0")
    seen.clear()
    with precision_scope("highest"):  # default without CUPY_TF32 is already float32: untouched
        pass
    assert seen == []
    with precision_scope("tf32"):
        assert state["f32"] == rl.COMPUTE_TYPE_TF32
    assert state["f32"] == rl.COMPUTE_TYPE_DEFAULT


def test_precision_labels() -> None:
    assert "TF32 off" in cpb.BACKEND.precision_used("highest", None)
    assert "tf32" in cpb.BACKEND.precision_used("tf32", None)


# -- Numba: edge-only --------------------------------------------------------------------------------
def test_numba_backend_refuses_compute_with_advice() -> None:
    from unarray._backends.numba import backend as nb

    for op in ("matmul", "sum", "add", "linalg_det"):
        with pytest.raises(ua.UnsupportedError, match=r"ua\.to\(x, 'cupy'\)"):
            fn = getattr(nb.BACKEND, op)
            fn(None, None, "highest") if op == "matmul" else fn(None, None) if op == "add" else \
                fn(None, None, None, False) if op == "sum" else fn(None)


def test_numba_type_detection_is_by_class_name() -> None:
    from unarray._backends.numba import backend as nb

    DeviceNDArray = type("DeviceNDArray", (), {"__module__": "numba.cuda.cudadrv.devicearray"})
    Other = type("DeviceNDArray", (), {"__module__": "mylib"})
    assert nb.is_device_array_type(DeviceNDArray)
    assert not nb.is_device_array_type(Other)


# -- GPU side (--devices gpu) ---------------------------------------------------------------------------
def test_gpu_matmul_highest_is_float32_accurate(gpu: Any) -> None:
    a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    out = ua.matmul(gpu.asarray(a), gpu.asarray(a))
    assert isinstance(out, gpu.ndarray)
    ref = a.astype(np.float64) @ a.astype(np.float64)
    np.testing.assert_allclose(out.get(), ref, rtol=1e-4, atol=1e-3)


def test_gpu_array_on_device_1_stays_there(gpu: Any) -> None:
    if gpu.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    with gpu.cuda.Device(1):
        x = gpu.arange(6.0).reshape(2, 3)
    for out in (ua.sum(x, axis=0), ua.matmul(x, x.T), ua.exp(x), ua.concat([x, x])):
        assert out.device.id == 1
    assert ua.device(x) == ua.Device("cuda", 1) or ua.device(x) == ua.Device("rocm", 1)


def test_gpu_device_and_handoff(gpu: Any) -> None:
    x = gpu.arange(4.0)
    assert ua.device(x).is_gpu
    assert ua.backend_of(x) == "cupy"
    np.testing.assert_array_equal(ua.to(x, "numpy", device="cpu"), np.arange(4.0))


def test_devices_equal_cupys_own_both_ways() -> None:
    # CuPy's Device.__eq__ answers False to any other type: ua.device(x) is a subclass of both, so x.device == it.
    import cupy

    from unarray.introspection import with_library

    d = with_library(cpb.device_from_id(1, hip=False), "cupy")
    assert d == cupy.cuda.Device(1) and cupy.cuda.Device(1) == d and d.library == "cupy"
    assert d != cupy.cuda.Device(0) and cupy.cuda.Device(0) != d
    assert d == ua.Device("cuda", 1) and hash(d) == hash(ua.Device("cuda", 1))
