#!/bin/bash
# How fast is CuPy attention through cuDNN, and do its GPU tests pass? (one device call)
# One GPU call for cuDNN attention on CuPy: probe the library, time it against torch, run its GPU tests.
# Each step is guarded (a failure goes on to the next); logs and results under $OUT.
#   OUT=out bash benchmarks/gpu/attention_cudnn.sh
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
timeout 60 python3 - >"$OUT/probe.log" 2>&1 <<'PY'
import sys, time, math
import numpy as np
import cupy
t = time.perf_counter()
import cudnn
print("import cudnn", round(time.perf_counter() - t, 3), "s; frontend", cudnn.__version__)
try:
    print("backend_version before unarray's loader:", cudnn.backend_version())
except Exception as e:
    print("backend_version before unarray's loader failed:", type(e).__name__, e)
from unarray._backends.cupy import attention_cudnn as ac
print("libcudnn on sys.path:", ac._find_libcudnn())
mod, why = ac.library()
print("library:", mod is not None, why)
print("versions:", ac.versions() if mod is not None else "-")
try:
    cupy.zeros(2, dtype="bfloat16"); print("CuPy bfloat16: yes", cupy.__version__)
except Exception as e:
    print("CuPy bfloat16: no", cupy.__version__, type(e).__name__, e)
import unarray as ua
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal(s).astype(np.float16) for s in ((2, 8, 200, 64), (2, 2, 300, 64), (2, 2, 300, 64)))
g = [cupy.asarray(a) for a in (q, k, v)]
for causal in (False, True):
    t = time.perf_counter()
    p = ac.prepare(*g, None, causal, 0.125, "bhsd")
    print("prepare", round(time.perf_counter() - t, 3), "s:", p if isinstance(p, str) else p.built.plan)
    out = ua.scaled_dot_product_attention(*g, is_causal=causal).get().astype(np.float64)
    kk, vv = (np.repeat(a.astype(np.float64), 4, axis=1) for a in (k, v))
    s = q.astype(np.float64) @ kk.swapaxes(-1, -2) * 0.125
    if causal:
        s = np.where(np.tril(np.ones((200, 300), bool), 100), s, -np.inf)
    pr = np.exp(s - s.max(-1, keepdims=True)); pr /= pr.sum(-1, keepdims=True)
    print("causal", causal, "max abs err", float(np.abs(out - pr @ vv).max()))
    print(ua.explain("scaled_dot_product_attention", *g, is_causal=causal).kernel)
for shape in ((1, 2, 128, 64), (4, 16, 4096, 128)):
    h = cupy.ones(shape, "float16")
    for _ in range(3):
        ua.scaled_dot_product_attention(h, h, h)
    cupy.cuda.Device().synchronize()
    t = time.perf_counter()
    for _ in range(50):
        ua.scaled_dot_product_attention(h, h, h)
    host = (time.perf_counter() - t) / 50
    cupy.cuda.Device().synchronize()
    print("shape", shape, "host time per call (no sync)", round(host * 1e6, 1), "us; with the GPU",
          round((time.perf_counter() - t) / 50 * 1e6, 1), "us")
print("torch imported:", "torch" in sys.modules)
PY
echo "probe rc=$?" >>"$OUT/probe.log"
timeout 120 python3 benchmarks/gpu/attention_cudnn.py >"$OUT/bench.log" 2>&1
echo "bench rc=$?" >>"$OUT/bench.log"
timeout 240 python3 benchmarks/gpu/cudnn_host_cost.py >"$OUT/host.log" 2>&1
echo "host cost rc=$?" >>"$OUT/host.log"
timeout 150 python3 -m pytest -q -x -p no:randomly -p no:cacheprovider --devices gpu -s tests/attention/test_attention_cudnn.py \
    >"$OUT/tests.log" 2>&1
echo "tests rc=$?" >>"$OUT/tests.log"
timeout 60 python3 -m pytest -q -p no:randomly -p no:cacheprovider --devices gpu --backends cupy \
    tests/attention/test_attention.py tests/attention/test_attention_edges.py >"$OUT/tests_attention.log" 2>&1
echo "attention tests rc=$?" >>"$OUT/tests_attention.log"
