import torch, cupy, numpy as np
print("cupy current ptr", cupy.cuda.get_current_stream().ptr, "null", cupy.cuda.Stream.null.ptr)
print("torch ext0", torch.cuda.ExternalStream(0).cuda_stream, "torch default", torch.cuda.default_stream().cuda_stream)
def run(name, handoff, reps=100):
    bad = 0
    for i in range(reps):
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            t = torch.empty(4096, 4096, device="cuda")
            torch.cuda._sleep(2_000_000)
            t.fill_(float(i + 1))
            y = handoff(t, side)
        bad += float(y[-1, -1].get()) != float(i + 1)
    print(f"{name:40s} stale {bad}/{reps}", flush=True)
def native(t, side): return cupy.asarray(t)
def torch_wait(t, side):
    torch.cuda.ExternalStream(cupy.cuda.get_current_stream().ptr, device=t.device).wait_stream(torch.cuda.current_stream(t.device))
    return cupy.asarray(t)
def cupy_wait(t, side):
    ev = cupy.cuda.Event(disable_timing=True); ev.record(cupy.cuda.ExternalStream(torch.cuda.current_stream(t.device).cuda_stream))
    cupy.cuda.get_current_stream().wait_event(ev); return cupy.asarray(t)
def dl(t, side): return cupy.from_dlpack(t)
def hostsync(t, side): side.synchronize(); return cupy.asarray(t)
def legacy(t, side):
    ev = torch.cuda.Event(); ev.record(torch.cuda.current_stream(t.device))
    cupy.cuda.runtime.streamWaitEvent(0, ev.cuda_event, 0); return cupy.asarray(t)
def legacy1(t, side):
    ev = torch.cuda.Event(); ev.record(torch.cuda.current_stream(t.device))
    cupy.cuda.runtime.streamWaitEvent(1, ev.cuda_event, 0); return cupy.asarray(t)
for n, f in [("hostsync (sanity)", hostsync), ("native cupy.asarray", native), ("torch ExternalStream wait", torch_wait),
             ("cupy event wait", cupy_wait), ("cupy.from_dlpack", dl), ("streamWaitEvent(0)", legacy), ("streamWaitEvent(legacy=1)", legacy1)]:
    try: run(n, f)
    except Exception as e: print(n, "error", e)
t = torch.ones(4, device="cuda"); print("torch CAI", t.__cuda_array_interface__)
