"""ua.to's C hot path (unarray/interop/_speedups.c): built, equivalent to the Python path, leak-free."""

from __future__ import annotations

import importlib.util
import inspect
import os
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import unarray as ua
from unarray import _backends, _native, interop
from unarray._backends import _handoff
from unarray._backends import _host as _np_h
from unarray._backends import handoff as _handoff_of
from unarray._backends.cupy import handoff as _cupy_h
from unarray._backends.torch import handoff as _torch_h
from unarray.interop import _cache, _routes

pytestmark = pytest.mark.usefixtures("fresh_handoff")
PURE = _native.pure_python_requested()  # UNARRAY_PURE_PYTHON=1 (not 0) asks for the Python path
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(PURE, reason="UNARRAY_PURE_PYTHON=1 asks for the Python path")
def test_c_hot_path_is_built_and_is_ua_to() -> None:
    # pip builds the extension wherever a C compiler is found (CI has one): ua.to is then the C function.
    assert _routes.speedups is not None
    assert inspect.isbuiltin(ua.to) and ua.to is interop.to
    assert str(inspect.signature(ua.to)) == "(x, backend, *, device=None, copy=None, chunks=None, readonly=False)"
    assert ua.to.__module__ == "unarray.interop" and ua.to.__doc__.startswith("Hand ``x`` to another library")


