"""Where does the host time of one ``ua.scaled_dot_product_attention`` call on CuPy arrays (cuDNN's SDPA) go?

B4 H16 S4096 D128, float16 and bfloat16 (where CuPy has it), causal and not. This process imports CuPy,
cudnn and unarray, never torch (asserted); torch's cuDNN SDPA is timed in a child interpreter
(``--torch``) on the same shape.

Host steps: each is ``time.perf_counter_ns`` around one call, the device synchronized between calls (so the
host path is measured alone, never queued behind the GPU), median (and p10/p90) of ``N`` calls after a
warm-up. The steps, outermost first: the whole call; the front end's plan (``_plan_attention``: checks +
backend plan); the argument checks alone; the backend's plan; ``prepare()``; ``run()``; ``describe()``;
``cupy.empty`` of the output and of the workspace; reading CuPy's current stream; ``cudnn.set_stream``; and
every form of the graph's execute the installed frontend offers (each tried, a failure recorded, never
fatal): the Tensor-keyed dict (the route's form before the fast call), a uid-keyed dict, CuPy arrays as
values, ``execute_plan_at_index``, the ordered form (``tensor_uids=``), the lowered graph's raw pointer
array (``_execute_with_raw_ptrs``), and CUDA-graph replay (stream capture, then ``Graph.launch``).

Device time of ONE call: CUDA events around a single call on an idle GPU (synchronized before), median of
``ONE`` calls: the ua call (with the fast call on and, where the module has the switch, off), the bare
execute forms, and torch's ``F.scaled_dot_product_attention`` under ``sdpa_kernel(CUDNN_ATTENTION)`` (child).
Also a loop of 20 calls for reference. Every output of the alternatives is compared with the route's.

    OUT=out PYTHONPATH=$PWD python benchmarks/gpu/cudnn_host_cost.py   # writes $OUT/cudnn_host/{json,md}
"""

# ruff: noqa: B023  (timed closures run inside the iteration that binds their loop variables)
from __future__ import annotations

import ctypes
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SHAPE = (4, 16, 4096, 128)
N = int(os.environ.get("HOST_N", "200"))  # host-timed calls per step
ONE = int(os.environ.get("ONE_N", "30"))  # single calls timed with device events
OUT = pathlib.Path(os.environ.get("OUT", "out")) / "cudnn_host"


def pct(ts: list[float], q: float) -> float:
    s = sorted(ts)
    return s[min(len(s) - 1, int(q * len(s)))]


# -- the torch child ---------------------------------------------------------------------------------
def torch_child() -> None:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    rows = []
    for dtype in ("float16", "bfloat16"):
        g = torch.Generator(device="cuda").manual_seed(2026)
        q, k, v = (torch.randn(SHAPE, device="cuda", dtype=getattr(torch, dtype), generator=g) for _ in range(3))
        for causal in (False, True):
            row: dict[str, Any] = {"dtype": dtype, "causal": causal}
            try:
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    def call() -> Any:
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    for _ in range(5):
                        call()
                    torch.cuda.synchronize()
                    host = []
                    for _ in range(N):
                        t0 = time.perf_counter_ns()
                        call()
                        host.append((time.perf_counter_ns() - t0) / 1e3)
                        torch.cuda.synchronize()
                    one = []
                    for _ in range(ONE):
                        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        torch.cuda.synchronize()
                        a.record()
                        call()
                        b.record()
                        b.synchronize()
                        one.append(a.elapsed_time(b))
                    loop = []
                    for _ in range(7):
                        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        torch.cuda.synchronize()
                        a.record()
                        for _ in range(20):
                            call()
                        b.record()
                        b.synchronize()
                        loop.append(a.elapsed_time(b) / 20)
                row.update(host_us=statistics.median(host), host_p10=pct(host, 0.1), host_p90=pct(host, 0.9),
                           one_ms=statistics.median(one), loop_ms=statistics.median(loop))
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            rows.append(row)
    print(json.dumps({"rows": rows, "torch": torch.__version__, "torch_cudnn": torch.backends.cudnn.version(),
                      "device": torch.cuda.get_device_name()}))


def run_torch_child() -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run([sys.executable, __file__, "--torch"], env=env, capture_output=True, text=True,
                              timeout=180)
        if done.returncode != 0:
            return {"error": done.stderr[-2000:], "rows": []}
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}", "rows": []}


