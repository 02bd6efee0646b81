"""ROCm and TPU logic without the hardware: DLPack device codes, the TPU rules, JAX device
mapping with fake device objects, torch's HIP detection, and the conformance runner choosing
deviations by platform."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import unarray as ua
from unarray._devices import DLDeviceType
from unarray.conformance import deviations, runner
from unarray.conformance.cases import all_cases


@pytest.mark.parametrize(("code", "index", "kind", "want_index"), [
    (10, 0, "rocm", 0), (10, 3, "rocm", 3), (11, 2, "cpu", 0), (2, 1, "cuda", 1), (3, 1, "cpu", 0),
    (13, 2, "cuda", 2), (1, 0, "cpu", 0),
])
def test_dlpack_codes_map_to_devices(code: int, index: int, kind: str, want_index: int) -> None:
    d = ua.Device.from_dlpack((code, index))
    assert (d.kind, d.index) == (kind, want_index)


def test_rocm_round_trips_through_its_dlpack_code() -> None:
    assert ua.Device("rocm", 1).dlpack == (DLDeviceType.ROCM, 1)
    assert ua.Device.from_dlpack(ua.Device("rocm", 1).dlpack) == ua.Device("rocm", 1)
    assert ua.Device("rocm").is_gpu and not ua.Device("tpu").is_gpu


def test_a_device_is_a_frozen_value_and_a_placement_equals_only_its_own_kind() -> None:
    from unarray._backends._info import with_library

    d = ua.Device("cuda", 1, library="torch")
    for name in ("kind", "index", "library"):
        with pytest.raises(AttributeError, match="cannot assign to field"):
            setattr(d, name, None)
    assert d == ua.Device("cuda", 1) and hash(d) == hash(ua.Device("cuda", 1)) and d != ua.Device("cuda", 0)
    s = ua.ShardedDevice("cpu", 0, (("x", 2),), (("x",), None), (0, 1))
    same = ua.ShardedDevice("cpu", 0, mesh=(("x", 2),), spec=(("x",), None), device_ids=(0, 1), library="jax")
    assert s == same and hash(s) == hash(same) and s != ua.ShardedDevice("cpu", 0, (("x", 2),), (None, ("x",)), (0, 1))
    m = ua.MeshDevice("cpu", 0, (2,), None, ("Shard(dim=0)",))
    assert m == ua.MeshDevice("cpu", 0, (2,), None, ("Shard(dim=0)",)) and m != ua.MeshDevice("cpu", 0, (2,))
    assert m != s and s != ua.Device("cpu") != m and ua.Device("cpu") == "cpu" and s != "cpu"
    for x in (d, s, m):
        again = with_library(x, "elsewhere")
        assert type(again) is type(x) and again == x and again.library == "elsewhere" and x.library != "elsewhere"


def test_tpu_has_no_float64_and_no_dlpack_code() -> None:
    assert not ua.Device("tpu").has_float64
    assert ua.Device("cuda").has_float64 and ua.Device("rocm").has_float64
    with pytest.raises(ValueError, match="no DLPack device code"):
        _ = ua.Device("tpu", 0).dlpack


jax_backend = (pytest.importorskip("unarray._backends.jax.backend")
               if __import__("importlib").util.find_spec("jax") else None)


def _fake_jax(platform: str, id: int = 0, version: str = "", hw: int | None = None) -> SimpleNamespace:
    return SimpleNamespace(platform=platform, id=id, local_hardware_id=hw,
                           client=SimpleNamespace(platform_version=version))


@pytest.mark.skipif(jax_backend is None, reason="jax is not installed")
@pytest.mark.parametrize(("fake", "want"), [
    (_fake_jax("gpu", 0, "cuda 12080"), ua.Device("cuda", 0)),
    (_fake_jax("gpu", 1, "rocm 6.3.1"), ua.Device("rocm", 1)),
    (_fake_jax("gpu", 2, "HIP runtime"), ua.Device("rocm", 2)),
    (_fake_jax("rocm", 0), ua.Device("rocm", 0)),
    (_fake_jax("cuda", 5, "cuda", hw=1), ua.Device("cuda", 1)),
    (_fake_jax("tpu", 3), ua.Device("tpu", 3)),
    (_fake_jax("cpu", 7), ua.Device("cpu")),
])
def test_device_from_jax_with_fake_devices(fake: SimpleNamespace, want: ua.Device) -> None:
    assert jax_backend.device_from_jax(fake) == want


@pytest.mark.skipif(jax_backend is None, reason="jax is not installed")
def test_jax_refuses_float64_on_tpu_even_in_x64_mode() -> None:
    with pytest.raises(ua.DTypeError, match="tpu"):
        jax_backend.check_dtype("float64", ua.Device("tpu"), x64=True)
    with pytest.raises(ua.DTypeError):
        jax_backend.check_dtype("complex128", ua.Device("tpu"), x64=True)
    with pytest.raises(ua.DTypeError, match="x64"):
        jax_backend.check_dtype("float64", ua.Device("cpu"), x64=False)
    jax_backend.check_dtype("float64", ua.Device("rocm"), x64=True)
    jax_backend.check_dtype("float32", ua.Device("tpu"), x64=False)


@pytest.mark.skipif(jax_backend is None, reason="jax is not installed")
@pytest.mark.parametrize(("policy", "kind", "words"), [
    ("highest", "tpu", ("HIGHEST", "6 bf16 passes")),
    ("tf32", "tpu", ("bf16x3",)),
    ("bf16", "tpu", ("bf16", "DEFAULT")),
    ("highest", "cuda", ("float32", "HIGHEST")),
    ("tf32", "rocm", ("tf32",)),
    ("fastest", "cuda", ("tf32", "DEFAULT")),
    ("bf16", "cpu", ("float32",)),
])
def test_jax_precision_labels(policy: str, kind: str, words: tuple[str, ...]) -> None:
    label = jax_backend.precision_label(policy, ua.Device(kind))
    assert all(w in label for w in words), label


torch_spec = __import__("importlib").util.find_spec("torch")


@pytest.mark.skipif(torch_spec is None, reason="torch is not installed")
def test_torch_hip_builds_report_rocm_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from unarray._backends.torch import backend as tb
    from unarray._backends.torch import devices

    monkeypatch.setattr(devices, "HIP", True)
    monkeypatch.setattr(devices, "_device_cache", {})
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert devices.as_device(torch.device("cuda", 1)) == ua.Device("rocm", 1)
    assert tb.BACKEND.devices() == [ua.Device("cpu"), ua.Device("rocm", 0), ua.Device("rocm", 1)]
    assert tb.BACKEND.native_device(ua.Device("rocm", 1)) == torch.device("cuda", 1)
    monkeypatch.setattr(devices, "HIP", False)
    monkeypatch.setattr(devices, "_device_cache", {})
    assert devices.as_device(torch.device("cuda", 1)) == ua.Device("cuda", 1)


@pytest.mark.parametrize(("device", "platform"), [
    (ua.Device("rocm", 0), "rocm"), (ua.Device("tpu", 2), "tpu"), (ua.Device("cuda", 1), "cuda"),
    (ua.Device("cpu"), "cpu"),
])
def test_runner_platform_of_fake_devices(device: ua.Device, platform: str) -> None:
    assert runner.Env("jax", device).platform == platform
    assert deviations.platform_of(device) == platform


def test_deviations_are_chosen_by_platform() -> None:
    assert deviations.lookup("sum", "jax", "tpu", "float64") is not None
    assert deviations.lookup("sum", "jax", "cuda", "float64") is None
    assert deviations.lookup("linalg.eig", "jax", "rocm", "float32") is not None
    assert deviations.lookup("linalg.eig", "jax", "cpu", "float32") is None
    assert deviations.lookup("fft.fft", "jax", "tpu", "complex64") is not None


def _case(op: str, dtype: str) -> object:
    return next(c for c in all_cases("quick") if c.op == op and c.dtype == dtype)


def test_runner_reports_a_tpu_float64_failure_as_the_known_deviation(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake TPU: arrays are made on it through ua.asarray; here creation fails like float64 on a TPU.
    def refuse(*a, **k):  # type: ignore[no-untyped-def]
        raise ua.DTypeError("float64 is not supported on tpu:0 (the hardware has no float64); use float32")

    monkeypatch.setattr(ua, "asarray", refuse)
    r = runner.run_case(_case("sum", "float64"), runner.Env("numpy", ua.Device("tpu", 0)))
    assert r.status == "known" and r.platform == "tpu"
    assert "no float64" in r.reason and not r.unexpected
    same_on_rocm = runner.run_case(_case("sum", "float64"), runner.Env("numpy", ua.Device("rocm", 0)))
    assert same_on_rocm.status == "error" and same_on_rocm.unexpected


def test_plan_takes_devices_from_each_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    from unarray import _backends

    fake = SimpleNamespace(devices=lambda: [ua.Device("cpu"), ua.Device("tpu", 0), ua.Device("tpu", 1)])
    real_get = _backends.get
    monkeypatch.setattr(_backends, "get", lambda name, op=None: fake if name == "numpy" else real_get(name, op))
    envs, rows, unavailable = runner.plan(["numpy"], None)
    assert [str(e.device) for e in envs] == ["cpu", "tpu:0", "tpu:1"]
    assert [e.platform for e in envs] == ["cpu", "tpu", "tpu"]
    envs, _, _ = runner.plan(["numpy"], ["tpu"])
    assert [str(e.device) for e in envs] == ["tpu:0", "tpu:1"]
    assert rows[0]["usable"] and not unavailable


def test_plan_reports_a_backend_whose_import_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from unarray import _backends

    def broken(name, op=None):  # type: ignore[no-untyped-def]
        raise ImportError("libcudart.so.13: cannot open shared object file")

    monkeypatch.setattr(_backends, "get", broken)
    envs, rows, unavailable = runner.plan(["numpy"], None)
    assert envs == [] and not rows[0]["usable"]
    assert unavailable[0].status == "error" and "libcudart" in unavailable[0].message


# -- the inspection API on devices without float64 and under JAX's x64 switch ------------------------------------


@pytest.mark.parametrize("kind", ["tpu", "mps"])
def test_info_lists_no_float64_on_a_device_without_it(kind: str) -> None:
    from unarray.introspection import Info

    dev = ua.Device(kind, 0)
    with ua.use("numpy"):
        info = ua.__array_namespace_info__()
    assert isinstance(info, Info)
    names = set(info.dtypes(device=dev))
    assert not names & {"float64", "complex128"} and {"float32", "complex64", "int64"} <= names
    defaults = info.default_dtypes(device=dev)
    assert (defaults["real floating"], defaults["complex floating"]) == (ua.float32, ua.complex64)


@pytest.mark.skipif(jax_backend is None, reason="jax is not installed")
@pytest.mark.parametrize("x64", [False, True])
def test_jax_info_on_a_fake_tpu_follows_the_refusal_rule(x64: bool) -> None:
    import jax

    from unarray.introspection import Info

    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", x64)
    try:
        info = Info(jax_backend.BACKEND)
        tpu = ua.Device("tpu", 0)
        listed = set(info.dtypes(device=tpu))
        for name in ("int64", "uint64", "float64", "complex128", "float32", "int32"):
            refused = jax_backend.refusal(name, tpu, x64) is not None
            assert (name in listed) is not refused, name
        assert ("int64" in listed) is x64 and "float64" not in listed
        assert info.default_dtypes(device=tpu)["real floating"] == ua.float32
        assert info.default_dtypes(device=tpu)["integral"] == (ua.int64 if x64 else ua.int32)
    finally:
        jax.config.update("jax_enable_x64", before)


@pytest.mark.skipif(jax_backend is None, reason="jax is not installed")
def test_jax_x64_mode_is_read_when_the_info_is_asked() -> None:
    import jax

    before = jax.config.read("jax_enable_x64")
    try:
        with ua.use("jax"):
            jax.config.update("jax_enable_x64", True)
            wide = ua.__array_namespace_info__()
            assert {"float64", "int64", "uint64", "complex128"} <= set(wide.dtypes())
            assert wide.default_dtypes()["integral"] == ua.int64
            assert ua.full((1,), 2**40, dtype=ua.uint64).dtype == ua.uint64
            jax.config.update("jax_enable_x64", False)
            assert not {"float64", "int64", "uint64", "complex128"} & set(wide.dtypes())
            assert wide.default_dtypes() == {"real floating": ua.float32, "complex floating": ua.complex64,
                                             "integral": ua.int32, "indexing": ua.int32}
            with pytest.raises(ua.DTypeError, match="x64"):
                ua.full((1,), 2, dtype=ua.uint64)
    finally:
        jax.config.update("jax_enable_x64", before)


class _StrictNativeDevice:
    # Like cupy.cuda.Device: a C-level layout of its own, and == answers False to any other type instead of
    # deferring, so only a subclass of it (asked first from the right) can equal it from its side.
    __slots__ = ("id",)

    def __init__(self, index: int) -> None:
        self.id = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _StrictNativeDevice) and other.id == self.id

    def __ne__(self, other: object) -> bool:
        return not (isinstance(other, _StrictNativeDevice) and other.id == self.id)

    def __hash__(self) -> int:
        return hash(self.id)


def test_a_library_device_that_equals_nothing_else_can_share_a_subclass_with_device(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # How the CuPy backend makes ua.device(x) == x.device hold both ways: a class that is both (which a Device
    # with __slots__ would refuse: "multiple bases have instance lay-out conflict").
    from unarray import _devices

    class Both(ua.Device, _StrictNativeDevice):
        def __init__(self, kind: str, index: int = 0, *, library: str | None = None) -> None:
            ua.Device.__init__(self, kind, index, library=library)
            _StrictNativeDevice.__init__(self, index)

    monkeypatch.setitem(_devices._NATIVE, _StrictNativeDevice, lambda d: ua.Device("cuda", d.id))
    from unarray._backends._info import with_library

    d, native = Both("cuda", 1, library="fake"), _StrictNativeDevice(1)
    assert d == native and native == d and not (d != native) and not (native != d)
    assert native != Both("cuda", 0) and Both("cuda", 0) != native
    assert d == ua.Device("cuda", 1) == d and hash(d) == hash(ua.Device("cuda", 1))
    assert not (ua.Device("cuda", 1) != d) and not (d != ua.Device("cuda", 1))  # the native __ne__ is not taken
    plain = with_library(ua.Device("cuda", 1), "other")  # cached first under a key equal to d's
    again = with_library(d, "other")
    assert type(again) is Both and again.library == "other" and native == again and type(plain) is ua.Device
    assert with_library(ua.Device("cuda", 1), "other") is plain and with_library(d, "other") is again
    from unarray import bound  # the namespace bound to a device: its cache tells the two classes apart too
    b = bound.backend_named("numpy")
    assert type(bound._namespace(b, ua.Device("cuda", 1), "array").device) is ua.Device
    assert type(bound._namespace(b, d, "array").device) is Both
    sharded = ua.ShardedDevice("cuda", 1, mesh=(("x", 2),), spec=(("x",),), device_ids=(1, 2))
    assert d != sharded and sharded != d