def test_python_path_passes_the_handoff_suite() -> None:
    # The same handoff, tracing and doc tests on the pure-Python path (a machine with no C compiler).
    if PURE:
        pytest.skip("already on the Python path")
    env = dict(os.environ, UNARRAY_PURE_PYTHON="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "tests/interop/test_interop.py", "tests/jit/test_tracing.py",
           "tests/interop/test_speedups.py::test_counts_and_errors",
           "unarray/interop"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_counts_and_errors() -> None:
    # What the C function does itself: the route, keywords, counters, and handing the rest to Python.
    torch = pytest.importorskip("torch")
    x = np.arange(6.0).reshape(2, 3)
    ua.stats(reset=True)
    t = ua.to(x, "torch")
    assert t.data_ptr() == x.ctypes.data
    assert ua.to(x, "torch", device=None, copy=None).data_ptr() == x.ctypes.data  # None keywords: the route
    assert ua.stats()["zero_copy"] == 2
    assert ua.to(x, "torch", copy=True).data_ptr() != x.ctypes.data  # a keyword: the Python path
    assert ua.stats(reset=True)["copies"] == 1 and ua.stats()["handoffs"] == 0
    # The cached route: the first handoff converts, the second stores, the third is a hit.
    if importlib.util.find_spec("jax"):
        t = torch.arange(6.0)
        views = [ua.to(t, "jax") for _ in range(3)]
        assert views[2] is views[1] and ua.stats()["cache_hits"] == 1
    # Errors come from the Python path, unchanged.
    with pytest.raises(TypeError, match="positional"):
        ua.to(x, "torch", "cpu")  # type: ignore[misc]
    with pytest.raises(ua.BackendNotAvailableError, match="unknown backend"):
        ua.to(x, ["torch"])  # an unhashable backend
    with pytest.raises(ua.HandoffError, match=r"ua\.matmul \[torch\].*negative strides"):
        ua.to(np.arange(3.0)[::-1], "torch", copy=False, _op="matmul")
    with pytest.raises(TypeError):
        ua.to(x)  # type: ignore[call-arg]
    # A refused native call (negative strides) is one counted copy on the route.
    ua.stats(reset=True)
    r = ua.to(np.arange(3.0)[::-1], "torch")
    assert r.tolist() == [2.0, 1.0, 0.0] and ua.stats()["copies"] == 1


def test_no_reference_leaks() -> None:
    # A leaked reference in the C path would grow these counts by one per call.
    torch = pytest.importorskip("torch")
    x = np.ones((4, 4), np.float32)
    t = torch.ones(4, 4)
    targets = [(t, "numpy")]
    if importlib.util.find_spec("jax"):
        targets.append((t, "jax"))  # a cached route: the loop below is all cache hits
    ua.to(x, "torch")
    for src, dst in targets:
        for _ in range(3):
            ua.to(src, dst)
    views = [ua.to(src, dst) for src, dst in targets]  # a leaked cache hit would grow the view's count
    before = (sys.getrefcount(x), sys.getrefcount(t), sys.getrefcount("torch"), *map(sys.getrefcount, views))
    for _ in range(1000):
        ua.to(x, "torch")
        ua.to(x, "torch", device=None, _op="to")
        for src, dst in targets:
            ua.to(src, dst)
    assert (sys.getrefcount(x), sys.getrefcount(t), sys.getrefcount("torch"), *map(sys.getrefcount, views)) == before


needs_c = pytest.mark.skipif(_routes.speedups is None, reason="the C module is not loaded (UNARRAY_PURE_PYTHON=1)")


class _Dev:
    # An array stand-in whose device a guard reads (a property that may fail, as any attribute can).
    def __init__(self, device: str, fail: bool = False):
        self._device, self.fail = device, fail

    @property
    def device(self) -> str:
        if self.fail:
            raise RuntimeError("device lookup failed")
        return self._device

    def platform(self) -> str:
        return self._device


def _route(guard: object, first: object, cached: bool = False, seen: set[int] | None = None) -> tuple[object, list]:
    calls: list = []

    def slow(x: object, op: str, *had: bool) -> object:
        calls.append(("slow", had))
        return "converter"

    h = _routes.speedups.Handoff(cached, first, slow, None, None, None, "numpy", guard, seen, 4 if seen is not None
                                  else 0)
    return h, calls


@needs_c
def test_attribute_guard_decides_between_the_first_call_and_the_converter() -> None:
    allowed = {"cpu": True, "gpu": False}
    h, calls = _route((_handoff.GUARD_ATTR, _Dev, "device", False, allowed), lambda x: ("first", x.device))
    assert h(_Dev("cpu"), "to") == ("first", "cpu") and calls == []
    assert h(_Dev("gpu"), "to") == "converter"  # allowed, but not True
    assert h(_Dev("tpu"), "to") == "converter"  # never seen by the converter
    assert h(_Dev("cpu", fail=True), "to") == "converter"  # the attribute raised: the converter reports it
    assert h(np.ones(2), "to") == "converter"  # another type
    assert len(calls) == 4 and h.counters() == (1, 0)
    # A method (called), any type.
    h, calls = _route((_handoff.GUARD_ATTR, None, "platform", True, {"cpu": True}), lambda x: "first")
    assert h(_Dev("cpu"), "to") == "first" and h(_Dev("gpu"), "to") == "converter"
    assert h(object(), "to") == "converter"  # no such method


@needs_c
def test_a_failing_first_call_goes_to_the_converter_but_not_an_interrupt() -> None:
    def first(x: object) -> object:
        raise x  # type: ignore[misc]

    h, calls = _route((_handoff.GUARD_ATTR, None, "platform", True, {"cpu": True}), first)

    class Fails(_Dev, LookupError):
        def __init__(self) -> None:
            _Dev.__init__(self, "cpu")

    assert h(Fails(), "to") == "converter" and len(calls) == 1

    class Stops(_Dev, KeyboardInterrupt):
        def __init__(self) -> None:
            _Dev.__init__(self, "cpu")

    with pytest.raises(KeyboardInterrupt):
        h(Stops(), "to")


@needs_c
def test_buffer_guard_takes_only_aligned_writable_compact_buffers() -> None:
    raw = np.zeros(64 * 3, np.uint8)
    base = raw[(-raw.ctypes.data) % 64:][:128]  # 64-byte aligned
    h, calls = _route((_handoff.GUARD_BUFFER, 64), lambda x: "first")
    assert h(base, "to") == "first"
    assert h(base[1:], "to") == "converter"  # misaligned
    assert h(base.reshape(2, 64)[:, ::2], "to") == "converter"  # strided
    ro = base.view()
    ro.flags.writeable = False
    assert h(ro, "to") == "converter"  # read-only
    assert h(np.empty(0, np.float32), "to") == "first"  # nothing to align
    assert h(object(), "to") == "converter"  # no buffer at all
    assert len(calls) == 4


@needs_c
def test_cached_route_first_sight_runs_the_first_call_then_the_converter_stores() -> None:
    seen: set[int] = set()
    h, calls = _route((_handoff.GUARD_ATTR, None, "platform", True, {"cpu": True}), lambda x: "first", cached=True,
                      seen=seen)
    a = _Dev("cpu")
    assert h(a, "to") == "first" and seen == {id(a)} and calls == []
    assert h(a, "to") == "converter" and calls == [("slow", (False,))]  # second sight: convert and store
    others = [_Dev("cpu") for _ in range(4)]
    for o in others:
        h(o, "to")
    assert len(seen) <= 4 and id(others[-1]) in seen  # emptied when full, as _cache.admit does
    assert h(_Dev("gpu"), "to") == "converter"
    with pytest.raises(TypeError, match="seen must be a set"):
        _routes.speedups.Handoff(True, len, len, None, None, None, "numpy", None, [], 4)


buffer_array = getattr(_routes.speedups, "buffer_array", None)
needs_buffer_array = pytest.mark.skipif(buffer_array is None, reason="no C module, or built without NumPy's headers")


def _same_array(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
    assert a.__array_interface__["data"] == b.__array_interface__["data"]
    for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE", "ALIGNED"):
        assert a.flags[flag] == b.flags[flag], flag
    np.testing.assert_array_equal(a, b)


@needs_buffer_array
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "float16", "float32",
                                   "float64", "complex64", "complex128", ">i4", "<f8"])
