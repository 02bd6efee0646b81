"""Handoff: zero-copy proven by data pointers, copies counted, quirks handled, the cache."""

from __future__ import annotations

import gc
import importlib.util
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unarray as ua
from unarray._backends import _handoff, handoff
from unarray._backends import _host as _np_h
from unarray._backends.jax import handoff as _jax_h
from unarray._backends.numba import handoff as _numba_h
from unarray._backends.tensorflow import handoff as _tf_h
from unarray._backends.torch import handoff as _torch_h
from unarray.interop import _cache, _routes

CPU_LIBS = [n for n in ("numpy", "torch", "jax", "tensorflow") if importlib.util.find_spec(n)]
PAIRS = [(a, b) for a, b in itertools.permutations(CPU_LIBS, 2)]
# Immutable source (JAX, TensorFlow), target without read-only arrays (torch): one copy the target owns.
OWNED = [(s, d) for s, d in PAIRS if _handoff.owned(handoff(s), handoff(d))]
ALIASED = [p for p in PAIRS if p not in OWNED]


def aligned(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal(shape) + 1.5).astype(dtype) if dtype != "bool" else rng.random(shape) > 0.5
    return _np_h.aligned_copy(base)


def make(lib: str, a: np.ndarray):  # a native array of `lib` aliasing nothing the test keeps
    if lib == "numpy":
        return a
    if lib == "torch":
        import torch

        return torch.from_numpy(a).clone()  # torch's own (64-byte aligned) allocation
    if lib == "jax":
        import jax

        return jax.device_put(a, jax.devices("cpu")[0])  # the CPU pairs, also where a GPU is the default
    import tensorflow as tf

    with tf.device("/device:CPU:0"):
        return tf.constant(a)


def ptr(lib: str, x) -> int:
    p = handoff(lib).data_ptr(x)
    assert p is not None
    return p


def as_np(lib: str, x) -> np.ndarray:
    if lib == "torch":
        return x.detach().cpu().numpy()
    return np.asarray(x)


def cached(x, dst: str):
    """The view the cache serves for x: the first handoff only converts, the second stores."""
    ua.to(x, dst)
    y = ua.to(x, dst)
    assert ua.to(x, dst) is y
    return y


# An empty handoff cache and zeroed ua.stats() around each test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("fresh_handoff")


@pytest.mark.parametrize(("src", "dst"), ALIASED)
def test_every_cpu_pair_is_zero_copy_for_aligned_compact_arrays(src, dst):
    x = make(src, aligned((64, 32)))
    y = ua.to(x, dst)
    assert ua.backend_of(y) == dst
    assert ptr(dst, y) == ptr(src, x)
    np.testing.assert_array_equal(as_np(dst, y), as_np(src, x))
    s = ua.stats()
    assert (s["copies"], s["bytes_copied"], s["zero_copy"]) == (0, 0, 1)


@pytest.mark.parametrize(("src", "dst"), OWNED)
def test_an_immutable_source_is_copied_for_a_target_without_read_only_arrays(src, dst):
    # A writable alias of a JAX array or TF tensor would let a write change it: one counted copy,
    # never cached (each handoff is the caller's own), refused under copy=False.
    a = aligned((64, 32))
    x = make(src, a)
    y1, y2 = ua.to(x, dst), ua.to(x, dst)
    assert ptr(dst, y1) != ptr(src, x) and ptr(dst, y2) not in (ptr(src, x), ptr(dst, y1))
    y1 += 1  # a write into the copy leaves the source and the next handoff as they were
    np.testing.assert_array_equal(as_np(src, x), a)
    np.testing.assert_array_equal(as_np(dst, y2), a)
    np.testing.assert_array_equal(as_np(dst, ua.to(x, dst)), a)
    s = ua.stats()
    assert (s["copies"], s["bytes_copied"], s["zero_copy"], s["cache_hits"]) == (3, 3 * a.nbytes, 0, 0)
    with pytest.raises(ua.HandoffError, match="immutable.*copy=False"):
        ua.to(x, dst, copy=False)
    lead = ua.to(np.ones(a.shape, a.dtype), dst)  # a mixed call hands the source over the same way
    e = ua.explain("add", lead, x)
    assert e.copies == 1 and "immutable" in str(e)


