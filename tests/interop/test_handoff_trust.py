"""What a handoff promises, held on every entry point and path: read-only NumPy memory never becomes a
writable torch alias (ua.to, ua.asarray, ua.from_dlpack, in a fresh process), a tf.Variable's snapshot is a
counted copy, a torch tensor requiring grad gets the same answer from the cache as fresh in every grad mode,
a warm route under torch.compile(fullgraph=True) names unarray's reason, a sharded JAX array is gathered
(counted) for every target, ua.from_dlpack returns the producer's library unless told otherwise, and a
handoff-only library's arrays (Numba) are refused by compute ops with the fix.
Both ua.to paths: the subprocess tests run the C and the Python path; the module runs once more with
UNARRAY_PURE_PYTHON=1 (the last test).

With ``--devices gpu`` (tests taking the ``cuda`` fixture; a CPU run deselects them): every CUDA pair among
torch, CuPy, JAX and Numba is zero-copy and stream-ordered, the cache on CUDA, ``ua.explain``'s copy count for
mixed calls. benchmarks/gpu/handoff_gpu.py times the same pairs."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import unarray as ua
from tests._support import TestBackend, assert_close, child_pythonpath
from unarray import _native
from unarray._backends import _handoff, handoff
from unarray._backends.cupy import handoff as _cupy_h
from unarray._backends.numba import handoff as _numba_h
from unarray.interop import _cache, _routes

ROOT = Path(__file__).resolve().parents[2]


def _owned(src: str, dst: str) -> bool:
    return _handoff.owned(handoff(src), handoff(dst))


# -- read-only NumPy memory, every entry point, a fresh process ------------------------------------

READ_ONLY_CHILD = """
import json, sys, tempfile, warnings, numpy as np, torch, unarray as ua
warnings.resetwarnings()
p = tempfile.mktemp()
np.arange(1.0, 17.0, dtype=np.float32).tofile(p)
ro = np.arange(1.0, 17.0, dtype=np.float32); ro.flags.writeable = False
flavours = {"memmap": lambda: np.memmap(p, dtype=np.float32, mode="r"), "view": lambda: ro[2:12:3],
            "bytes_base": lambda: np.ndarray((4,), np.float32, buffer=np.ones(4, np.float32).tobytes()),
            "frombuffer": lambda: np.frombuffer(np.arange(4.0, dtype=np.float32).tobytes(), np.float32)}
calls = {"to": lambda x, **k: ua.to(x, "torch", **k), "asarray": lambda x, **k: ua.asarray(x, backend="torch", **k),
         "from_dlpack": lambda x, **k: ua.from_dlpack(x, backend="torch", **k)}
out = []
warnings.simplefilter("error")  # torch's not-writable warning is an error here
for fname, make in flavours.items():
    for cname, call in calls.items():
        x = make(); keep = np.array(x)
        ua.stats(reset=True)
        t = call(x)
        aliased = t.data_ptr() == x.ctypes.data
        t.fill_(0)
        try:
            call(x, copy=False); refused = False
        except ua.HandoffError:
            refused = True
        out.append([fname, cname, aliased, ua.stats()["copies"], bool(np.array_equal(x, keep)), refused])