def test_buffer_array_is_numpys_reading_of_any_exporter(dtype: str) -> None:
    rng = np.random.default_rng(abs(hash(dtype)) % 2**32)
    a = (rng.standard_normal((5, 6)) * 50).astype(dtype)
    for x in (a, a[::-1, 1::2], a.T, a[2, 3], a[:0], np.ascontiguousarray(a)[None]):
        for _ in range(2):  # the first reading of a format is NumPy's own, then the C one
            _same_array(buffer_array(x), np.asarray(memoryview(x)))
    ro = a.copy()
    ro.flags.writeable = False
    assert not buffer_array(ro).flags.writeable and buffer_array(bytearray(b"ab")).flags.writeable


@needs_buffer_array
def test_buffer_array_keeps_the_export_alive_and_refuses_non_exporters() -> None:
    b = bytearray(b"abcd")
    arr = buffer_array(b)
    with pytest.raises(BufferError):
        b.extend(b"e")  # exported: a resize would move the memory under the array
    arr[0] = ord("z")
    assert b[0] == ord("z")
    del arr
    b.extend(b"e")  # released with the array
    with pytest.raises(TypeError):
        buffer_array(object())


@needs_buffer_array
def test_jax_to_numpy_takes_buffer_array_and_matches_np_asarray() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    cpu = jax.devices("cpu")[0]  # a GPU machine's default device is a GPU
    for dt in ("float32", "int32", "bool", "complex64", "float16", "uint8"):
        x = jax.device_put((np.random.default_rng(1).standard_normal((3, 5)) * 9).astype(dt), cpu)
        ua.to(x, "numpy")
        y = ua.to(x, "numpy")
        _same_array(y, np.asarray(x))
        assert y.__array_interface__["data"][0] == x.unsafe_buffer_pointer()
    r = _routes.BY_NAMES[("jax", "numpy")]
    assert r.fast.counters()[0] >= 6
    b = jax.device_put(jnp.ones(3, jnp.bfloat16), cpu)  # no buffer format for bfloat16: the converter's np.asarray
    assert ua.to(b, "numpy").dtype == np.asarray(b).dtype


