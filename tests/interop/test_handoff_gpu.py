"""CUDA handoff (--devices gpu): every pair among torch, CuPy, JAX and Numba is zero-copy and
stream-ordered. The benchmark (benchmarks/gpu/handoff_gpu.py) times the same pairs."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

import unarray as ua
from unarray._backends.cupy import handoff as _cupy_h
from unarray._backends.numba import handoff as _numba_h
from unarray.interop import _cache, _paths, _routes

LIBS = ("torch", "cupy", "jax", "numba")


@pytest.fixture(scope="module")
def cuda(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.config.getoption("--devices") != "gpu":
        pytest.skip("CUDA handoff: run with --devices gpu")
    mods = {}
    for name in LIBS:
        mods[name] = pytest.importorskip(name)
    if not mods["torch"].cuda.is_available():
        pytest.skip("no CUDA device visible to torch")
    np.row_stack = np.vstack  # type: ignore[attr-defined]  # numba-cuda on NumPy 2.5 compiles with it
    return mods


def make(lib: str, a: np.ndarray) -> Any:
    import cupy
    import jax
    import torch
    from numba import cuda

    if lib == "torch":
        return torch.from_numpy(a).to("cuda")
    if lib == "cupy":
        return cupy.asarray(a)
    if lib == "jax":
        return jax.device_put(a, jax.devices("gpu")[0])
    return cuda.to_device(a)


def host(lib: str, x: Any) -> np.ndarray:
    if lib == "torch":
        return x.cpu().numpy()
    if lib == "cupy":
        return x.get()
    if lib == "numba":
        return x.copy_to_host()
    return np.asarray(x)


# An empty handoff cache and zeroed ua.stats() around each test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("fresh_handoff")


@pytest.mark.parametrize(("src", "dst"), [p for p in itertools.permutations(LIBS, 2) if _paths.owned(*p)])
def test_an_immutable_jax_array_is_copied_for_writable_consumers(cuda, src, dst):
    # torch, CuPy and Numba arrays cannot be read-only: a handoff of a JAX array is one copy on the
    # consumer's stream (never cached), so that a write into it leaves the JAX array as it was.
    a = np.random.default_rng(7).standard_normal((64, 48)).astype(np.float32)
    x = make(src, a)
    y1, y2 = ua.to(x, dst), ua.to(x, dst)
    assert len({_paths.data_ptr(dst, y1), _paths.data_ptr(dst, y2), _paths.data_ptr(src, x)}) == 3
    s = ua.stats()
    assert (s["copies"], s["bytes_copied"], s["zero_copy"], s["cache_hits"]) == (2, 2 * a.nbytes, 0, 0)
    cuda["cupy"].asarray(y1)[...] = 0  # a write through the consumer's array
    np.testing.assert_array_equal(host(src, x), a)
    np.testing.assert_array_equal(host(dst, y2), a)
    with pytest.raises(ua.HandoffError, match="immutable"):
        ua.to(x, dst, copy=False)


def test_a_cached_view_the_caller_resized_is_not_served_again(cuda):
    torch, cupy = cuda["torch"], cuda["cupy"]
    c = cupy.arange(16, dtype=cupy.float32)
    ua.to(c, "torch")
    t1 = ua.to(c, "torch")  # stored
    t1.resize_(2, 2)  # the caller changed the view unarray handed out: it must not come back
    t2 = ua.to(c, "torch")
    assert t2 is not t1 and tuple(t2.shape) == (16,) and isinstance(t2, torch.Tensor)
    m = cupy.arange(16, dtype=cupy.float32).reshape(4, 4)
    ua.to(m, "torch")
    v = ua.to(m, "torch")
    assert ua.to(m, "torch") is v
    v.data = v.data.t()  # metadata changed through .data, which keeps the pointer: checked in C too
    w = ua.to(m, "torch")
    assert w is not v and np.array_equal(w.cpu().numpy(), m.get())


@pytest.mark.parametrize(("src", "dst"), [p for p in itertools.permutations(LIBS, 2) if not _paths.owned(*p)])
def test_every_cuda_pair_is_zero_copy_and_cached(cuda, src, dst):
    a = np.random.default_rng(7).standard_normal((64, 48)).astype(np.float32)
    x = make(src, a)
    y = ua.to(x, dst)
    assert ua.backend_of(y) == dst
    assert _paths.data_ptr(dst, y) == _paths.data_ptr(src, x)
    np.testing.assert_array_equal(host(dst, y), a)
    s = ua.stats()
    assert (s["copies"], s["bytes_copied"], s["zero_copy"]) == (0, 0, 1)
    y2 = ua.to(x, dst)  # the second handoff stores its view; the third is a hit
    assert _paths.data_ptr(dst, y2) == _paths.data_ptr(src, x)
    assert ua.to(x, dst) is y2 and ua.stats()["cache_hits"] == 1


@pytest.mark.parametrize("dst", ["cupy", "jax", "numba"])
def test_consumer_sees_a_side_stream_write_every_time(cuda, dst):
    torch, cupy = cuda["torch"], cuda["cupy"]
    stale = 0
    for i in range(20):
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            t = torch.empty(2048, 2048, device="cuda")
            torch.cuda._sleep(1_000_000)  # GPU time before the write
            t.fill_(float(i + 1))
            _cache.clear()
            y = ua.to(t, dst)
        if dst == "cupy":
            v = float(y[-1, -1].get())
        elif dst == "jax":
            v = float(np.asarray(y[-1, -1]))
        else:
            v = float(cupy.asarray(y)[-1, -1].get())
        stale += v != float(i + 1)
    assert stale == 0


@pytest.mark.parametrize("dst", ["cupy", "numba"])
def test_cache_hit_orders_a_later_write_too(cuda, dst):
    # From the third handoff on, cache hits; torch writes again on a side stream before each one. The
    # hit's stream check (in C where built) must make the consumer wait, every time.
    torch, cupy = cuda["torch"], cuda["cupy"]
    t = torch.zeros(2048, 2048, device="cuda")
    ua.to(t, dst)
    first = ua.to(t, dst)  # stored: the next handoffs are hits
    syncs = ua.stats()["syncs"]
    stale = 0
    for i in range(20):
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(1_000_000)
            t.fill_(float(i + 5))
            again = ua.to(t, dst)
        assert again is first
        v = again[-1, -1].get() if dst == "cupy" else cupy.asarray(again)[-1, -1].get()
        stale += float(v) != float(i + 5)
    assert stale == 0
    assert ua.stats()["syncs"] - syncs == 20  # one counted stream wait per hit (the streams differed)


def test_a_hit_reads_cupys_current_stream_through_its_exported_reader(cuda):
    # The C route reads CuPy's current stream with CuPy's exported get_stream_ptr (probed: it must be
    # taken here). A hit while CuPy works on its own stream waits (counted); where CuPy's stream is
    # torch's own, nothing to wait for; back on the default streams, none either.
    torch, cupy = cuda["torch"], cuda["cupy"]

    if _routes.speedups is None:
        pytest.skip("the C route is not built (UNARRAY_PURE_PYTHON=1)")
    reader = _cupy_h.cupy_stream_reader(_routes.speedups)
    assert reader is not None
    read = _routes.speedups.stream_of
    assert read(reader, 0) == cupy.cuda.get_current_stream(0).ptr
    t = torch.ones(256, 256, device="cuda")
    ua.to(t, "cupy")
    view = ua.to(t, "cupy")  # stored: the next handoffs are hits
    syncs = ua.stats()["syncs"]
    own = cupy.cuda.Stream(non_blocking=True)
    with own:
        assert read(reader, 0) == own.ptr
        assert ua.to(t, "cupy") is view
    assert ua.stats()["syncs"] == syncs + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # CuPy 14 deprecates ExternalStream
        shared = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    with shared:
        assert ua.to(t, "cupy") is view
    assert ua.to(t, "cupy") is view
    assert ua.stats()["syncs"] == syncs + 1 and ua.stats()["cache_hits"] == 3


def test_torch_sees_finished_jax_work(cuda):
    # JAX dispatches asynchronously: the export names torch's stream, which must wait for the matmul.
    jax = cuda["jax"]
    a = jax.device_put(np.ones((2048, 2048), np.float32), jax.devices("gpu")[0])
    for i in range(10):
        _cache.clear()
        t = ua.to((a * float(i + 1)) @ a, "torch")
        assert float(t[-1, -1]) == 2048.0 * (i + 1)


def test_numba_arrays_built_directly_match_numbas_own_import(cuda):
    # numba_array builds the device array itself (context and pointer type found once); it must equal
    # what numba.cuda.from_cuda_array_interface gives for the same fields, on every layout.
    torch, numba_cuda = cuda["torch"], cuda["numba"].cuda
    rng = np.random.default_rng(7)
    base = torch.from_numpy(rng.standard_normal((6, 10)).astype(np.float32)).to("cuda")
    cases = [base, base[:, ::3], base.t(), base[2, 4], base[:0], base.to(torch.int8), base.to(torch.float16),
             base.to(torch.complex64)[1:, 2:]]
    for x in cases:
        y = ua.to(x, "numba")
        ref = numba_cuda.as_cuda_array(x)
        assert y.device_ctypes_pointer.value == ref.device_ctypes_pointer.value
        assert (y.shape, y.strides, y.dtype, y.size) == (ref.shape, ref.strides, ref.dtype, ref.size)
        assert y.is_c_contiguous() == ref.is_c_contiguous() and y.is_f_contiguous() == ref.is_f_contiguous()
        np.testing.assert_array_equal(y.copy_to_host(), ref.copy_to_host())
    assert _numba_h._NUMBA_MAKERS[0] is not None  # the probe passed: the direct build is what ran


def test_numba_sees_finished_jax_work(cuda):
    # JAX's own CUDA array interface does not wait for pending work; the handoff must. x is still being
    # computed (a chain of matmuls, tens of ms) when it is handed over and read on Numba's stream.
    jax = cuda["jax"]
    jnp = jax.numpy
    gpu = jax.devices("gpu")[0]
    big = jax.device_put(np.full((2048, 2048), 1 / 2048, np.float32), gpu)  # big @ big == big

    @jax.jit
    def late(v, m):
        m = jax.lax.fori_loop(0, 40, lambda i, m: m @ big, m)
        return v + 0.0 * m[0, 0]

    base = np.random.default_rng(3).standard_normal((512, 512)).astype(np.float32)
    late(jnp.asarray(base), big).block_until_ready()  # compiled before the timed part
    stale = 0
    for i in range(10):
        _cache.clear()
        want = base * (i + 1)
        x = late(jax.device_put(want, gpu), big)
        stale += not np.array_equal(ua.to(x, "numba").copy_to_host(), want)
    assert stale == 0


@pytest.mark.parametrize("dst", ["torch", "cupy", "numba"])
def test_deleting_a_jax_array_with_views_alive(cuda, dst):
    # The views (one in unarray's cache) keep the buffer; deleting the JAX array neither aborts the
    # process (XLA's hold check, when the export was of the array itself) nor lets it be handed over again.
    jax = cuda["jax"]
    x = jax.device_put(np.arange(6.0, dtype=np.float32), jax.devices("gpu")[0])
    views = [ua.to(x, dst) for _ in range(3)]
    x.delete()
    with pytest.raises(ua.HandoffError, match="deleted"):
        ua.to(x, dst)
    for v in views:
        np.testing.assert_array_equal(host(dst, v), np.arange(6.0, dtype=np.float32))


@pytest.mark.parametrize(("lead", "other"), [("torch", "cupy"), ("cupy", "torch"), ("jax", "torch"), ("torch", "jax")])
def test_explain_counts_the_copies_a_cuda_mixed_call_makes(cuda, lead, other):
    # A compact operand is zero-copy for every consumer; a strided one is copied for a consumer that
    # needs compact buffers (JAX). ua.explain says so before the call, and the call agrees.
    a = np.random.default_rng(7).standard_normal((6, 8), dtype=np.float32)
    x = make(lead, np.ones((6, 4), np.float32))
    for y in (make(other, a[:, :4].copy()), make(other, a)[:, ::2]):
        before = ua.stats()
        e = ua.explain("add", x, y)
        assert ua.stats()["handoffs"] == before["handoffs"] and e.device == ua.device(x)
        ua.stats(reset=True)
        r = ua.add(x, y)
        assert ua.stats()["copies"] == e.copies and ua.stats()["bytes_copied"] == 96 * e.copies
        np.testing.assert_allclose(host(lead, r), host(other, y) + 1, rtol=1e-6)


def test_explain_refuses_a_mixed_call_across_devices_as_the_call_does(cuda):
    torch, cupy = cuda["torch"], cuda["cupy"]
    x, y = torch.ones(3), cupy.ones(3, dtype=cupy.float32)
    with pytest.raises(ua.DeviceMismatchError, match="cuda:0"):
        ua.explain("add", x, y)
    with pytest.raises(ua.DeviceMismatchError, match="cuda:0"):
        ua.add(x, y)


@pytest.mark.parametrize("src", LIBS)
@pytest.mark.parametrize("dst", ["numpy", "tensorflow"])
def test_to_the_host_with_device_cpu_is_one_counted_copy_of_the_consumers_type(cuda, src, dst):
    # A GPU array asked for on the host: the consumer's own type, on the CPU, one copy (a torch or JAX
    # source used to come back as a compact copy of itself, still on the GPU).
    if dst == "tensorflow":
        pytest.importorskip("tensorflow")
    a = np.random.default_rng(11).standard_normal((16, 8)).astype(np.float32)
    y = ua.to(make(src, a), dst, device="cpu")
    assert ua.backend_of(y) == dst and ua.device(y).kind == "cpu"
    np.testing.assert_array_equal(np.asarray(y), a)
    assert ua.stats()["copies"] == 1


def test_torch_bfloat16_reaches_cupy_as_bfloat16_not_raw_bytes(cuda):
    # torch's CUDA array interface names bfloat16 "<V2": a plain cupy.asarray gives void bytes CuPy cannot
    # compute with. The handoff (and attention's torch route back to CuPy) must give CuPy's bfloat16.
    torch, cupy = cuda["torch"], cuda["cupy"]
    base = torch.randn(6, 8, device="cuda").to(torch.bfloat16)
    for t in (base, base.t()):  # compact and strided
        c = ua.to(t, "cupy")
        assert c.dtype == cupy.dtype("bfloat16"), c.dtype
        assert np.array_equal(c.astype(cupy.float32).get(), t.float().cpu().numpy())
    q = cupy.asarray(torch.randn(1, 2, 16, 8, device="cuda").to(torch.bfloat16).float().cpu().numpy()).astype(
        cupy.dtype("bfloat16"))
    out = ua.scaled_dot_product_attention(q, q, q, is_causal=True)  # torch imported: torch's kernels, back to CuPy
    assert "torch" in ua.explain("scaled_dot_product_attention", q, q, q, is_causal=True).kernel
    assert out.dtype == cupy.dtype("bfloat16") and cupy.isfinite(out.astype(cupy.float32)).all()