# -- the CuPy-only process ------------------------------------------------------------------------------
class Probe:
    def __init__(self) -> None:
        import cupy

        self.cupy = cupy
        self.steps: list[dict[str, Any]] = []
        self.notes: list[str] = []

    def sync(self) -> None:
        self.cupy.cuda.Device().synchronize()

    def host(self, name: str, fn: Callable[[], Any], ctx: dict[str, Any], n: int = N) -> float | None:
        """Median host µs of ``fn`` (device synchronized between calls); a raise is recorded, not fatal."""
        try:
            for _ in range(10):
                fn()
            self.sync()
            ts = []
            for _ in range(n):
                t0 = time.perf_counter_ns()
                fn()
                ts.append((time.perf_counter_ns() - t0) / 1e3)
                self.sync()
            med = statistics.median(ts)
            self.steps.append({**ctx, "kind": "host", "step": name, "us": round(med, 2), "p10": round(pct(ts, 0.1), 2),
                               "p90": round(pct(ts, 0.9), 2)})
            return med
        except Exception as e:
            self.steps.append({**ctx, "kind": "host", "step": name, "error": f"{type(e).__name__}: {str(e)[:300]}"})
            return None

    def one(self, name: str, fn: Callable[[], Any], ctx: dict[str, Any], stream: Any = None) -> None:
        """Median ms between device events around ONE call on an idle GPU, and a 20-call loop's per call."""
        cupy = self.cupy
        try:
            for _ in range(3):
                fn()
            times, loop = [], []
            for _ in range(ONE):
                a, b = cupy.cuda.Event(), cupy.cuda.Event()
                self.sync()
                a.record(stream)
                fn()
                b.record(stream)
                b.synchronize()
                times.append(cupy.cuda.get_elapsed_time(a, b))
            for _ in range(7):
                a, b = cupy.cuda.Event(), cupy.cuda.Event()
                self.sync()
                a.record(stream)
                for _ in range(20):
                    fn()
                b.record(stream)
                b.synchronize()
                loop.append(cupy.cuda.get_elapsed_time(a, b) / 20)
            self.steps.append({**ctx, "kind": "device", "step": name, "one_ms": round(statistics.median(times), 4),
                               "one_p90": round(pct(times, 0.9), 4), "loop_ms": round(statistics.median(loop), 4)})
        except Exception as e:
            self.steps.append({**ctx, "kind": "device", "step": name, "error": f"{type(e).__name__}: {str(e)[:300]}"})

    def check(self, name: str, ref: Any, got: Any, ctx: dict[str, Any]) -> None:
        try:
            same = bool(self.cupy.array_equal(ref, got))
            diff = float(self.cupy.abs(ref.astype("float32") - got.astype("float32")).max())
            self.steps.append({**ctx, "kind": "check", "step": name, "bit_equal": same, "max_abs_diff": diff})
        except Exception as e:
            self.steps.append({**ctx, "kind": "check", "step": name, "error": f"{type(e).__name__}: {str(e)[:200]}"})


def uid_of(t: Any) -> int:
    for get in (lambda: t.get_uid(), lambda: t.uid):
        try:
            return int(get())
        except Exception:
            pass
    raise AttributeError(f"no uid on {type(t).__name__}")


def backend_handle(cudnn: Any, h: Any) -> int:
    try:
        from cudnn._handle import to_backend_handle

        return int(to_backend_handle(h) or 0)
    except Exception:
        return int(h)