@pytest.mark.parametrize(("src", "dst"), [p for p in ALIASED if _routes.pair(*p).cached])
def test_repeated_handoff_is_a_cache_hit_returning_the_same_view(src, dst):
    # Admission on second sight: the first handoff stores nothing, the second stores its view,
    # and the third and later are served from the cache.
    x = make(src, aligned((8, 8)))
    y1 = ua.to(x, dst)
    assert len(_cache.CACHE) == 0
    y2 = ua.to(x, dst)
    assert len(_cache.CACHE) == 1 and ptr(dst, y2) == ptr(dst, y1) == ptr(src, x)
    assert ua.to(x, dst) is y2 and ua.to(x, dst) is y2
    s = ua.stats()
    assert (s["cache_hits"], s["zero_copy"], s["handoffs"], s["copies"]) == (2, 4, 4, 0)


@pytest.mark.parametrize(("src", "dst"), [p for p in ALIASED if not _routes.pair(*p).cached])
def test_cheap_pairs_skip_the_cache_and_stay_zero_copy(src, dst):
    # A converter cheaper than a cache lookup is called again: a new view of the same memory.
    x = make(src, aligned((8, 8)))
    y1 = ua.to(x, dst)
    y2 = ua.to(x, dst)
    assert ptr(dst, y2) == ptr(dst, y1) == ptr(src, x)
    s = ua.stats()
    assert (s["cache_hits"], s["copies"], s["zero_copy"], s["handoffs"]) == (0, 0, 2, 2)


@pytest.mark.parametrize("dtype", ["bool", "float16", "float32", "float64", "complex64", "int8", "uint8", "int64"])
@pytest.mark.parametrize(("src", "dst"), [p for p in PAIRS if "tensorflow" not in p])
def test_dtypes_round_trip_zero_copy(src, dst, dtype):
    import jax

    x = make(src, aligned((4, 5), dtype))
    if dst == "jax" and dtype in ("float64", "int64") and not jax.config.jax_enable_x64:
        with pytest.raises(ua.DTypeError, match="x64"):
            ua.to(x, dst)
        return
    y = ua.to(x, dst)
    np.testing.assert_array_equal(as_np(dst, y), as_np(src, x))
    assert ua.stats()["copies"] == ((src, dst) in OWNED)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0)])
@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_zero_d_and_zero_size(src, dst, shape):
    x = make(src, aligned(shape))
    y = ua.to(x, dst)
    assert tuple(y.shape) == shape
    np.testing.assert_array_equal(as_np(dst, y), as_np(src, x))


def test_torch_bfloat16_to_numpy_and_jax_zero_copy():
    torch = pytest.importorskip("torch")
    t = torch.arange(8, dtype=torch.float32).to(torch.bfloat16)
    n = ua.to(t, "numpy")
    assert str(n.dtype) == "bfloat16" and ptr("numpy", n) == t.data_ptr()
    np.testing.assert_array_equal(n.astype(np.float32), np.arange(8, dtype=np.float32))
    j = ua.to(t, "jax")
    assert str(j.dtype) == "bfloat16" and ptr("jax", j) == t.data_ptr()
    back = ua.to(n, "torch")
    assert back.dtype is torch.bfloat16 and back.data_ptr() == t.data_ptr()


@settings(max_examples=25, deadline=None)
@given(vals=st.lists(st.floats(-2.0**100, 2.0**100, width=32).filter(lambda v: abs(v) > 2.0**-100), min_size=1,
                     max_size=9), other=st.sampled_from(CPU_LIBS))
def test_mlx_bfloat16_goes_both_ways_bit_for_bit(vals, other):
    # NumPy's buffer protocol has no bfloat16: MLX's host copy is the bits as ml_dtypes' bfloat16 (torch's route).
    mx, ml_dtypes = pytest.importorskip("mlx.core"), pytest.importorskip("ml_dtypes")
    want = np.array(vals).astype(ml_dtypes.bfloat16)  # the float64 reference rounded once (float32 values)
    y = ua.to(mx.array(np.array(vals, np.float32)).astype(mx.bfloat16), other)
    assert "bfloat16" in str(y.dtype)
    np.testing.assert_array_equal(np.asarray(ua.to(y, "numpy")).view(np.uint16), want.view(np.uint16))
    back = ua.to(y, "mlx")
    assert back.dtype == mx.bfloat16 and (np.asarray(back.view(mx.uint16)) == want.view(np.uint16)).all()