def test_guarded_first_handoffs_match_the_converters() -> None:
    # The C route's first calls for jax/tf -> numpy and numpy -> tf, against the converters (and the
    # Python path runs the same test: the converter itself).
    tf = pytest.importorskip("tensorflow")
    a = _np_h.aligned_copy(np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32))
    t = tf.constant(a)
    ua.stats(reset=True)
    for _ in range(3):
        _cache.clear()
        out = ua.to(a, "tensorflow")  # a first sight each time
        assert _handoff_of("tensorflow").data_ptr(out) == a.ctypes.data
        n = ua.to(t, "numpy")
        # zero-copy, and read-only: EagerTensors are immutable
        assert n.__array_interface__["data"] == (t._numpy().__array_interface__["data"][0], True)
        np.testing.assert_array_equal(n, a)
    s = ua.stats()
    assert s["copies"] == 0 and s["zero_copy"] == 6
    # What the guard refuses is the converter's: a misaligned or read-only array is one counted copy.
    mis = _np_h.aligned_copy(np.arange(33, dtype=np.float32))[1:]  # 4 bytes past a 64-byte boundary
    ro = _np_h.aligned_copy(a)
    ro.flags.writeable = False
    ua.stats(reset=True)
    np.testing.assert_array_equal(ua.to(mis, "tensorflow").numpy(), mis)
    assert ua.stats()["copies"] == 1
    ua.stats(reset=True)
    np.testing.assert_array_equal(ua.to(ro, "tensorflow").numpy(), a)  # read-only: a writable alias, no copy
    assert ua.stats()["copies"] == 0


def test_no_reference_leaks_on_guarded_routes() -> None:
    tf = pytest.importorskip("tensorflow")
    jnp = pytest.importorskip("jax.numpy")
    a = _np_h.aligned_copy(np.ones((4, 4), np.float32))
    t, j = tf.constant(a), jnp.asarray(a)
    pairs = [(a, "tensorflow"), (t, "numpy"), (j, "numpy")]
    for src, dst in pairs:
        ua.to(src, dst)
    before = [sys.getrefcount(o) for o in (a, t, j, "tensorflow", "numpy")]
    for _ in range(1000):
        _cache.clear()  # numpy -> tensorflow: a first sight every time
        for src, dst in pairs:
            ua.to(src, dst)
        if buffer_array is not None:
            buffer_array(j)
    assert [sys.getrefcount(o) for o in (a, t, j, "tensorflow", "numpy")] == before


def test_signature_reads_are_the_signature_functions() -> None:
    # The C route's hit compares the reads a library declares (signature_reads) with what store() kept (signature).
    samples: dict[str, list] = {"numpy": [np.ones((2, 3), np.float32), np.ones(4)[::-2], np.float64(1.0)]}
    if importlib.util.find_spec("torch"):
        import torch

        samples["torch"] = [torch.ones(2, 3), torch.ones(4, 4).t(), torch.zeros(())]
    if importlib.util.find_spec("jax"):
        import jax.numpy as jnp

        samples["jax"] = [jnp.ones((2, 3)), jnp.zeros(())]
    for lib, xs in samples.items():
        h = _handoff_of(lib)
        reads = h.signature_reads
        assert reads is not None and h.signature is not None
        for x in xs:
            got = tuple(_read(x, name, call) for name, call in reads)
            assert got == h.signature(x), (lib, got)


def _read(x: object, name: str, call: bool | None) -> object:
    # A read as the C route makes it: call None is an ndarray's data pointer (0 for a NumPy scalar).
    if call is None:
        return x.__array_interface__["data"][0] if isinstance(x, np.ndarray) else 0
    return getattr(x, name)() if call else getattr(x, name)


@needs_c
def test_signature_reads_in_c_miss_when_the_array_changes_in_place() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    t = torch.arange(12.0)
    for _ in range(3):
        v = ua.to(t, "jax")
    assert ua.to(t, "jax") is v  # a hit
    t.resize_(3, 4)  # same pointer, new shape
    w = ua.to(t, "jax")
    assert w is not v and w.shape == (3, 4)
    t.set_(torch.arange(5.0))  # new pointer
    assert ua.to(t, "jax").tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    sig = _routes.speedups.Handoff(True, len, len, (("shape", False), "bad"), None, None, "jax")
    _cache.CACHE[id(t)][1] = (t.shape, 0)  # an entry the malformed reads get to compare
    with pytest.raises(TypeError, match="signature read"):
        sig(t, "to")


