# ruff: noqa
import time, statistics, cupy as cp, torch, numpy as np, unarray as ua
from unarray import _handoff as h
q,k,v = (cp.random.standard_normal((16,16,1024,64), dtype=cp.float32).astype(cp.float16) for _ in range(3))
tq = torch.from_dlpack(q)
def host_us(fn, n=300):
    for _ in range(20): fn()
    torch.cuda.synchronize()
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); fn(); ts.append(time.perf_counter()-t)
        torch.cuda.synchronize()
    return statistics.median(ts)*1e6
print("torch_to_cupy", host_us(lambda: h.torch_to_cupy(tq)))
y = h.torch_to_cupy(tq); print("same ptr", y.data.ptr == tq.data_ptr(), "equal", bool((y == q).all()))
t2 = torch.randn(3, 5, 7, device="cuda").permute(2, 0, 1)[1:, :, ::2]
y2 = h.torch_to_cupy(t2); print("strided ok", np.array_equal(cp.asnumpy(y2), t2.cpu().numpy()), y2.data.ptr == t2.data_ptr())
print("ua sdpa cupy", host_us(lambda: ua.scaled_dot_product_attention(q,k,v,is_causal=True)))
tk, tv = torch.from_dlpack(k), torch.from_dlpack(v)
print("ua sdpa torch", host_us(lambda: ua.scaled_dot_product_attention(tq,tk,tv,is_causal=True)))
r1 = ua.scaled_dot_product_attention(q,k,v,is_causal=True); r2 = ua.scaled_dot_product_attention(tq,tk,tv,is_causal=True)
print("cupy == torch result", bool(cp.all(r1 == cp.asarray(r2))))
import cProfile, pstats
cProfile.run("for _ in range(200): ua.scaled_dot_product_attention(q,k,v,is_causal=True)", "/tmp/pp")
pstats.Stats("/tmp/pp").sort_stats("cumtime").print_stats(30)
out = ua.scaled_dot_product_attention(tq,tk,tv,is_causal=True)
print("out strides", out.stride(), out.shape, out.is_contiguous())
print("to_cupy fresh", host_us(lambda: h.torch_to_cupy(torch.nn.functional.scaled_dot_product_attention(tq,tk,tv,is_causal=True))))
print("sdpa alone", host_us(lambda: torch.nn.functional.scaled_dot_product_attention(tq,tk,tv,is_causal=True)))
print("cupy_to_torch x3", host_us(lambda: [h.cupy_to_torch(a) for a in (q,k,v)]))