def test_negative_strides_copy_once_and_copy_false_refuses():
    pytest.importorskip("torch")
    x = aligned((6, 3))[::-1]
    y = ua.to(x, "torch")
    np.testing.assert_array_equal(y.numpy(), x)
    s = ua.stats()
    assert (s["copies"], s["bytes_copied"]) == (1, x.nbytes)
    with pytest.raises(ua.HandoffError, match="copy=False"):
        ua.to(x, "torch", copy=False)


@pytest.mark.parametrize("dst", [d for d in ("jax", "tensorflow") if d in CPU_LIBS])
def test_non_compact_views_copy_once_for_compact_consumers(dst):
    x = aligned((8, 8))[:, ::2]
    y = ua.to(x, dst)
    np.testing.assert_array_equal(np.asarray(y), x)
    assert ua.stats()["copies"] == 1
    with pytest.raises(ua.HandoffError):
        ua.to(x, dst, copy=False)


def test_jax_cpu_alignment_decides_zero_copy():
    pytest.importorskip("jax")
    a = aligned((256,))
    assert ptr("jax", ua.to(a, "jax")) == ptr("numpy", a)
    raw = np.zeros(257 * 4, np.uint8)
    off = (-ptr("numpy", raw)) % 64 + 4
    u = raw[off:off + 256 * 4].view(np.float32)
    u[:] = 3.0
    ua.stats(reset=True)
    y = ua.to(u, "jax")
    np.testing.assert_array_equal(np.asarray(y), u)
    assert ua.stats()["copies"] == 1
    with pytest.raises(ua.HandoffError, match="copy=False"):
        ua.to(u, "jax", copy=False)


def test_read_only_numpy_to_jax_is_zero_copy_and_input_stays_read_only():
    pytest.importorskip("jax")
    a = aligned((16, 16))
    a.flags.writeable = False
    y = ua.to(a, "jax", copy=False)
    assert ptr("jax", y) == ptr("numpy", a)
    assert not a.flags.writeable
    np.testing.assert_array_equal(np.asarray(y), a)


def test_copy_true_always_copies_and_counts():
    pytest.importorskip("torch")
    a = aligned((4, 4))
    y = ua.to(a, "torch", copy=True)
    assert y.data_ptr() != ptr("numpy", a)
    assert ua.stats()["bytes_copied"] == a.nbytes


def test_cache_misses_after_torch_resize_and_set():
    torch = pytest.importorskip("torch")
    t = torch.ones(4, 4)
    n1 = cached(t, "jax")
    ua.stats(reset=True)
    t.resize_(2, 2)
    n2 = ua.to(t, "jax")
    assert n2 is not n1 and n2.shape == (2, 2)
    t.set_(torch.zeros(3))
    n3 = ua.to(t, "jax")
    assert n3.shape == (3,) and ptr("jax", n3) == t.data_ptr()
    assert ua.stats()["cache_hits"] == 0


def test_cache_does_not_keep_dropped_sources_alive():
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    for i in range(40):
        cached(aligned((1024,), seed=i), "jax")
    assert len(_cache.CACHE) > 0
    gc.collect()
    _cache.sweep()
    assert len(_cache.CACHE) == 0


def test_source_out_of_scope_view_stays_valid():
    pytest.importorskip("torch")
    y = ua.to(aligned((100,)) * 0 + 7.0, "torch")
    gc.collect()
    assert float(y.sum()) == 700.0


def test_jax_tracer_handoff_raises_clear_error():
    jax = pytest.importorskip("jax")
    pytest.importorskip("torch")

    def f(x):
        return ua.to(x, "torch")

    with pytest.raises(ua.TracerHandoffError, match="traced"):
        jax.jit(f)(jax.numpy.ones(3))


def test_device_change_is_counted_and_refused_under_copy_false():
    pytest.importorskip("torch")
    with pytest.raises(ua.HandoffError, match="copy=False"):
        ua.to(aligned((2,)), "torch", device="meta", copy=False)


def test_tensorflow_capsule_only_api_round_trip():
    pytest.importorskip("tensorflow")
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(aligned((3, 3))).clone()
    y = ua.to(t, "tensorflow")
    back = ua.to(y, "numpy")  # TF's capsule import, then TF's own export: the same memory throughout
    assert ptr("tensorflow", y) == ptr("torch", t) == ptr("numpy", back)
    np.testing.assert_array_equal(back, t.numpy())


