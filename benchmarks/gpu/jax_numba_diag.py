"""JAX (CUDA) -> Numba under GPU load: which path reads finished data.

python3 benchmarks/gpu/jax_numba_diag.py [reps]   (writes $OUT/jax_numba_diag.json)

Another process keeps the GPU busy (torch matmuls) while, per rep, a fresh JAX array is put on the
GPU from the host and handed to Numba by several paths; each result is read back and compared with
the host data. Also records whether JAX arrays carry a CUDA array interface, and probes the direct
Numba device-array build (unarray.interop._cuda._numba_maker) with its error shown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

np.row_stack = np.vstack  # type: ignore[attr-defined]
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

LOAD = """
import time, torch
a = torch.randn(8192, 8192, device="cuda")
t0 = time.time()
while time.time() - t0 < float(__import__("sys").argv[1]):
    a = torch.tanh(a @ a / 8192)
    torch.cuda.synchronize()
"""


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    import cupy
    import jax
    from numba import cuda

    import unarray as ua
    from unarray.interop import _cache, _cuda

    res: dict = {}
    gpu = jax.devices("gpu")[0]
    x0 = jax.device_put(np.ones((4, 4), np.float32), gpu)
    res["jax_has_cai"] = hasattr(x0, "__cuda_array_interface__")
    try:
        res["jax_cai"] = {k: str(v) for k, v in x0.__cuda_array_interface__.items()}
    except Exception as e:
        res["jax_cai"] = f"{type(e).__name__}: {e}"
    # The direct Numba build, step by step, with the error shown.
    try:
        from numba.cuda.cudadrv import devicearray, driver

        nc = cuda
        steps = {}
        ctx = nc.gpus[0].get_primary_context()
        steps["ctx"] = repr(ctx)
        host = np.arange(12, dtype=np.float32).reshape(3, 4)
        with nc.gpus[0]:
            probe = nc.to_device(host)
        ptr = probe.device_ctypes_pointer.value
        p = driver.get_devptr_for_active_ctx(ptr)
        steps["pointer type"] = repr(type(p))
        mem = driver.MemoryPointer(ctx, type(p)(ptr), size=driver.memory_size_from_info((3, 2), (16, 8), 4),
                                   owner=probe)
        got = devicearray.DeviceNDArray(shape=(3, 2), strides=(16, 8), dtype=host.dtype, gpu_data=mem, stream=0)
        steps["ptr"] = [got.device_ctypes_pointer.value, ptr]
        steps["values"] = got.copy_to_host().tolist()
        steps["maker"] = repr(_cuda._numba_maker(0))
        res["numba_direct"] = steps
    except Exception:
        res["numba_direct_error"] = traceback.format_exc()[-1500:]

    def via_ua(x):
        return ua.to(x, "numba")

    def via_cai(x):
        return cuda.as_cuda_array(x)

    def via_cupy(x):
        return cuda.as_cuda_array(cupy.from_dlpack(x))

    def via_ready(x):
        x.block_until_ready()
        return cuda.as_cuda_array(x)

    paths = {"ua.to": via_ua, "as_cuda_array(x)": via_cai, "as_cuda_array(cupy.from_dlpack(x))": via_cupy,
             "block_until_ready + as_cuda_array": via_ready}
    # The conformance check's own steps (unarray/conformance/check.py, handoff_case), under load:
    # is it the JAX array's values, or the handoff?
    from unarray.conformance.cases import arr

    load = subprocess.Popen([sys.executable, "-c", LOAD, str(60 + reps)])
    time.sleep(3)
    conf = {"x itself (np.asarray)": 0, "ua.to(x, numba)": 0, "as_cuda_array(x)": 0,
            "x.block_until_ready(), as_cuda_array": 0, "ua.to after block_until_ready": 0}
    try:
        for i in range(reps):
            for strided in (False, True):
                for k in conf:
                    base = arr(np.random.default_rng([i, strided]), (64, 34), "float32")
                    _cache.clear()
                    x = ua.asarray(base, backend="jax", device="cuda:0")
                    if strided:
                        x, base = x[:, ::2], base[:, ::2]
                    if k == "x itself (np.asarray)":
                        got = np.asarray(x)
                    elif k == "ua.to(x, numba)":
                        got = ua.to(x, "numba").copy_to_host()
                    elif k == "as_cuda_array(x)":
                        got = cuda.as_cuda_array(x).copy_to_host()
                    elif k == "x.block_until_ready(), as_cuda_array":
                        x.block_until_ready()
                        got = cuda.as_cuda_array(x).copy_to_host()
                    else:
                        x.block_until_ready()
                        got = ua.to(x, "numba").copy_to_host()
                    conf[k] += not np.array_equal(got, base)
    finally:
        load.kill()
    res["conformance_steps_wrong"] = conf
    # Without load: x still being computed (40 chained matmuls) when handed over.
    import jax.numpy as jnp

    big = jax.device_put(np.full((2048, 2048), 1 / 2048, np.float32), gpu)

    @jax.jit
    def late(v, m):
        m = jax.lax.fori_loop(0, 40, lambda i, m: m @ big, m)
        return v + 0.0 * m[0, 0]

    base = np.random.default_rng(3).standard_normal((512, 512)).astype(np.float32)
    late(jnp.asarray(base), big).block_until_ready()
    late_stale = {"ua.to": 0, "as_cuda_array(x)": 0}
    for i in range(20):
        for k in late_stale:
            _cache.clear()
            want = base * (i + 1)
            x = late(jax.device_put(want, gpu), big)
            y = ua.to(x, "numba") if k == "ua.to" else cuda.as_cuda_array(x)
            late_stale[k] += not np.array_equal(y.copy_to_host(), want)
    res["pending_jax_work_stale_of_20"] = late_stale
    print(late_stale, flush=True)
    print(conf, flush=True)
    load = subprocess.Popen([sys.executable, "-c", LOAD, str(30 + reps)])
    time.sleep(3)
    rng = np.random.default_rng(0)
    stale = {k: 0 for k in paths}
    examples: dict = {}
    try:
        for i in range(reps):
            for name, f in paths.items():
                host = rng.standard_normal((256, 256)).astype(np.float32) + i
                _cache.clear()
                x = jax.device_put(host, gpu)
                try:
                    y = f(x)
                    back = y.copy_to_host()
                except Exception as e:
                    stale[name] += 1
                    examples.setdefault(name, f"{type(e).__name__}: {e}")
                    continue
                if not np.array_equal(back, host):
                    stale[name] += 1
                    examples.setdefault(name, {"mismatched": int((back != host).sum()), "of": host.size,
                                               "zeros": int((back == 0).sum())})
    finally:
        load.kill()
    res["reps"] = reps
    res["stale"] = stale
    res["examples"] = examples
    print(json.dumps(res, indent=1))
    (out / "jax_numba_diag.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