warnings.resetwarnings()
print("READ_ONLY", json.dumps(out))
"""


@pytest.fixture(scope="module", params=["0", "1"], ids=["c", "python"])
def child(request: pytest.FixtureRequest) -> dict[str, Any]:
    # One process per ua.to path (the C module, UNARRAY_PURE_PYTHON=1) for the cases that need a fresh
    # process: four JAX CPU devices, a type never looked up, a warm route met by torch.compile.
    for lib in ("jax", "torch", "tensorflow", "dask"):
        pytest.importorskip(lib)
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    code = SHARDED_CHILD + READ_ONLY_CHILD + COMPILE_CHILD
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT,
                       timeout=300, env=dict(env, PYTHONPATH=child_pythonpath(ROOT), TF_CPP_MIN_LOG_LEVEL="3",
                                             UNARRAY_PURE_PYTHON=request.param))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    out: dict[str, Any] = {}
    for line in r.stdout.splitlines():
        key, _, rest = line.partition(" ")
        if key in ("SHARDED", "READ_ONLY", "COMPILE"):
            out[key] = rest
    return out


def test_read_only_numpy_is_one_counted_copy_for_torch_on_every_entry_point(child: dict[str, Any]) -> None:
    rows = json.loads(child["READ_ONLY"])
    assert len(rows) == 12
    for fname, cname, aliased, copies, untouched, refused in rows:
        assert not aliased and copies == 1 and untouched and refused, (fname, cname)


# -- tf.Variable -------------------------------------------------------------------------------

@pytest.mark.parametrize("dst", ["numpy", "jax", "torch"])
def test_tf_variable_snapshot_is_a_counted_copy(dst: str, fresh_handoff: None) -> None:
    tf = pytest.importorskip("tensorflow")
    pytest.importorskip(dst)
    v = tf.Variable(np.arange(1.0, 7.0, dtype=np.float32))
    for step in range(3):
        before = ua.stats()
        out = ua.to(v, dst)
        after = ua.stats()
        assert after["copies"] == before["copies"] + 1 and after["zero_copy"] == before["zero_copy"], step
        assert np.array_equal(np.asarray(out), np.arange(1.0, 7.0) + step)
        v.assign_add(np.ones(6, np.float32))
        assert np.array_equal(np.asarray(out), np.arange(1.0, 7.0) + step)  # a snapshot
    with pytest.raises(ua.HandoffError, match=rf"ua.to \[{dst}\].*copy=False"):
        ua.to(v, dst, copy=False)
    if dst == "torch":
        t = ua.to(v, "torch")
        t.fill_(0)  # the target's own copy
        assert float(tf.reduce_sum(v)) != 0.0


# -- grad modes ------------------------------------------------------------------------------------

def _modes() -> dict[str, Any]:
    torch = pytest.importorskip("torch")
    return {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference": torch.inference_mode}


def _answer(x: Any, dst: str) -> str:
    try:
        out = ua.to(x, dst)
    except ua.HandoffError as e:
        assert "requires grad" in str(e)
        return "refused"
    assert np.array_equal(np.asarray(out), np.arange(1.0, 7.0))
    return "ok"


@pytest.mark.parametrize("dst", ["numpy", "jax", "tensorflow"])
@pytest.mark.parametrize("kind", ["plain", "leaf", "gains_grad"])
def test_cached_answers_equal_fresh_ones_in_every_grad_mode(dst: str, kind: str) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip(dst)
    modes = _modes()
    for first in modes:
        for then in modes:
            _cache.clear()
            x = torch.arange(1.0, 7.0, requires_grad=kind == "leaf")
            with modes[first]():
                for _ in range(3):  # stored on the second, served on the third
                    _answer(x, dst)
            if kind == "gains_grad":
                x.requires_grad_(True)
            with modes[then]():
                got = [_answer(x, dst) for _ in range(2)]
            want = "refused" if x.requires_grad and then == "grad" else "ok"
            assert got == [want, want], (first, then)
    assert torch.is_grad_enabled()


# -- torch.compile(fullgraph=True), warm route ---------------------------------------------------

COMPILE_CHILD = """
t = torch.arange(8.0)
for _ in range(3):
    ua.to(t, "jax")  # the route warm, the tensor cached
try:
    torch.compile(lambda x: ua.to(x, "jax"), fullgraph=True)(t)
    print("COMPILE no error")
except Exception as e:
    print("COMPILE", type(e).__name__, "|", str(e).replace("\\n", " "))
"""


def test_warm_route_under_fullgraph_names_unarrays_reason(child: dict[str, Any]) -> None:
    line = child["COMPILE"]
    assert line != "no error"
    assert "Data pointer" not in line
    assert "unarray: ua.to hands the tensor to another library" in line


# -- sharded JAX arrays (4 CPU devices, in a subprocess) -------------------------------------------

SHARDED_CHILD = """
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ["JAX_PLATFORMS"] = "cpu"
import numpy as np, jax, jax.numpy as jnp, torch, tensorflow as tf, unarray as ua
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("x",))
a = (np.arange(32.0, dtype=np.float32) * 1.5 + 1).reshape(8, 4)
arrays = {"sharded": jax.device_put(a, NamedSharding(mesh, P("x"))),
          "replicated": jax.device_put(a, NamedSharding(mesh, P()))}