@needs_c
def test_stream_order_reads_wait_only_when_the_streams_differ() -> None:
    # order_streams on stand-ins: a GPU tensor whose current stream is 5, consumers on 5 and on 7.
    waits: list = []

    class Tensor:
        def __init__(self, device: int):
            self.device = device

        def get_device(self) -> int:
            return self.device

    class Stream:
        def __init__(self, device: int):
            self.ptr = {0: 7}[device]  # the consumer's stream on the tensor's device

    raw = {0: 5}.__getitem__
    for consumer, attr, want in ((5, None, 0), (7, None, 1), (Stream, "ptr", 1), (lambda dev: 5, None, 0)):
        waits.clear()
        h = _routes.speedups.Handoff(True, len, len, None, None, (raw, consumer, attr, lambda x, d: waits.append(d)),
                                      "cupy")
        x = Tensor(0)
        _cache.CACHE[id(x)] = [weakref.ref(x), None, {"cupy": ("view", None)}, 0]
        assert h(x, "to") == "view" and len(waits) == want and waits[:1] in ([], ["cupy"])
        cpu = Tensor(-1)  # get_device() -1: a CPU tensor, never waited for
        _cache.CACHE[id(cpu)] = [weakref.ref(cpu), None, {"cupy": ("view", None)}, 0]
        assert h(cpu, "to") == "view" and len(waits) == want
    bad = _routes.speedups.Handoff(True, len, len, None, None, (raw, 5), "cupy")
    with pytest.raises(TypeError, match="stream-order reads"):
        bad(x, "to")


def _stream_reader(streams: dict[int, int], name: bytes = b"intptr_t (int)") -> tuple[object, object]:
    # A capsule named as a consumer's exported stream reader ("intptr_t (int)"), giving streams[device];
    # and the ctypes callback behind it, which must outlive the capsule.
    import ctypes

    fn = ctypes.CFUNCTYPE(ctypes.c_ssize_t, ctypes.c_int)(lambda device: streams[device])
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
    return new(ctypes.cast(fn, ctypes.c_void_p), name, None), fn


@needs_c
def test_stream_order_calls_a_consumers_exported_stream_reader() -> None:
    # A capsule consumer is called in C with the device: a wait only where its stream differs from
    # the producer's; a capsule of another signature is refused by name, on the hit.
    waits: list = []
    raw = {0: 5, 1: 6}.__getitem__
    reader, keep = _stream_reader({0: 5, 1: 9})
    assert _routes.speedups.stream_of(reader, 1) == 9
    h = _routes.speedups.Handoff(True, len, len, None, None, (raw, reader, None, lambda x, d: waits.append(d)),
                                  "cupy")

    class Tensor:
        pass

    for device, want in ((0, 0), (1, 1), (-1, 0)):
        waits.clear()
        x = Tensor()
        _cache.CACHE[id(x)] = [weakref.ref(x), None, {"cupy": ("view", None, device)}, 0]
        assert h(x, "to") == "view" and len(waits) == want, device
    void, keep_void = _stream_reader({0: 5}, b"intptr_t (void)")
    other = _routes.speedups.Handoff(True, len, len, None, None, (raw, void, None, len), "cupy")
    x = Tensor()
    _cache.CACHE[id(x)] = [weakref.ref(x), None, {"cupy": ("view", None, 0)}, 0]
    with pytest.raises(ValueError, match="incorrect name"):
        other(x, "to")
    del keep, keep_void