def test_mixed_library_matmul_goes_through_handoff():
    torch = pytest.importorskip("torch")
    a = torch.ones(3, 4)
    b = aligned((4, 2))
    out = ua.matmul(a, b)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), np.ones((3, 4), np.float32) @ b, rtol=1e-6)
    s = ua.stats()
    assert s["handoffs"] == 1 and s["zero_copy"] == 1


def test_from_dlpack_takes_a_plain_producer():
    class Producer:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = aligned((5,))
    y = ua.from_dlpack(Producer(a), backend="numpy")
    assert ptr("numpy", y) == ptr("numpy", a)


@settings(max_examples=25, deadline=None)
@given(
    pair=st.sampled_from([p for p in PAIRS if "tensorflow" not in p]),
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    step=st.sampled_from([1, 2, -1]),
    seed=st.integers(0, 2**16),
)
def test_any_view_arrives_with_equal_values(pair, shape, step, seed):
    src, dst = pair
    a = aligned(tuple(shape), seed=seed)
    if src == "numpy":
        x = a[..., ::step]
    else:
        x = make(src, a)
    y = ua.to(x, dst)
    np.testing.assert_array_equal(as_np(dst, y), as_np(src, x))


def test_unaligned_buffers_reach_tensorflow_as_an_aligned_copy_and_never_abort():
    pytest.importorskip("tensorflow")
    pytest.importorskip("torch")
    # TF kernels abort the process on unaligned tensors: run in a child so a regression fails, not crashes.
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import numpy as np, tensorflow as tf, torch, unarray as ua
        raw = np.zeros(4 * 64 * 34 + 64, np.uint8)
        off = (-raw.__array_interface__["data"][0]) % 64 + 4
        a = raw[off:off + 4 * 64 * 34].view(np.float32).reshape(64, 34)
        a[...] = np.arange(a.size, dtype=np.float32).reshape(a.shape)
        assert a.__array_interface__["data"][0] % 64 == 4
        for src in (a, torch.from_numpy(a)):
            ua.stats(reset=True)
            t = ua.to(src, "tensorflow")
            assert ua.stats()["copies"] == 1, ua.stats()
            s = t[:, ::2]                      # a TF kernel over the imported buffer
            np.testing.assert_array_equal(s.numpy(), a[:, ::2])
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


# -- the calls the DLPack wrappers end in (each library's handoff module) and their public fallbacks ----------

def test_internal_entry_points_resolve_on_this_install():
    # If a JAX or TF release moves them, ua.to falls back to the public wrappers (slower, still
    # correct): this test says so instead of the benchmark quietly regressing.

    if "jax" in CPU_LIBS:
        pytest.importorskip("jax")
        assert _jax_h._jax_entry() is not None
    if "tensorflow" in CPU_LIBS:
        pytest.importorskip("tensorflow")
        assert _tf_h._tf_entry() is not None


@pytest.fixture
def public_wrappers(monkeypatch):
    # As if this install lacked the internal entry points: the public wrappers take over.

    monkeypatch.setattr(_jax_h, "_JAX", [None])
    monkeypatch.setattr(_tf_h, "_TF", [None])
    if "torch" in CPU_LIBS:
        import torch

        monkeypatch.setattr(_torch_h, "_TORCH", [torch.utils.dlpack.from_dlpack])


@pytest.mark.parametrize(("src", "dst"), ALIASED)
def test_public_wrapper_fallback_is_zero_copy_too(public_wrappers, src, dst):
    x = make(src, aligned((16, 8), seed=3))
    y = ua.to(x, dst)
    assert ptr(dst, y) == ptr(src, x)
    np.testing.assert_array_equal(as_np(dst, y), as_np(src, x))
    assert ua.stats()["copies"] == 0


@pytest.mark.parametrize("fallback", [False, True])
def test_unaligned_numpy_to_jax_copies_once_on_both_paths(fallback, monkeypatch):
    pytest.importorskip("jax")

    if fallback:
        monkeypatch.setattr(_jax_h, "_JAX", [None])
    raw = np.zeros(4 * 100 + 64, np.uint8)
    u = raw[(-ptr("numpy", raw)) % 64 + 8:][:400].view(np.float32)
    u[:] = np.random.default_rng(1).standard_normal(100)
    y = ua.to(u, "jax")
    np.testing.assert_array_equal(np.asarray(y), u)
    assert ptr("jax", y) != ptr("numpy", u) and ua.stats()["copies"] == 1


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=0, max_size=3), step=st.sampled_from([1, 2, -1, -2]),
       start=st.integers(0, 2))