def cupy_only() -> None:
    import cupy

    t0 = time.perf_counter()
    import unarray as ua
    from unarray import nn as ua_nn
    from unarray._backends.attention_masks import CAUSAL, NONE
    from unarray._backends.cupy import attention_cudnn as ac
    from unarray._backends.cupy.backend import BACKEND
    from unarray._nn_args import check_attention

    cudnn, why = ac.library()
    if cudnn is None:
        raise SystemExit(f"cuDNN frontend unavailable: {why}")
    pr = Probe()
    meta: dict[str, Any] = {"cupy": cupy.__version__, "cudnn": ac.versions(), "python": platform.python_version(),
                            "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                            "shape": list(SHAPE), "N": N, "ONE": ONE,
                            "fast_switch": [n for n in ("FAST", "FAST_CALL", "fast") if hasattr(ac, n)],
                            "frontend_module": getattr(cudnn, "__file__", "")}
    try:
        cupy.zeros(2, dtype="bfloat16")
        dtypes = ["float16", "bfloat16"]
    except Exception:
        dtypes = ["float16"]
    switch = meta["fast_switch"][0] if meta["fast_switch"] else None
    for dtype in dtypes:
        rng = cupy.random.default_rng(2026)
        q, k, v = (rng.standard_normal(SHAPE, dtype=cupy.float32).astype(dtype) for _ in range(3))
        for causal in (False, True):
            ctx, spec = {"dtype": dtype, "causal": causal}, CAUSAL if causal else NONE
            scale = 1.0 / SHAPE[3] ** 0.5
            args = (q, k, v, None, causal, scale, "bhsd")
            ref = ua.scaled_dot_product_attention(q, k, v, is_causal=causal)
            pr.host("ua.scaled_dot_product_attention (whole call)",
                    lambda: ua.scaled_dot_product_attention(q, k, v, is_causal=causal), ctx)
            if switch is not None:
                saved = getattr(ac, switch)
                setattr(ac, switch, False)
                try:
                    pr.host("ua.scaled_dot_product_attention, fast call off",
                            lambda: ua.scaled_dot_product_attention(q, k, v, is_causal=causal), ctx)
                    pr.host("ac.prepare, fast call off", lambda: ac.prepare(*args), ctx)
                    p_off = ac.prepare(*args)
                    if not isinstance(p_off, str):
                        pr.host("ac.run, fast call off (cupy.empty workspace, {Tensor: ptr} execute)",
                                lambda: ac.run(p_off, q, k, v, None, causal), ctx)
                    pr.one("ua call, fast call off", lambda: ua.scaled_dot_product_attention(q, k, v, is_causal=causal),
                           ctx)
                finally:
                    setattr(ac, switch, saved)
            pr.host("front end plan (nn._plan_attention, no run)",
                    lambda: ua_nn._plan_attention(q, k, v, is_causal=causal), ctx)
            pr.host("argument checks (check_attention)",
                    lambda: check_attention("cupy", q, k, v, None, causal, None, "bhsd", BACKEND.dtype_name), ctx)
            pr.host("backend attention_plan (no run)",
                    lambda: BACKEND.attention_plan(q, k, v, None, spec, scale, "bhsd", "highest"), ctx)
            pr.host("backend attention_plan + run",
                    lambda: BACKEND.attention_plan(q, k, v, None, spec, scale, "bhsd", "highest").run(), ctx)
            pr.host("ac.prepare", lambda: ac.prepare(*args), ctx)
            p = ac.prepare(*args)
            if isinstance(p, str):
                pr.notes.append(f"{dtype} causal={causal}: prepare refused: {p}")
                continue
            pr.host("ac.run (prepared)", lambda: ac.run(p, q, k, v, None, causal), ctx)
            pr.host("ac.describe", lambda: ac.describe(p, causal), ctx)
            pr.host("ac.sdpa (prepare + run)", lambda: ac.sdpa(*args), ctx)
            built, graph, h = p.built, p.built.graph, p.handle
            out_shape = p.out_shape
            pr.host("cupy.empty(out)", lambda: cupy.empty(out_shape, dtype=q.dtype), ctx)
            wsize = max(built.workspace, 1)
            pr.host("cupy.empty(workspace)", lambda: cupy.empty((wsize,), dtype=cupy.uint8), ctx)
            pr.host("cupy.cuda.get_current_stream().ptr", lambda: cupy.cuda.get_current_stream().ptr, ctx)
            stream = cupy.cuda.get_current_stream().ptr
            pr.host("cudnn.set_stream(handle, stream)", lambda: cudnn.set_stream(h, stream), ctx)
            pr.host("q.shape, q.strides, q.dtype.name, q.data.ptr, q.device.id",
                    lambda: (q.shape, q.strides, q.dtype.name, q.data.ptr, q.device.id), ctx)
            out = cupy.empty(out_shape, dtype=q.dtype)
            ws = cupy.empty((wsize,), dtype=cupy.uint8)
            wsp = ws.data.ptr
            ptrs = [q.data.ptr, k.data.ptr, v.data.ptr, out.data.ptr]
            tensors = built.tensors[:4]
            meta.setdefault("graphs", []).append({**ctx, "workspace": built.workspace, "plan": built.plan,
                                                  "graph_type": f"{type(graph).__module__}.{type(graph).__name__}"})

            def form(name: str, fn: Callable[[], Any]) -> None:
                out.fill(0)
                try:
                    fn()
                    pr.check(name, ref, out, ctx)
                except Exception as e:
                    pr.steps.append({**ctx, "kind": "host", "step": name,
                                     "error": f"{type(e).__name__}: {str(e)[:300]}"})
                    return
                pr.host(name, fn, ctx)
                pr.one(name, fn, ctx)

            launch = getattr(p, "launch", None)
            if launch is not None:
                form("p.launch (the fast call's execute, as the route runs it)", lambda: launch(*ptrs))
                chosen = getattr(launch, "chosen", None)
                meta.setdefault("launch_form", {})[f"{dtype}/{causal}"] = getattr(chosen, "__name__", repr(chosen))
            form("execute({Tensor: ptr}) (the route before the fast call)",
                 lambda: graph.execute(dict(zip(tensors, ptrs, strict=True)), wsp, handle=h))
            try:
                uids = [uid_of(t) for t in tensors]
                meta.setdefault("uids", {})[f"{dtype}/{causal}"] = uids
            except Exception as e:
                uids = None
                pr.notes.append(f"uids: {type(e).__name__}: {e}")
            if uids is not None:
                form("execute({uid: ptr})", lambda: graph.execute(dict(zip(uids, ptrs, strict=True)), wsp, handle=h))
                pack = dict(zip(uids, ptrs, strict=True))
                form("execute({uid: ptr}) prebuilt dict (lower bound of the dict forms)",
                     lambda: graph.execute(pack, wsp, handle=h))
                form("execute({uid: cupy array}, workspace array)",
                     lambda: graph.execute(dict(zip(uids, (q, k, v, out), strict=True)), ws, handle=h))
                form("execute(tuple of ptrs, tensor_uids=uids)",
                     lambda: graph.execute(tuple(ptrs), wsp, handle=h, tensor_uids=tuple(uids)))
            index = getattr(graph, "_plan_index", 0)
            form("execute_plan_at_index({Tensor: ptr})",
                 lambda: graph.execute_plan_at_index(dict(zip(tensors, ptrs, strict=True)), wsp, index=index, handle=h))
            # The lowered graph's raw pointer array, in the backend's uid order (frontends that have it).
            try:
                low = getattr(graph, "_lowered_graph", None) or graph
                low._prepare_variant_pack_template()
                order = [int(u) for u in low._get_variant_pack_uids_sorted()]
                meta.setdefault("sorted_uids", {})[f"{dtype}/{causal}"] = order
                assert uids is not None and sorted(order) == sorted(uids), (order, uids)
                pos = [uids.index(u) for u in order]
                arr_t = ctypes.c_int64 * len(order)
                cpp = -1
                try:
                    cfg = graph._materialize_backend_plan(graph._plan_index)
                    cpp = -1 if cfg.cpp_index is None else int(cfg.cpp_index)
                except Exception as e:
                    pr.notes.append(f"cpp_index: {type(e).__name__}: {e}")
                meta.setdefault("cpp_index", {})[f"{dtype}/{causal}"] = cpp
                hb = backend_handle(cudnn, h)
                fixed = arr_t(*(ptrs[i] for i in pos))
                form("_execute_with_raw_ptrs (array built per call)",
                     lambda: low._execute_with_raw_ptrs(ctypes.addressof(arr_t(*(ptrs[i] for i in pos))), len(pos),
                                                        wsp, hb, cpp))
                form("_execute_with_raw_ptrs (array prebuilt)",
                     lambda: low._execute_with_raw_ptrs(ctypes.addressof(fixed), len(pos), wsp, hb, cpp))
                form("lowered _execute({uid: ptr})",
                     lambda: low._execute(dict(zip(uids, ptrs, strict=True)), wsp, hb))
            except Exception as e:
                pr.steps.append({**ctx, "kind": "host", "step": "_execute_with_raw_ptrs (setup)",
                                 "error": f"{type(e).__name__}: {str(e)[:300]}"})
            # CUDA-graph replay of one execute captured on a side stream (pointers fixed at capture).
            try:
                s = cupy.cuda.Stream(non_blocking=True)
                cudnn.set_stream(h, s.ptr)
                with s:
                    graph.execute(dict(zip(tensors, ptrs, strict=True)), wsp, handle=h)
                    s.synchronize()
                    s.begin_capture()
                    try:
                        graph.execute(dict(zip(tensors, ptrs, strict=True)), wsp, handle=h)
                    finally:
                        cg = s.end_capture()  # always ends the capture, so the stream stays usable
                    out.fill(0)
                    cg.launch(s)
                    s.synchronize()
                    pr.check("CUDA graph launch", ref, out, ctx)
                    pr.host("CUDA graph launch (replay, fixed pointers)", lambda: cg.launch(s), ctx)
                    pr.one("CUDA graph launch (replay, fixed pointers)", lambda: cg.launch(s), ctx, stream=s)
            except Exception as e:
                pr.steps.append({**ctx, "kind": "host", "step": "CUDA graph capture/replay",
                                 "error": f"{type(e).__name__}: {str(e)[:300]}"})
            finally:
                cudnn.set_stream(h, cupy.cuda.get_current_stream().ptr)
                # The route's handle state is per thread and may remember the stream it last set.
                for attr in ("_STREAMS", "streams"):
                    cache = getattr(getattr(ac, "_HANDLES", None), attr, None)
                    if isinstance(cache, dict):
                        cache.clear()
            low = getattr(graph, "_lowered_graph", None)
            meta.setdefault("methods", {})[f"{dtype}/{causal}"] = {
                "graph": sorted(m for m in dir(graph) if "execute" in m or "cuda_graph" in m or "variant" in m),
                "lowered": sorted(m for m in dir(low) if "execute" in m or "cuda_graph" in m or "variant" in m)
                if low is not None else None}
            pr.one("ua.scaled_dot_product_attention (one call)",
                   lambda: ua.scaled_dot_product_attention(q, k, v, is_causal=causal), ctx)
    assert "torch" not in sys.modules, "torch was imported"
    meta["cupy_process_s"] = round(time.perf_counter() - t0, 1)
    torch_info = run_torch_child()
    write(meta, pr, torch_info)


