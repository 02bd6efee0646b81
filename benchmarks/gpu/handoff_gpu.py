"""What does handing an array between CUDA libraries cost through ``ua.to``, and does the consumer see finished data?

CUDA handoff matrix on a GPU machine: python benchmarks/gpu/handoff_gpu.py

Sections (each in try/except; an error is recorded and the rest runs):
  matrix  every pair among torch, CuPy, JAX, Numba, in PASSES passes (default 5; each figure is the fastest
          pass's, the slowest pass's beside it): unarray first (empty cache), unarray repeated
          (cache hit), every native candidate path, timed in turns (interleaved_us); median host time
          per call (the GPU is idle at the start of each call and synchronized after it, outside the
          timed region), and back to back; the repeated handoff also in loops of LOOP calls;
          zero-copy checked by data pointers and ua.stats()["bytes_copied"].
  stream  a long kernel writes on a side stream, the array is handed over and read on the consumer's
          stream, 200 times per pair: the reader must see the finished data every time.
  loop    1,000 handoffs of one torch tensor to Numba (+ a trivial Numba kernel): unarray cached view vs
          converting inside the loop vs converting once outside.
Writes $OUT/handoff_gpu.json and $OUT/handoff_gpu.md (OUT defaults to ./out) and prints the table last.
"""

from __future__ import annotations

import json
import os
import platform
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

np.row_stack = np.vstack  # type: ignore[attr-defined]  # numba-cuda needs it before compiling
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from host_speed import jiffies, shares  # noqa: E402 (this script's folder, first on sys.path)

OUT = Path(os.environ.get("OUT", "out"))
RESULT: dict[str, Any] = {"errors": {}}
N = 1024


def section(name: str):
    def deco(fn):
        def run():
            try:
                RESULT[name] = fn()
            except Exception:
                RESULT["errors"][name] = traceback.format_exc()
                print(f"[{name}] failed:\n{RESULT['errors'][name]}", flush=True)
        return run
    return deco


def sync() -> None:
    import torch

    torch.cuda.synchronize()


def median_us(fn, n=500, before=None, synced=True) -> float:
    """Median host time per call. synced: the GPU is idle before each call (a device synchronize,
    outside the timed region); else calls run back to back, with a synchronize every 50 calls."""
    return interleaved_us({"fn": (fn, before)}, n, rounds=1, synced=synced)["fn"]