@needs_c
def test_cupys_stream_reader_is_used_only_where_it_reads_the_current_stream() -> None:
    # CuPy's exported get_stream_ptr: where no GPU is visible, calling it raises CuPy's own error
    # (passed on, not swallowed) and the probe gives None: the C route reads get_current_stream.
    # With a GPU, it gives get_current_stream(device).ptr (tests/interop/test_handoff_trust.py goes further, with
    # --devices gpu).
    cupy = pytest.importorskip("cupy")
    reader = importlib.import_module("cupy_backends.cuda.stream").__pyx_capi__["get_stream_ptr"]
    try:
        gpus = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        gpus = 0
    if gpus == 0:
        with pytest.raises(cupy.cuda.runtime.CUDARuntimeError):
            _routes.speedups.stream_of(reader, 0)
        assert _cupy_h.cupy_stream_reader(_routes.speedups) is None
    else:
        assert _routes.speedups.stream_of(reader, 0) == cupy.cuda.get_current_stream(0).ptr
        assert _cupy_h.cupy_stream_reader(_routes.speedups) is reader


@needs_c
def test_a_hit_orders_streams_on_the_device_the_store_kept() -> None:
    # A view held with the source's device (a stream-ordered pair's store) is ordered there: x is
    # not asked again. A device of -1 (a CPU tensor) is never waited for.
    waits: list = []

    class Tensor:
        def get_device(self) -> int:
            raise AssertionError("the hit asked for the device the store kept")

    raw = {0: 5, 1: 6}.__getitem__
    h = _routes.speedups.Handoff(True, len, len, None, None, (raw, 6, None, lambda x, d: waits.append(d)), "cupy")
    for device, want in ((0, 1), (1, 0), (-1, 0)):
        waits.clear()
        x = Tensor()
        _cache.CACHE[id(x)] = [weakref.ref(x), None, {"cupy": ("view", None, device)}, 0]
        assert h(x, "to") == "view" and len(waits) == want, device


def test_store_keeps_the_source_device_for_stream_ordered_pairs() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("cupy")
    ordered = _routes.Route(_backends.get("torch"), "cupy")
    plain = _routes.Route(_backends.get("torch"), "numpy")
    assert ordered.order is not None and plain.order is None
    t, u = torch.ones(3), torch.ones(2)
    view = np.ones(3)
    _cache.store(t, ordered, view, 0)
    _cache.store(u, plain, view, 0)
    try:
        held = _cache.CACHE[id(t)][2]["cupy"]
        assert held[0] is view and held[1:] == (((3,),), -1)  # a CPU tensor: device -1
        held = _cache.CACHE[id(u)][2]["numpy"]
        assert held[0] is view and held[1:] == ((_np_h.np_ptr(view), (3,), (8,), view.dtype),)
    finally:
        _cache.clear()



@needs_c
def test_signature_reads_call_the_types_own_descriptors() -> None:
    # A read is the type's C getter or C method, called directly where the type reads attributes
    # the generic way; a type with its own __getattribute__ is read the generic way.
    class Odd(Exception):
        def __getattribute__(self, name: str):
            return 99 if name == "args" else super().__getattribute__(name)

    class Items(list):
        pass

    items = Items([1, 2])
    items.copy = lambda: ["an instance attribute"]  # not the array's metadata: the type's method is read
    for x, reads, want in ((Odd(3), (("args", False),), (99,)), (items, (("copy", True),), ([1, 2],))):
        h = _routes.speedups.Handoff(True, len, lambda *a: "missed", reads, None, None, "jax")
        _cache.CACHE[id(x)] = [weakref.ref(x), want, {"jax": ("view", None)}, 0]
        try:
            assert h(x, "to") == "view", (type(x).__name__, reads)
        finally:
            _cache.clear()