def test_np_ptr_reads_the_same_pointer_as_the_array_interface(shape, step, start):
    n = int(np.prod(shape, dtype=int))
    a = np.arange(n * 4 + 8, dtype=np.float32)
    v = a[start:][::step][:n].reshape(shape) if shape else np.asarray(a[start])
    assert _np_h.np_ptr(v) == v.__array_interface__["data"][0]


def test_cache_misses_after_numpy_shape_or_dtype_assignment():
    pytest.importorskip("jax")
    a = aligned((4, 4))
    j1 = cached(a, "jax")
    ua.stats(reset=True)
    a.shape = (16,)
    j2 = ua.to(a, "jax")
    assert j2 is not j1 and j2.shape == (16,)
    a.dtype = np.int32
    j3 = ua.to(a, "jax")
    assert str(j3.dtype) == "int32" and j3.shape == (16,)
    np.testing.assert_array_equal(np.asarray(j3), a)
    assert ua.stats()["cache_hits"] == 0


def test_cache_misses_after_the_returned_view_is_reshaped_in_place():
    # A cached CPU route hands out only immutable views (JAX, TF) now; a view the caller can change
    # in place comes from a cached CUDA route (tests/interop/test_handoff_trust.py has that case, with
    # --devices gpu). Here the signature check itself: a view whose shape no longer matches what was stored is a miss.
    pytest.importorskip("jax")
    x = aligned((4, 4))
    j1 = cached(x, "jax")
    x.shape = (2, 8)  # the source reshaped in place: its signature changed
    j2 = ua.to(x, "jax")
    assert j2 is not j1 and tuple(j2.shape) == (2, 8)


def test_unaligned_numpy_to_tensorflow_copy_false_refuses():
    pytest.importorskip("tensorflow")
    raw = np.zeros(4 * 64 + 64, np.uint8)
    u = raw[(-ptr("numpy", raw)) % 64 + 4:][:256].view(np.float32)
    with pytest.raises(ua.HandoffError, match="aligned"):
        ua.to(u, "tensorflow", copy=False)


@settings(max_examples=25, deadline=None)
@given(offset=st.integers(1, 15), n=st.integers(1, 300), src=st.sampled_from(["numpy", "torch"]))
def test_an_unaligned_buffer_goes_to_jax_by_one_copy_without_trying_the_view(offset, n, src):
    # JAX's CPU client views only 64-byte aligned buffers: the check comes first (a refused import
    # costs an export and an exception), the copy is counted, the values are equal, and no error text
    # carries a raw pointer address.
    pytest.importorskip("jax")
    if src == "torch":
        pytest.importorskip("torch")
    raw = np.random.default_rng([offset, n]).standard_normal(n + 32).astype(np.float32)
    start = next(i for i in range(offset, offset + 16) if (ptr("numpy", raw) + 4 * i) % 64)
    a = raw[start:start + n]
    x = a if src == "numpy" else __import__("torch").from_numpy(raw)[start:start + n]
    real = _jax_h.jax_from_dlpack
    tried: list[int] = []

    def watched(y):
        tried.append(handoff(src).data_ptr(y) if not isinstance(y, np.ndarray) else ptr("numpy", y))
        return real(y)

    _cache.clear()
    ua.stats(reset=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_jax_h, "jax_from_dlpack", watched)
        y = ua.to(x, "jax")
    np.testing.assert_array_equal(np.asarray(y), a)
    assert all(p % 64 == 0 for p in tried), "the view of an unaligned buffer was tried"
    assert ua.stats()["copies"] == 1
    with pytest.raises(ua.HandoffError, match="64-byte aligned") as e:
        ua.to(x, "jax", copy=False)
    assert "0x" not in str(e.value)


def test_a_consumer_on_another_device_is_a_move_the_caller_asks_for():
    # A CPU tensor cannot become a CuPy array without a host-to-device copy, which only device= asks
    # for: a HandoffError naming the fix, not a silent, uncounted copy.
    torch = pytest.importorskip("torch")
    pytest.importorskip("cupy")
    with pytest.raises(ua.HandoffError, match=r"device=") as info:
        ua.to(torch.ones(3), "cupy")
    assert "CuPy arrays live on the GPU" in str(info.value)
    assert ua.stats()["copies"] == 0