def write(meta: dict[str, Any], pr: Probe, torch_info: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    meta.update({k: torch_info.get(k) for k in ("torch", "torch_cudnn") if k in torch_info})
    if torch_info.get("error"):
        pr.notes.append(f"torch child: {torch_info['error'][-500:]}")
    data = {"meta": meta, "steps": pr.steps, "torch": torch_info.get("rows", []), "notes": pr.notes}
    (OUT / "cudnn_host.json").write_text(json.dumps(data, indent=1, default=str))
    lines = [f"# Host cost of ua.scaled_dot_product_attention on CuPy through cuDNN, {meta['device']}", "",
             f"Shape {tuple(SHAPE)}; {meta['cudnn']}; CuPy {meta['cupy']}; torch {meta.get('torch')} "
             f"(cuDNN {meta.get('torch_cudnn')}, child process); Python {meta['python']}.", "",
             "Host: perf_counter_ns around one call, device synchronized between calls, median of "
             f"{N} (p10/p90). Device: CUDA events around ONE call on an idle GPU, median of {ONE}; "
             "loop: 20 calls back to back, per call.", ""]
    for dtype in ("float16", "bfloat16"):
        for causal in (False, True):
            rows = [s for s in pr.steps if (s["dtype"], s["causal"]) == (dtype, causal)]
            if not rows:
                continue
            t = next((r for r in torch_info.get("rows", []) if (r["dtype"], r["causal"]) == (dtype, causal)), {})
            lines += [f"## {dtype}, causal={causal}", "", "| step | host µs (p10-p90) | one call ms | loop ms | "
                      "ratio torch one / this one | check |", "|---|---:|---:|---:|---:|---|"]
            if t:
                lines.append(f"| torch F.sdpa (cuDNN), child | {t.get('host_us', 0):.1f} | {t.get('one_ms', 0):.4f} | "
                             f"{t.get('loop_ms', 0):.4f} | 1 | {t.get('error', '')} |")
            by: dict[str, dict[str, Any]] = {}
            for r in rows:
                by.setdefault(r["step"], {}).update({r["kind"]: r})
            for step, kinds in by.items():
                h, d, c = kinds.get("host", {}), kinds.get("device", {}), kinds.get("check", {})
                hs = f"{h['us']:.1f} ({h['p10']:.1f}-{h['p90']:.1f})" if "us" in h else h.get("error", "-")
                one = f"{d['one_ms']:.4f}" if "one_ms" in d else d.get("error", "-")
                loop = f"{d['loop_ms']:.4f}" if "loop_ms" in d else "-"
                ratio = f"{t['one_ms'] / d['one_ms']:.3f}" if "one_ms" in d and t.get("one_ms") else "-"
                chk = (("bit-equal" if c["bit_equal"] else f"max diff {c['max_abs_diff']:.3g}") if "bit_equal" in c
                       else c.get("error", ""))
                lines.append(f"| {step} | {hs} | {one} | {loop} | {ratio} | {chk} |")
            lines.append("")
    for name in ("launch_form", "cpp_index", "uids", "sorted_uids", "graphs", "methods"):
        if name in meta:
            lines.append(f"- {name}: `{json.dumps(meta[name], default=str)[:1500]}`")
    lines.append("")
    if pr.notes:
        lines += ["Notes:", ""] + [f"- {n}" for n in pr.notes]
    (OUT / "cudnn_host.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if "--torch" in sys.argv:
        torch_child()
    else:
        try:
            cupy_only()
        except SystemExit:
            raise
        except Exception:
            traceback.print_exc()
            raise
