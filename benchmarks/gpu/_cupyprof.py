# ruff: noqa
# Host-time probe of the CuPy attention route (which step waits for the GPU).
import time, statistics, cupy as cp, torch, numpy as np
import torch.nn.functional as F
from unarray import _handoff as h
q,k,v = (cp.random.standard_normal((16,16,1024,64), dtype=cp.float32).astype(cp.float16) for _ in range(3))
def host_us(fn, n=200):
    for _ in range(20): fn()
    torch.cuda.synchronize()
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); fn(); ts.append(time.perf_counter()-t)
        torch.cuda.synchronize()
    return statistics.median(ts)*1e6
dev = torch.device("cuda", 0)
def ins(): return [torch.as_tensor(a, device=dev) for a in (q,k,v)]
def via(conv):
    def f():
        tq,tk,tv = ins(); out = F.scaled_dot_product_attention(tq,tk,tv,is_causal=True); return conv(out)
    return f
print("inputs only", host_us(ins))
print("inputs+sdpa", host_us(via(lambda o: o)))
print("  + _cupy_view", host_us(via(lambda o: h._cupy_view(o, np.dtype("float16")))))
print("  + cupy.from_dlpack", host_us(via(cp.from_dlpack)))
print("  + cupy.asarray", host_us(via(cp.asarray)))
print("  + UnownedMemory only", host_us(via(lambda o: cp.cuda.UnownedMemory(o.data_ptr(), o.numel()*2, o, 0))))
tq,tk,tv = ins()
print("fixed inputs + sdpa + _cupy_view", host_us(lambda: h._cupy_view(F.scaled_dot_product_attention(tq,tk,tv,is_causal=True), np.dtype("float16"))))