def interleaved_us(cases: dict[str, tuple[Any, Any]], n: int = 500, rounds: int = 10,
                   synced: bool = True, spread: dict[str, list[float]] | None = None) -> dict[str, float]:
    """median_us for several cases (name -> (fn, before)) timed in turns: ``rounds`` rounds of
    ``n // rounds`` calls each, in a shuffled order per round, so that the host's slow spells fall
    on all of them alike."""
    rng = random.Random(0)
    per = max(1, n // rounds)
    samples: dict[str, list[int]] = {k: [] for k in cases}
    for fn, before in cases.values():
        for _ in range(20):
            if before:
                before()
            fn()
    sync()
    names = list(cases)
    for _ in range(rounds):
        rng.shuffle(names)
        for k in names:
            fn, before = cases[k]
            for i in range(per):
                if before:
                    before()
                if synced or i % 50 == 0:
                    sync()
                t0 = time.perf_counter_ns()
                fn()
                samples[k].append(time.perf_counter_ns() - t0)
        sync()
    out = {}
    for k, ts in samples.items():
        ts.sort()
        out[k] = ts[len(ts) // 2] / 1000
        if spread is not None:  # 10th and 90th percentiles
            spread[k] = [ts[len(ts) // 10] / 1000, ts[len(ts) * 9 // 10] / 1000]
    return out


def host_state() -> tuple[float, list[int], float]:
    """(wall time, /proc/stat's machine-wide "cpu" jiffies, this process's CPU time): what host() compares."""
    try:
        j = jiffies()
    except OSError:
        j = []
    return time.monotonic(), j, time.process_time()


def host(before: tuple[float, list[int], float]) -> dict[str, Any]:
    """What the machine did since host_state() (a row's timing): the share of all CPUs' time stolen by
    the hypervisor (steal), spent busy (user, system...), this process's CPU time over the wall time
    (own), and the cpu MHz the kernel reports now. A slow spell with steal or busy neighbours is the
    host's; one without them is not explained here."""
    t0, j0, p0 = before
    t1, j1, p1 = host_state()
    out: dict[str, Any] = {"monotonic": [round(t0, 1), round(t1, 1)],  # host_speed.py's clock too
                           "own_cpu_pct": round(100 * (p1 - p0) / max(t1 - t0, 1e-9), 1)}
    if len(j0) == len(j1) == 8:
        out.update(shares(j0, j1))
    try:
        mhz = [float(line.split(":")[1]) for line in open("/proc/cpuinfo") if line.startswith("cpu MHz")]
        out["cpu_mhz_mean"] = round(sum(mhz) / len(mhz)) if mhz else None
    except OSError:
        pass
    return out


LOOP = 100


def looped(f: Any, a: Any, b: Any) -> Any:
    """One sample of LOOP calls f(a, b) in a row (divided by LOOP when reported): a call's cost
    without the timer's own, which interleaved_us pays around every single call."""
    r = range(LOOP)

    def run() -> None:
        for _ in r:
            f(a, b)

    return run


def sources() -> dict[str, Any]:
    import cupy
    import jax.numpy as jnp
    import torch
    from numba import cuda

    t = torch.randn(N, N, device="cuda")
    return {"torch": t, "cupy": cupy.asarray(t).copy(), "jax": jnp.asarray(t.cpu().numpy()),
            "numba": cuda.to_device(t.cpu().numpy())}


def candidates() -> dict[tuple[str, str], dict[str, Any]]:
    import cupy
    import jax.numpy as jnp
    import torch
    from numba import cuda

    return {
        ("torch", "cupy"): {"cupy.asarray (CAI)": cupy.asarray, "cupy.from_dlpack": cupy.from_dlpack},
        ("cupy", "torch"): {"torch.from_dlpack": torch.from_dlpack,
                            "torch.as_tensor (CAI)": lambda x: torch.as_tensor(x, device="cuda")},
        ("torch", "jax"): {"jnp.from_dlpack": jnp.from_dlpack},
        ("cupy", "jax"): {"jnp.from_dlpack": jnp.from_dlpack},
        ("jax", "torch"): {"torch.from_dlpack": torch.from_dlpack},
        ("jax", "cupy"): {"cupy.from_dlpack": cupy.from_dlpack},
        ("torch", "numba"): {"cuda.as_cuda_array": cuda.as_cuda_array},
        ("cupy", "numba"): {"cuda.as_cuda_array": cuda.as_cuda_array},
        ("jax", "numba"): {"as_cuda_array(cupy.from_dlpack)": lambda x: cuda.as_cuda_array(cupy.from_dlpack(x))},
        ("numba", "torch"): {"torch.as_tensor (CAI)": lambda x: torch.as_tensor(x, device="cuda")},
        ("numba", "cupy"): {"cupy.asarray (CAI)": cupy.asarray},
        ("numba", "jax"): {"jnp.from_dlpack(cupy.asarray)": lambda x: jnp.from_dlpack(cupy.asarray(x))},
    }


PASSES = int(os.environ.get("PASSES", "5"))


def measure(s: str, d: str, x: Any, natives: dict[str, Any]) -> dict[str, Any]:
    """One pass over one pair: every case timed in turns, synced and back to back (interleaved_us)."""
    import unarray as ua
    from unarray._backends import handoff
    from unarray.interop import _cache, _routes

    routes = ua.interop._public._FAST
    row: dict[str, Any] = {"src": s, "dst": d}
    h0 = host_state()
    try:
        ua.stats(reset=True)
        y = ua.to(x, d)
        st = ua.stats()
        row["bytes_copied"] = st["bytes_copied"]
        row["same_pointer"] = handoff(s).data_ptr(x) == handoff(d).data_ptr(y)
        # ua.to bound to a name once, as the native functions are (the cost of looking up ua.<name> on the
        # module is benchmarks/name_lookup.py's question).
        to = ua.to
        cases = {f"native {name}": (lambda f=f: f(x), None) for name, f in natives.items()}
        cases["first"] = (lambda: to(x, d), _cache.clear)
        cases["repeated"] = (lambda: to(x, d), None)
        synced = interleaved_us(cases)
        # The second handoff of an array converts again and stores the view (admission on second sight).
        cases["second"] = (lambda: to(x, d), lambda: (_cache.clear(), to(x, d)))
        cases["repeated loop"] = (looped(ua.to, x, d), None)
        # The host's speed, timed in the same turns: this host's figures against another's.
        cases["dict lookup"] = (lambda: routes.get((type(x), d)), None)
        spread: dict[str, list[float]] = {}
        b2b = interleaved_us(cases, synced=False, spread=spread)
        b2b["repeated loop"] /= LOOP
        spread["repeated loop"] = [v / LOOP for v in spread["repeated loop"]]
        row["b2b_p10_p90_us"] = spread
        row["native_us"] = {name: synced[f"native {name}"] for name in natives}
        row["native_b2b_us"] = {name: b2b[f"native {name}"] for name in natives}
        row["first_us"], row["repeated_us"] = synced["first"], synced["repeated"]
        row["first_b2b_us"], row["repeated_b2b_us"] = b2b["first"], b2b["repeated"]
        row["second_b2b_us"], row["repeated_loop_us"] = b2b["second"], b2b["repeated loop"]
        row["dict_lookup_us"] = b2b["dict lookup"]
        row["path"] = _routes.pair(s, d).convert.__name__
        row["host"] = host(h0)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {e}"
    return row


TIMED = ("first_us", "repeated_us", "first_b2b_us", "repeated_b2b_us", "second_b2b_us", "repeated_loop_us",
         "dict_lookup_us")


def combine(passes: list[dict[str, Any]]) -> dict[str, Any]:
    """A pair's row from its passes: each figure the fastest pass's (timeit's rule: the slower passes
    measure the host's interference, not the code), with the slowest pass's figures beside it."""
    ok = [r for r in passes if "error" not in r]
    if not ok:
        return passes[-1]
    row = dict(ok[-1])
    for k in TIMED:
        row[k] = min(r[k] for r in ok)
        row[f"{k}_slowest"] = max(r[k] for r in ok)
    for k in ("native_us", "native_b2b_us"):
        row[k] = {name: min(r[k][name] for r in ok) for name in ok[0][k]}
        row[f"{k}_slowest"] = {name: max(r[k][name] for r in ok) for name in ok[0][k]}
    row["best_native"] = min(row["native_us"], key=row["native_us"].get)
    row["bytes_copied"] = max(r["bytes_copied"] for r in ok)
    row["same_pointer"] = all(r["same_pointer"] for r in ok)
    row["passes"] = passes
    return row


@section("matrix")
def matrix() -> list[dict[str, Any]]:
    """PASSES passes over every pair (and the first pair again at the end of each pass: whether being
    timed first costs it anything); each pair's row is the fastest of its passes (combine)."""
    import torch

    import unarray as ua

    src = sources()
    pairs = candidates()
    # The same torch -> CuPy hit and a dict lookup, in loops, after each pair: whether the host's speed
    # changes between the matrix's rows (host() says what the machine did meanwhile).
    pt = torch.randn(8, 8, device="cuda")
    for _ in range(3):
        ua.to(pt, "cupy")
    probe_cases = {"torch->cupy hit": looped(ua.to, pt, "cupy"),
                   "dict lookup": looped(ua.interop._public._FAST.get, (type(pt), "cupy"), None)}

    def probe() -> dict[str, float]:
        out = {}
        for k, f in probe_cases.items():
            ts = []
            for _ in range(15):
                t0 = time.perf_counter_ns()
                f()
                ts.append(time.perf_counter_ns() - t0)
            out[k] = round(sorted(ts)[len(ts) // 2] / 1000 / LOOP, 4)
        return out

    for (s, d), natives in pairs.items():  # every pair once before any is timed (the first pair is no colder)
        x = src[s]
        for _ in range(20):
            for f in natives.values():
                f(x)
            ua.to(x, d)
    sync()
    order = [*pairs, next(iter(pairs))]
    runs: list[list[dict[str, Any]]] = [[] for _ in order]
    probes = []
    for p in range(PASSES):
        for i, (s, d) in enumerate(order):
            row = measure(s, d, src[s], pairs[(s, d)])
            runs[i].append(row)
            probes.append({"pass": p, "after": f"{s}->{d}", **probe()})
            print(p, {k: row.get(k) for k in ("src", "dst", "repeated_b2b_us", "repeated_loop_us", "dict_lookup_us")},
                  flush=True)
    RESULT["probes"] = probes
    rows = [combine(r) for r in runs]
    rows[-1]["again"] = True
    return rows


@section("stream")
def stream() -> list[dict[str, Any]]:
    import cupy
    import torch

    import unarray as ua
    from unarray.interop import _cache

    out = []
    for d in ("cupy", "jax", "numba"):
        bad = 0
        reps = 200
        syncs0 = ua.stats()["syncs"]
        for i in range(reps):
            side = torch.cuda.Stream()
            with torch.cuda.stream(side):
                t = torch.empty(4096, 4096, device="cuda")
                torch.cuda._sleep(2_000_000)  # ~1 ms of GPU time before the write
                t.fill_(float(i + 1))
                _cache.clear()
                y = ua.to(t, d)
            if d == "cupy":
                v = float(y[-1, -1].get())
            elif d == "jax":
                v = float(np.asarray(y[-1, -1]))
            else:
                v = float(cupy.asarray(y)[-1, -1].get())
            bad += v != float(i + 1)
        out.append({"src": "torch(side stream)", "dst": d, "reps": reps, "stale_reads": bad,
                    "counted_waits": ua.stats()["syncs"] - syncs0})
    # The reverse: cupy writes on its own stream, torch reads.
    bad = 0
    for i in range(200):
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            c = cupy.empty((4096, 4096), cupy.float32)
            c.fill(float(i + 1))
            _cache.clear()
            t = ua.to(c, "torch")
        bad += float(t[-1, -1]) != float(i + 1)
    out.append({"src": "cupy(side stream)", "dst": "torch", "reps": 200, "stale_reads": bad})
    print(out, flush=True)
    return out


@section("loop")
def loop() -> dict[str, float]:
    import torch
    from numba import cuda

    import unarray as ua

    @cuda.jit
    def scale(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 1.0

    t = torch.ones(N * N, device="cuda")
    blocks = (t.numel() + 255) // 256

    def timed(body) -> float:
        body(10)
        sync()
        t0 = time.perf_counter()
        body(1000)
        sync()
        return (time.perf_counter() - t0) / 1000 * 1e6

    def inside(n):
        for _ in range(n):
            scale[blocks, 256](cuda.as_cuda_array(t))

    def outside(n):
        a = cuda.as_cuda_array(t)
        for _ in range(n):
            scale[blocks, 256](a)

    def unarray_cached(n):
        for _ in range(n):
            scale[blocks, 256](ua.to(t, "numba"))

    def conv_inside(n):
        for _ in range(n):
            cuda.as_cuda_array(t)

    def conv_unarray(n):
        for _ in range(n):
            ua.to(t, "numba")

    res = {"kernel+convert inside loop us/iter": timed(inside),
           "kernel, converted once outside us/iter": timed(outside),
           "kernel+ua.to (cached) us/iter": timed(unarray_cached), "convert only, native us": timed(conv_inside),
           "convert only, ua.to us": timed(conv_unarray)}
    print(res, flush=True)
    return res


@section("entry")
def entry() -> dict[str, Any]:
    # Which internal entry points this JAX/TF/torch install gave unarray, and the cost of JAX's
    # stream lookup that each CUDA import pays.
    import jax.numpy as jnp

    from unarray._backends.cupy import handoff as _cupy_h
    from unarray._backends.jax import handoff as _jax_h
    from unarray._backends.numba import handoff as _numba_h
    from unarray._backends.torch import handoff as _torch_h
    from unarray.interop import _cache

    x = jnp.ones(4)
    e = _jax_h._jax_entry()
    dev = next(iter(x.devices()))
    import cupy
    import torch

    import unarray as ua

    t = torch.ones(N, N, device="cuda")
    c = cupy.ones((N, N), cupy.float32)
    jx = jnp.ones((N, N))
    import numba.cuda

    desc = {"shape": (N, N), "strides": None, "typestr": "<f4", "data": (t.data_ptr(), False), "version": 2}
    for _ in range(3):
        ua.to(t, "cupy")  # the second handoff stores the view: from the third on, hits
    route = ua.interop._routes.BY_NAMES[("torch", "cupy")]
    checked = _cache.checked(ua._backends.handoff("torch"))
    guard = checked(t)[1] if checked is not None else None
    parts = {
        "torch->cupy order on a hit (streams agree)": lambda: route.order(t, "cupy"),
        "torch->cupy route hit (C where built)": lambda: route.fast(t, "cupy"),
        "jax stream lookup": dev.get_stream_for_external_ready_events,
        "torch raw stream": lambda: _torch_h.torch_raw_stream(0),
        "cupy current stream": lambda: _cupy_h.consumer_stream("cupy"),
        "cupy current stream of device 0": lambda: cupy.cuda.get_current_stream(0).ptr,
        "torch signature": lambda: _torch_h.sig_torch(t),
        "cupy signature": lambda: _cupy_h._sig_cupy(c),
        "torch->cupy stream order": lambda: _cupy_h.torch_stream_wait(t, "cupy"),
        "torch->cupy cache hit (no stats)": lambda: _cache.hit(t, route),
        "ua.to(torch, cupy) hit": lambda: ua.to(t, "cupy"),
        "dict lookup (host speed)": lambda: ua.interop._public._FAST.get((type(t), "cupy")),
        "empty call (the timer's own cost per call)": lambda: None,
        "cupy->torch torch.as_tensor(c)": lambda: torch.as_tensor(c),
        "cupy->torch torch.as_tensor(c, device=cuda:0)": lambda: torch.as_tensor(c, device=torch.device("cuda", 0)),
        "cupy->torch torch.from_dlpack(c)": lambda: torch.from_dlpack(c),
        "cupy->torch torch._C._from_dlpack(c.__dlpack__())": lambda: torch._C._from_dlpack(c.__dlpack__()),
        "cupy c.__dlpack__()": lambda: c.__dlpack__(),
        "jax x.__dlpack_device__()": lambda: jx.__dlpack_device__(),
        "jax x.platform()": lambda: jx.platform(),
        "jax x.device": lambda: jx.device,
        "torch->numba as_cuda_array(t)": lambda: numba.cuda.as_cuda_array(t),
        "torch->numba t.__cuda_array_interface__": lambda: t.__cuda_array_interface__,
        "torch->numba _numba_h.to_numba(t)": lambda: _numba_h.to_numba(t),
        "torch->numba _torch_plain": lambda: _torch_h.torch_plain(t),
        "torch->numba torch_stream_wait": lambda: _cupy_h.torch_stream_wait(t, "numba"),
        "torch->numba from_cuda_array_interface(desc, sync=False)":
            lambda: numba.cuda.from_cuda_array_interface(desc, owner=t, sync=False),
    }
    if guard is not None:
        parts["torch checked signature, as the C route's hit makes it (data_ptr, guard.check)"] = \
            lambda: (t.data_ptr(), guard.check(t))

    try:  # Numba's device array built directly (what from_cuda_array_interface does, minus its checks)
        from numba.cuda.cudadrv import devicearray, driver

        ctx = numba.cuda.current_context()
        ptr = driver.get_devptr_for_active_ctx(t.data_ptr())

        def direct() -> Any:
            mem = driver.MemoryPointer(ctx, ptr, size=t.numel() * 4, owner=t)
            return devicearray.DeviceNDArray(shape=(N, N), strides=(4 * N, 4), dtype=np.dtype(np.float32),
                                             gpu_data=mem, stream=0)

        direct()
        parts["torch->numba DeviceNDArray(MemoryPointer) direct"] = direct
        parts["numba get_devptr_for_active_ctx"] = lambda: driver.get_devptr_for_active_ctx(t.data_ptr())
        parts["numba current_context()"] = numba.cuda.current_context
    except Exception as err:
        parts["numba direct: " + f"{type(err).__name__}: {err}"[:100]] = lambda: None
    # Which CuPy array fields can be assigned in place (what the cache signature must read).
    assignable = {}
    for name, value in (("shape", (N * N,)), ("strides", (4 * N, 4)), ("dtype", np.dtype(np.int32)),
                        ("data", cupy.ones(4).data)):
        probe = cupy.ones((N, N), cupy.float32)
        try:
            setattr(probe, name, value)
            assignable[name] = "assignable"
        except Exception as err:
            assignable[name] = f"{type(err).__name__}: {err}"[:120]
    return {"jax_internal_import": e is not None, "cupy_assignable": assignable,
            "parts_us": {k: median_us(f, synced=False) for k, f in parts.items()}}


@section("hit_ab")
def hit_ab() -> dict[str, Any]:
    """Where a torch -> CuPy cache hit's time goes in C: _speedups.Handoff routes over one cache entry
    (made by ua.to), each doing part of the hit, timed in turns in loops of LOOP calls. From "no
    checks" (the lookups alone) up to the whole hit, with CuPy's stream read through its exported
    get_stream_ptr (what ua.to does) or through get_current_stream(device).ptr (what it did before),
    and the torch signature by torch's guard (ua.to) or by reading shape, strides and dtype."""
    import cupy
    import torch

    import unarray as ua
    from unarray._backends.cupy import handoff as _cupy_h
    from unarray._backends.torch import handoff as _torch_h
    from unarray.interop import _cache

    speedups = ua.interop._routes.speedups
    if speedups is None:
        return {"skipped": "ua.to in Python"}
    t = torch.randn(N, N, device="cuda")
    for _ in range(3):
        ua.to(t, "cupy")  # the entry the routes below hit
    raw = torch._C._cuda_getCurrentRawStream
    reader = _cupy_h.cupy_stream_reader(speedups)

    def miss(*args: Any) -> Any:
        raise AssertionError("the A/B routes must only hit")

    checked = _cache.c_signature(_torch_h.HANDOFF, _torch_h.HANDOFF.signature)[1]
    # The reads without the guard: a second tensor whose stored signature holds no guard (a None guard
    # is skipped; shape, strides and dtype are then read and compared, as where torch has no guard).
    t2 = torch.randn(N, N, device="cuda")
    for _ in range(3):
        ua.to(t2, "cupy")
    entry = _cache.CACHE[id(t2)]
    if isinstance(entry[1], _torch_h.CheckedSig):
        entry[1] = _torch_h.CheckedSig((entry[1][0], None, *entry[1][2:]))
    osig = _cache.c_signature(_cupy_h.HANDOFF, _cupy_h.HANDOFF.signature)[1]
    by_reader = (raw, reader, None, _cupy_h.torch_stream_wait)
    by_current = (raw, cupy.cuda.get_current_stream, "ptr", _cupy_h.torch_stream_wait)
    variants = {  # (source signature, view signature, stream order)
        "no checks": (None, None, None),
        "torch signature (guard)": (checked, None, None),
        "torch signature (shape, strides, dtype read)": (checked, None, None),
        "CuPy view's shape": (None, osig, None),
        "stream order (exported reader)": (None, None, by_reader),
        "stream order (get_current_stream)": (None, None, by_current),
        "whole hit, get_current_stream": (checked, osig, by_current),
        "whole hit (ua.to's route)": (checked, osig, by_reader),
    }
    if reader is None:
        variants = {k: v for k, v in variants.items() if v[2] is not by_reader}
    routes = {k: speedups.Handoff(True, miss, miss, *v, "cupy") for k, v in variants.items()}
    view, view2 = ua.to(t, "cupy"), ua.to(t2, "cupy")
    src = {k: t2 if "read)" in k else t for k in routes}
    assert all(r(src[k], "to") is (view2 if src[k] is t2 else view) for k, r in routes.items())
    cases = {k: (looped(r, src[k], "to"), None) for k, r in routes.items()}
    cases["ua.to(t, 'cupy')"] = (looped(ua.to, t, "cupy"), None)
    cases["dict lookup (host speed)"] = (looped(ua.interop._public._FAST.get, (type(t), "cupy"), None), None)
    spread: dict[str, list[float]] = {}
    h0 = host_state()
    us = interleaved_us(cases, n=400, rounds=40, synced=False, spread=spread)
    return {"loop_us_per_call": {k: round(v / LOOP, 4) for k, v in us.items()},
            "p10_p90_us": {k: [round(v[0] / LOOP, 4), round(v[1] / LOOP, 4)] for k, v in spread.items()},
            "host": host(h0)}


def slowest(r: dict[str, Any]) -> str:
    # The slowest pass's figures of a combined row, with what the machine did during that pass.
    ok = [p for p in r.get("passes", []) if "error" not in p]
    if not ok:
        return "| | | | |"
    p = max(ok, key=lambda p: p["repeated_loop_us"])
    h = p.get("host", {})
    return (f"{p['repeated_b2b_us']:.2f} | {p['repeated_loop_us']:.2f} | {p['dict_lookup_us']:.2f} | "
            f"{h.get('steal_pct', '-')} | {h.get('busy_pct', '-')} |")


def write() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        import torch

        RESULT["device"] = torch.cuda.get_device_name(0)
        RESULT["versions"] = {m: str(getattr(sys.modules.get(m), "__version__", "?"))
                              for m in ("torch", "cupy", "jax", "numba")}
        RESULT["python"] = platform.python_version()
        RESULT["ua.to"] = "Python" if sys.modules["unarray.interop._routes"].speedups is None else "C (_speedups.c)"
        if RESULT["ua.to"] != "Python":
            guarded = sys.modules["unarray.interop._cache"].checked("torch") is not None
            RESULT["ua.to"] += ", torch checked by torch's metadata guard" if guarded else ", torch signature read"
            speedups = sys.modules["unarray.interop._routes"].speedups
            reader = sys.modules["unarray._backends.cupy.handoff"].cupy_stream_reader(speedups)
            RESULT["ua.to"] += (", CuPy's stream read through its exported get_stream_ptr" if reader is not None
                                else ", CuPy's stream read by get_current_stream")
    except Exception as e:
        RESULT["device"] = f"? ({e})"
    (OUT / "handoff_gpu.json").write_text(json.dumps(RESULT, indent=1, default=str))
    lines = [f"# CUDA handoff ({RESULT.get('device')})", "",
             f"Python {RESULT.get('python')}, ua.to in {RESULT.get('ua.to')}; {RESULT.get('versions')}", "",
             "Median host µs per call, 1024x1024 float32. synced: the GPU idle before each call (a synchronize "
             "outside the timed region); back to back: calls in a row. first = unarray with an empty cache; "
             "second = the next handoff of the same array (converts again and stores the view: cache admission "
             "on second sight); repeated = cache hit. Each call is timed alone (its figure includes the timer's "
             "own cost: the entry section's empty call); repeated, loop = back to back in loops of "
             f"{LOOP} calls, divided, as timeit does; dict lookup = the host's speed, timed in the same turns "
             "(a lambda doing one dict lookup, timed alone). Each pair is timed in "
             f"{PASSES} passes over the whole matrix; each figure is the fastest pass's (timeit's rule), "
             "and the last columns are the slowest pass's, with the share of all CPUs' time the hypervisor "
             "stole and the machine spent busy during that pass's row (/proc/stat).", "",
             "| source | target | best native | native synced | first synced | repeated synced | "
             "native back to back | first back to back | second back to back | repeated back to back | "
             "repeated, loop | dict lookup | bytes copied | same pointer | path | slowest pass: repeated back "
             "to back | repeated, loop | dict lookup | steal % | busy % |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|"]
    for r in RESULT.get("matrix", []):
        if r.get("again"):
            r = dict(r, dst=f"{r['dst']} (timed again, last)")
        if "error" in r:
            lines.append(f"| {r['src']} | {r['dst']} | error: {r['error'][:80]} | | | | | | |")
            continue
        b = r["best_native"]
        bb = min(r["native_b2b_us"], key=r["native_b2b_us"].get)
        lines.append(f"| {r['src']} | {r['dst']} | `{b}` | {r['native_us'][b]:.1f} | {r['first_us']:.1f} | "
                     f"{r['repeated_us']:.2f} | {r['native_b2b_us'][bb]:.1f} | {r['first_b2b_us']:.1f} | "
                     f"{r['second_b2b_us']:.1f} | {r['repeated_b2b_us']:.2f} | {r['repeated_loop_us']:.2f} | "
                     f"{r['dict_lookup_us']:.2f} | {r['bytes_copied']} | {r['same_pointer']} | `{r['path']}` | "
                     + slowest(r))
    lines += ["", "## Streams", "", "```", json.dumps(RESULT.get("stream"), indent=1), "```",
              "", "## Numba loop (1,000 calls)", "", "```", json.dumps(RESULT.get("loop"), indent=1), "```",
              "", "## Entry points", "", "```", json.dumps(RESULT.get("entry"), indent=1), "```",
              "", "## torch -> CuPy hit, A/B (C routes over one cache entry, loops of "
              f"{LOOP} calls, interleaved)", "", "```", json.dumps(RESULT.get("hit_ab"), indent=1), "```",
              "", "## Probes (torch -> CuPy hit and dict lookup, µs per call in loops, between the matrix's rows)",
              "", "```", json.dumps(RESULT.get("probes"), indent=1), "```",
              "", f"Errors: {sorted(RESULT['errors']) or 'none'}"]
    text = "\n".join(lines) + "\n"
    (OUT / "handoff_gpu.md").write_text(text)
    print(text)


if __name__ == "__main__":
    entry()
    matrix()
    stream()
    loop()
    hit_ab()
    write()