class _GpuJaxArray:
    # What jax_to_np reads of an array on an accelerator: np.asarray would copy it to the host.
    def is_deleted(self) -> bool:
        return False

    def platform(self) -> str:
        return "gpu"

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("an accelerator array must not be read through np.asarray")


def test_jax_on_an_accelerator_to_numpy_is_a_device_change():
    with pytest.raises(_handoff.OtherDevice, match="CPU"):
        _jax_h.jax_to_np(_GpuJaxArray())


def test_numba_c_strides_are_numbas() -> None:
    api_util = pytest.importorskip("numba.cuda.api_util")
    for shape in [(3, 4), (0, 3), (3, 0), (), (5,), (2, 1, 3)]:
        want = api_util.prepare_shape_strides_dtype(shape, None, np.dtype(np.float32), order="C")[1]
        assert _numba_h._c_strides(shape, 4) == tuple(want), shape


def test_a_deleted_jax_array_is_a_clear_error_not_a_crash() -> None:
    # jaxlib's Array.platform() crashes the process on a deleted array (every JAX converter asks
    # is_deleted() first), and so did deleting an array with a view of unarray's own DLPack export
    # alive (the export is of its shard now). In a subprocess, so that a crash fails this test.
    pytest.importorskip("jax")
    # The views made before (one of them in unarray's cache) outlive the deletion and still read.
    code = (
        "import numpy as np, jax, jax.numpy as jnp, unarray as ua\n"
        "for dst in ['numpy', 'torch', 'tensorflow']:\n"
        "    x = jax.device_put(jnp.arange(3.0), jax.devices('cpu')[0])\n"
        "    try:\n"
        "        views = [ua.to(x, dst) for _ in range(3)]\n"
        "    except ua.BackendNotAvailableError:\n"
        "        continue\n"
        "    x.delete()\n"
        "    try:\n"
        "        ua.to(x, dst)\n"
        "    except ua.HandoffError as e:\n"
        "        assert all(np.asarray(v).tolist() == [0.0, 1.0, 2.0] for v in views)\n"
        "        print(dst, e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=str(Path(__file__).resolve().parents[2]))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines and all("ua.to [jax]: this JAX array has been deleted" in ln for ln in lines), done.stdout
    assert lines[0].startswith("numpy ")


def test_jax_dlpack_device_is_the_arrays_own_per_device_and_memory_kind() -> None:
    # The DLPack device is read once per (device, memory kind), found through the array's sharding.
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    _jax_h._JAX_DL_DEVICE.clear()
    xs = [jnp.ones(3), jnp.zeros((2, 2), jnp.int8), jax.device_put(jnp.ones(2), jax.devices()[-1])]
    for x in xs:
        assert _jax_h.jax_dlpack_device(x) == tuple(x.__dlpack_device__())
    assert set(_jax_h._JAX_DL_DEVICE) == {(x.device, x.sharding.memory_kind) for x in xs}


def test_an_unaligned_torch_bfloat16_tensor_reaches_jax_by_one_copy():
    # NumPy has no bfloat16 of its own: the copy is torch's (Tensor.clone), not the NumPy route.
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    raw = torch.arange(80, dtype=torch.float32).to(torch.bfloat16)
    start = next(i for i in range(1, 40) if (raw.data_ptr() + 2 * i) % 64)
    t = raw[start:start + 32]
    y = ua.to(t, "jax")
    np.testing.assert_array_equal(np.asarray(y, dtype=np.float32), t.float().numpy())
    assert ua.stats()["copies"] == 1 and str(y.dtype) == "bfloat16"


def test_a_large_unaligned_torch_tensor_reaches_jax_by_torchs_own_copy():
    # Above 1 MiB with more than 2 torch threads the copy is Tensor.clone (spread over the threads).
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    threads = torch.get_num_threads()
    raw = torch.randn((1 << 18) + 32)
    start = next(i for i in range(1, 16) if (raw.data_ptr() + 4 * i) % 64)
    t = raw[start:start + (1 << 18) + 8]  # 1 MiB + 32 bytes
    try:
        torch.set_num_threads(4)
        mid, kind = handoff("torch").copy_for(t, "jax", ua.backend_of(t))
        assert kind == "torch" and mid.data_ptr() % 64 == 0
        y = ua.to(t, "jax")
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_array_equal(np.asarray(y), t.numpy())
    assert ua.stats()["copies"] == 1
    assert handoff("torch").copy_for(t[:1024], "jax", ua.backend_of(t))[1] == "numpy"