@needs_c
@pytest.mark.parametrize("change", ["transpose", "narrow", "dtype", "resize"])
def test_checked_torch_signature_misses_every_change_that_keeps_the_pointer(change: str) -> None:
    # The C route checks a torch source by its pointer and torch's metadata guard. `.data` assignment
    # changes shape, strides or dtype without a version bump or a new pointer: each must miss.
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    if _cache.checked(_handoff_of("torch")) is None:
        pytest.skip("this torch has no metadata guard: the C route reads shape, strides and dtype")
    t = torch.arange(16.0).reshape(4, 4)
    for _ in range(3):
        v = ua.to(t, "jax")
    assert ua.to(t, "jax") is v and isinstance(_cache.CACHE[id(t)][1], _torch_h.CheckedSig)
    ptr = t.data_ptr()
    if change == "transpose":
        t.data = t.data.t()
    elif change == "narrow":
        t.data = t.data[:2]
    elif change == "dtype":
        t.data = t.data.view(torch.int32)
    else:
        t.resize_(2, 8)
    assert t.data_ptr() == ptr
    w = ua.to(t, "jax")
    assert w is not v
    got, want = np.asarray(w), t.numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_checked_signature_compares_pointer_shape_strides_dtype() -> None:
    torch = pytest.importorskip("torch")
    sig = _cache.checked(_handoff_of("torch"))
    if sig is None:
        pytest.skip("this torch has no metadata guard")
    t = torch.ones(3, 2)
    a, b = sig(t), sig(t)
    assert a == b and not a != b and a[1] is not b[1]  # two guards, one signature
    assert a != sig(t.t()) and a != sig(t.clone()) and a != (t.data_ptr(), None, t.shape, t.stride(), t.dtype)
    h = _handoff_of("torch")
    assert _cache.c_signature(h, h.signature) == (sig, _torch_h.HANDOFF.checked_reads)
    assert _cache.c_signature(_handoff_of("numba"), None) == (None, None)


@needs_c
def test_a_guard_that_says_no_leaves_the_decision_to_the_reads() -> None:
    # A guard that passes settles the signature; one that says no (or a missing one) falls through
    # to reading shape, strides and dtype; one that fails raises.
    torch = pytest.importorskip("torch")
    t = torch.ones(3)
    reads = _torch_h.HANDOFF.checked_reads
    h = _routes.speedups.Handoff(True, len, lambda *a: "missed", reads, None, None, "jax")

    class Guard:
        def __init__(self, answer):
            self.answer = answer

        def check(self, x):
            if isinstance(self.answer, Exception):
                raise self.answer
            return self.answer

    same, other = (t.shape, t.stride(), t.dtype, False), (torch.Size([4]), (1,), t.dtype, False)
    cases = [(Guard(True), other, "view"),  # the guard's yes is final (reads skipped)
             (Guard(False), same, "view"), (None, same, "view"),  # no guard's yes: the reads decide
             (Guard(False), other, "missed"), (None, other, "missed"),
             (Guard(RuntimeError("guard failed")), same, RuntimeError)]
    for guard, meta, want in cases:
        sig = _torch_h.CheckedSig((t.data_ptr(), guard, *meta))
        _cache.CACHE[id(t)] = [weakref.ref(t), sig, {"jax": ("view", None)}, 0]
        try:
            if want is RuntimeError:
                with pytest.raises(RuntimeError, match="guard failed"):
                    h(t, "to")
            else:
                assert h(t, "to") == want, (guard and guard.answer, meta)
        finally:
            _cache.clear()


def test_hits_inside_inference_mode_and_no_grad() -> None:
    # torch's guard also compares the thread's autograd state, which inference_mode and no_grad
    # change: a view stored outside them is still served inside (the reads decide where the guard
    # says no), on both paths. (A tensor that requires grad is refused, as torch's own export refuses
    # it: tests/interop/test_handoff_safety.py.)
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    for x in (torch.arange(6.0), torch.ones(32)[16:]):  # a view 64 bytes in: aligned for JAX
        for _ in range(3):
            v = ua.to(x, "jax")
        for mode in (torch.inference_mode, torch.no_grad):
            with mode():
                hits = ua.stats()["cache_hits"]
                assert ua.to(x, "jax") is v and ua.to(x, "jax") is v
                assert ua.stats()["cache_hits"] - hits == 2, (mode.__name__, x.requires_grad)
    _cache.clear()