out = []
for name, x in arrays.items():
    for dst in ("numpy", "torch", "tensorflow", "dask"):
        ua.stats(reset=True)
        y = ua.to(x, dst)
        got = np.asarray(y.compute() if dst == "dask" else y)
        copies = ua.stats()["copies"]
        try:
            ua.to(x, dst, copy=False); refused = False
        except ua.HandoffError as e:
            refused = "sharded" in str(e) or "immutable" in str(e)
        out.append([name, dst, bool(np.array_equal(got, a)), copies, refused])
print("SHARDED", json.dumps(out))
"""


def test_sharded_jax_is_gathered_and_counted_for_every_target(child: dict[str, Any]) -> None:
    rows = {(n, d): rest for n, d, *rest in json.loads(child["SHARDED"])}
    for (name, dst), (equal, copies, refused) in rows.items():
        assert equal, (name, dst)
        # a gather (sharded) or the target's own copy of an immutable source (torch) is one counted copy,
        # refused under copy=False; a replicated array's one-device copy aliases for the others
        copy_case = name == "sharded" or dst == "torch"
        assert copies == int(copy_case), (name, dst, copies)
        assert refused == copy_case, (name, dst)


# -- from_dlpack -------------------------------------------------------------------------------

def _producers() -> dict[str, Any]:
    out: dict[str, Any] = {"numpy": lambda: np.arange(1.0, 5.0, dtype=np.float32)}
    with contextlib.suppress(ImportError):
        import torch

        out["torch"] = lambda: torch.arange(1.0, 5.0)
    with contextlib.suppress(ImportError):
        import jax
        import jax.numpy as jnp

        out["jax"] = lambda: jax.device_put(jnp.arange(1.0, 5.0, dtype=jnp.float32), jax.devices("cpu")[0])
    with contextlib.suppress(ImportError):
        import tensorflow as tf

        out["tensorflow"] = lambda: tf.constant([1.0, 2.0, 3.0, 4.0])
    return out


@pytest.mark.parametrize("src", ["numpy", "torch", "jax", "tensorflow"])
@pytest.mark.parametrize("copy", [None, True, False])
def test_from_dlpack_keeps_the_producers_library(src: str, copy: bool | None) -> None:
    make = _producers().get(src)
    if make is None:
        pytest.skip(f"{src} is not installed")
    x = make()
    before = ua.stats()["copies"]
    with ua.use("numpy"):  # the default backend does not override the producer's library
        out = ua.from_dlpack(x, copy=copy)
    assert ua.backend_of(out) == src
    assert np.array_equal(np.asarray(out), np.arange(1.0, 5.0))
    assert ua.stats()["copies"] == before + (1 if copy else 0)
    if copy:
        assert ua.to(out, "numpy") is not None and out is not x
    other = "numpy" if src != "numpy" else "torch" if "torch" in _producers() else None
    if other is not None and copy is not False:
        assert ua.backend_of(ua.from_dlpack(x, backend=other, copy=copy)) == other  # backend= honoured


# -- a handoff-only library's arrays are handed over, never computed on -------------------------------------


@pytest.mark.handoff
@pytest.mark.parametrize("op", ["add", "sum", "matmul"])
def test_a_compute_op_is_answered_or_refused_as_the_library_declares(backend: TestBackend, op: str) -> None:
    # A handoff-only library (Numba's CUDA arrays, in a --devices gpu run) refuses compute ops with the typed
    # error naming the op, the library and the fix (hand the array to CuPy or torch); every other
    # backend computes it.
    from unarray._backends import LIBRARIES

    a = np.random.default_rng(5).uniform(0.5, 2.0, (3, 3)).astype(np.float32)
    x = backend.asarray(a)
    call = {"add": lambda: ua.add(x, x), "sum": lambda: ua.sum(x), "matmul": lambda: ua.matmul(x, x)}[op]
    if LIBRARIES[backend.name].handoff_only:
        with pytest.raises(ua.UnsupportedError, match=rf"ua\.{op} \[{backend.name}\].*ua\.to\(x, 'cupy'\)") as e:
            call()
        assert isinstance(e.value, NotImplementedError)
        np.testing.assert_array_equal(backend.to_numpy(x), a)  # the input is untouched
        return
    want = {"add": a.astype(np.float64) * 2, "sum": a.astype(np.float64).sum(),
            "matmul": a.astype(np.float64) @ a.astype(np.float64)}[op]
    got = call()
    assert backend.is_native(got)
    assert_close(backend.to_numpy(got), want, "float32", n_terms=9 if op == "sum" else 3, scale=4.0)


# -- CUDA (--devices gpu): every pair among torch, CuPy, JAX and Numba is zero-copy and stream-ordered ------
# (benchmarks/gpu/handoff_gpu.py times the same pairs.)

LIBS = ("torch", "cupy", "jax", "numba")


@pytest.fixture
def libs(cuda: Callable[[str], Any], fresh_handoff: None) -> dict[str, Any]:
    """torch, CuPy, JAX and Numba on CUDA (a ``--devices gpu`` run), with an empty handoff cache and zeroed
    ``ua.stats()``."""
    mods = {name: cuda(name) for name in LIBS}
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


@pytest.mark.parametrize(("src", "dst"), [p for p in itertools.permutations(LIBS, 2) if _owned(*p)])
def test_an_immutable_jax_array_is_copied_for_writable_consumers(libs, src, dst):
    # torch, CuPy and Numba arrays cannot be read-only: a handoff of a JAX array is one copy on the
    # consumer's stream (never cached), so that a write into it leaves the JAX array as it was.
    a = np.random.default_rng(7).standard_normal((64, 48)).astype(np.float32)
    x = make(src, a)
    y1, y2 = ua.to(x, dst), ua.to(x, dst)
    assert len({handoff(dst).data_ptr(y1), handoff(dst).data_ptr(y2), handoff(src).data_ptr(x)}) == 3
    s = ua.stats()
    assert (s["copies"], s["bytes_copied"], s["zero_copy"], s["cache_hits"]) == (2, 2 * a.nbytes, 0, 0)
    libs["cupy"].asarray(y1)[...] = 0  # a write through the consumer's array
    np.testing.assert_array_equal(host(src, x), a)
    np.testing.assert_array_equal(host(dst, y2), a)
    with pytest.raises(ua.HandoffError, match="immutable"):
        ua.to(x, dst, copy=False)


def test_a_cached_view_the_caller_resized_is_not_served_again(libs):
    torch, cupy = libs["torch"], libs["cupy"]
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


@pytest.mark.parametrize(("src", "dst"), [p for p in itertools.permutations(LIBS, 2) if not _owned(*p)])
def test_every_cuda_pair_is_zero_copy_and_cached(libs, src, dst):
    a = np.random.default_rng(7).standard_normal((64, 48)).astype(np.float32)
    x = make(src, a)
    y = ua.to(x, dst)
    assert ua.backend_of(y) == dst
    assert handoff(dst).data_ptr(y) == handoff(src).data_ptr(x)
    np.testing.assert_array_equal(host(dst, y), a)
    s = ua.stats()
    assert (s["copies"], s["bytes_copied"], s["zero_copy"]) == (0, 0, 1)
    y2 = ua.to(x, dst)  # the second handoff stores its view; the third is a hit
    assert handoff(dst).data_ptr(y2) == handoff(src).data_ptr(x)
    assert ua.to(x, dst) is y2 and ua.stats()["cache_hits"] == 1


@pytest.mark.parametrize("dst", ["cupy", "jax", "numba"])
def test_consumer_sees_a_side_stream_write_every_time(libs, dst):
    torch, cupy = libs["torch"], libs["cupy"]
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
def test_cache_hit_orders_a_later_write_too(libs, dst):
    # From the third handoff on, cache hits; torch writes again on a side stream before each one. The
    # hit's stream check (in C where built) must make the consumer wait, every time.
    torch, cupy = libs["torch"], libs["cupy"]
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


def test_a_hit_reads_cupys_current_stream_through_its_exported_reader(libs):
    # The C route reads CuPy's current stream with CuPy's exported get_stream_ptr (probed: it must be
    # taken here). A hit while CuPy works on its own stream waits (counted); where CuPy's stream is
    # torch's own, nothing to wait for; back on the default streams, none either.
    torch, cupy = libs["torch"], libs["cupy"]

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


def test_torch_sees_finished_jax_work(libs):
    # JAX dispatches asynchronously: the export names torch's stream, which must wait for the matmul.
    jax = libs["jax"]
    a = jax.device_put(np.ones((2048, 2048), np.float32), jax.devices("gpu")[0])
    for i in range(10):
        _cache.clear()
        t = ua.to((a * float(i + 1)) @ a, "torch")
        assert float(t[-1, -1]) == 2048.0 * (i + 1)


def test_numba_arrays_built_directly_match_numbas_own_import(libs):
    # numba_array builds the device array itself (context and pointer type found once); it must equal
    # what numba.cuda.from_cuda_array_interface gives for the same fields, on every layout.
    torch, numba_cuda = libs["torch"], libs["numba"].cuda
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


def test_numba_sees_finished_jax_work(libs):
    # JAX's own CUDA array interface does not wait for pending work; the handoff must. x is still being
    # computed (a chain of matmuls, tens of ms) when it is handed over and read on Numba's stream.
    jax = libs["jax"]
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
def test_deleting_a_jax_array_with_views_alive(libs, dst):
    # The views (one in unarray's cache) keep the buffer; deleting the JAX array neither aborts the
    # process (XLA's hold check, when the export was of the array itself) nor lets it be handed over again.
    jax = libs["jax"]
    x = jax.device_put(np.arange(6.0, dtype=np.float32), jax.devices("gpu")[0])
    views = [ua.to(x, dst) for _ in range(3)]
    x.delete()
    with pytest.raises(ua.HandoffError, match="deleted"):
        ua.to(x, dst)
    for v in views:
        np.testing.assert_array_equal(host(dst, v), np.arange(6.0, dtype=np.float32))


@pytest.mark.parametrize(("lead", "other"), [("torch", "cupy"), ("cupy", "torch"), ("jax", "torch"), ("torch", "jax")])
def test_explain_counts_the_copies_a_cuda_mixed_call_makes(libs, lead, other):
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


def test_explain_refuses_a_mixed_call_across_devices_as_the_call_does(libs):
    torch, cupy = libs["torch"], libs["cupy"]
    x, y = torch.ones(3), cupy.ones(3, dtype=cupy.float32)
    with pytest.raises(ua.DeviceMismatchError, match="cuda:0"):
        ua.explain("add", x, y)
    with pytest.raises(ua.DeviceMismatchError, match="cuda:0"):
        ua.add(x, y)


@pytest.mark.handoff
@pytest.mark.parametrize("dst", ["numpy", "tensorflow"])
def test_to_the_host_with_device_cpu_is_one_counted_copy_of_the_consumers_type(libs, backend, dst):
    # A GPU array asked for on the host: the consumer's own type, on the CPU, one copy (a torch or JAX
    # source used to come back as a compact copy of itself, still on the GPU). The sources are the backend
    # fixture's CUDA arrays, Numba's included.
    if dst == "tensorflow":
        pytest.importorskip("tensorflow")
    a = np.random.default_rng(11).standard_normal((16, 8)).astype(np.float32)
    y = ua.to(backend.asarray(a), dst, device="cpu")
    assert ua.backend_of(y) == dst and ua.device(y).kind == "cpu"
    np.testing.assert_array_equal(np.asarray(y), a)
    assert ua.stats()["copies"] == 1


def test_torch_bfloat16_reaches_cupy_as_bfloat16_not_raw_bytes(libs):
    # torch's CUDA array interface names bfloat16 "<V2": a plain cupy.asarray gives void bytes CuPy cannot
    # compute with. The handoff (and attention's torch route back to CuPy) must give CuPy's bfloat16.
    torch, cupy = libs["torch"], libs["cupy"]
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


def test_module_passes_on_the_python_path() -> None:
    if _native.pure_python_requested():
        pytest.skip("already on the Python path")
    env = dict(os.environ, UNARRAY_PURE_PYTHON="1", PYTHONPATH=child_pythonpath(ROOT))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
           "grad_mode or tf_variable or from_dlpack"]  # (the child cases run both paths themselves)
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
