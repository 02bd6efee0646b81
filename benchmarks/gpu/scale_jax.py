"""What do JAX attention, a matmul and a sum gain on 2 GPUs through unarray against 1 GPU's best native call?

Scaling JAX over GPUs: causal attention, a matmul and a sum, on 1 GPU (JAX's best native call) against 2 GPUs
(unarray on arrays sharded over a 2-device mesh).

- Attention: bfloat16, causal, B=1, H=16, D=128, layout bshd, S = 32k, 64k, 128k, 256k, ... 1 GPU runs
  ``jax.nn.dot_product_attention(implementation="cudnn")``; 2 GPUs run ``ua.scaled_dot_product_attention`` on
  q, k, v sharded along S (``NamedSharding(mesh, P(None, "s"))``), which is unarray's ring (its ``ua.explain``
  text is recorded). Sizes grow until the 1-GPU run fails (out of memory, recorded as "OOM") and the 2-GPU run
  goes one size further, or until the time budget would be exceeded (recorded as "skipped: time budget").
  TFLOP/s counts the causal half: 2*B*H*S*S*D per call.
- Matmul: 16384 x 16384 bfloat16 @ 16384 x 16384; 2 GPUs: the left operand's rows sharded, the right one
  replicated (``ua.matmul`` keeps the rows sharded). TFLOP/s = 2*N^3 / t.
- Sum: 8 GiB of float32; 2 GPUs: sharded in halves (``ua.sum``: two partial sums and an all-reduce).
  TB/s = bytes read / t.

Timing: JAX has no device events, so each call is timed by the wall clock around ``block_until_ready()``;
2 warm-up calls (the first compiles), then the median of up to 10 timed calls (fewer where a call is long).
Peak memory per GPU: ``device.memory_stats()["peak_bytes_in_use"]``, reset by running every configuration in
a fresh subprocess (``XLA_PYTHON_CLIENT_PREALLOCATE=false``, so the peak is what the program used).
At the smallest size the 2-GPU attention output is compared with the 1-GPU cuDNN output (max abs error).

    python benchmarks/gpu/scale_jax.py --out DIR     # writes DIR/scale_jax.{json,md,svg}
    python benchmarks/gpu/scale_jax.py --out DIR --sizes 32k,64k,128k,1M --what attention
        # just those sizes, attention only; a summary line (speed-up, peak GiB per GPU) per size
    python benchmarks/gpu/scale_jax.py --out DIR --sizes 32k,64k --what routes,attention --routes split,ring
        # the split against the ring (values, gradients), then the sharded side once per route ("auto": the rule's)
"""

# ruff: noqa: T201
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time
from typing import Any

from sizes import parse as parse_sizes  # (this script's folder, first on sys.path)

ROOT = pathlib.Path(__file__).resolve().parents[2]
B, H, D = 1, 16, 128
MATMUL_N = 16384
SUM_BYTES = 8 << 30
SIZES = [32768, 65536, 131072, 262144, 524288, 1048576]


# ---------------------------------------------------------------- child: one configuration per process
def _timed(fn: Any, args: tuple[Any, ...], budget_s: float = 20.0) -> tuple[float, int]:
    for _ in range(2):
        fn(*args).block_until_ready()
    t0 = time.perf_counter()
    fn(*args).block_until_ready()
    first = time.perf_counter() - t0
    reps = max(1, min(10, int(budget_s / max(first, 1e-6))))
    times = [first]
    for _ in range(reps - 1):
        t0 = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def _peaks(devices: list[Any]) -> list[int]:
    return [int((d.memory_stats() or {}).get("peak_bytes_in_use", 0)) for d in devices]


def _random(shape: tuple[int, ...], dtype: Any, sharding: Any, seed: int) -> Any:
    import jax

    # Made on the devices (no host transfer), already in their final placement.
    return jax.jit(lambda k: jax.random.normal(k, shape, dtype), out_shardings=sharding)(jax.random.key(seed))


def child(cfg: dict[str, Any]) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    sys.path.insert(0, str(ROOT))
    import unarray as ua

    gpus = int(cfg["gpus"])
    devices = jax.devices()[:gpus]
    if len(devices) < gpus:
        return {**cfg, "status": f"skipped: {len(devices)} GPU(s) here"}
    mesh = Mesh(np.array(devices), ("s",))
    out: dict[str, Any] = dict(cfg)
    try:
        if cfg["what"] == "attention":
            s = int(cfg["S"])
            spec = P(None, "s") if gpus > 1 else P()
            sh = NamedSharding(mesh, spec)
            q, k, v = (_random((B, s, H, D), jnp.bfloat16, sh, i) for i in range(3))
            if gpus == 1:
                fn = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True,
                                                                          implementation="cudnn"))
                out["kernel"] = "jax.nn.dot_product_attention(implementation='cudnn')"
            else:
                from unarray._backends.jax import attention_ring

                # this process's route (one per child); "ROUTE@G" also forces G head groups
                route, _, groups = (cfg.get("route") or "auto").partition("@")
                attention_ring.PREFER.set(route)
                if groups:
                    attention_ring._groups = lambda *a, **kw: int(groups)  # type: ignore[assignment]

                def fn(q: Any, k: Any, v: Any) -> Any:
                    return ua.scaled_dot_product_attention(q, k, v, is_causal=True, layout="bshd")

            t, n = _timed(fn, (q, k, v))
            # (the peak of the calls themselves: the check below gathers whole arrays on device 0)
            out["peak_bytes_per_gpu"] = _peaks(devices)
            if gpus > 1:  # read after the calls: a kernel refused while compiling shows as its fallback
                out["kernel"] = ua.explain("scaled_dot_product_attention", q, k, v, is_causal=True,
                                           layout="bshd").kernel
            out.update(seconds=t, calls=n, tflops=2.0 * B * H * s * s * D / t / 1e12)
            if gpus > 1 and cfg.get("check"):
                got = fn(q, k, v)
                one = [jax.device_put(a, devices[0]) for a in (q, k, v)]
                ref = jax.nn.dot_product_attention(*one, is_causal=True, implementation="cudnn")
                out["max_abs_err_vs_1gpu"] = float(jnp.max(jnp.abs(jax.device_put(got, devices[0]).astype(
                    jnp.float32) - ref.astype(jnp.float32))))
        elif cfg["what"] == "routes":
            out["checks"] = _routes_agree(mesh, ua)
        elif cfg["what"] == "matmul":
            n_ = MATMUL_N
            a = _random((n_, n_), jnp.bfloat16, NamedSharding(mesh, P("s", None) if gpus > 1 else P()), 0)
            b = _random((n_, n_), jnp.bfloat16, NamedSharding(mesh, P()), 1)
            t, n = _timed(ua.matmul, (a, b))
            res = ua.matmul(a, b)
            out.update(seconds=t, calls=n, tflops=2.0 * n_ ** 3 / t / 1e12, out_spec=str(res.sharding.spec))
        else:
            rows = SUM_BYTES // 4 // 65536
            x = _random((rows, 65536), jnp.float32, NamedSharding(mesh, P("s", None) if gpus > 1 else P()), 0)
            t, n = _timed(ua.sum, (x,))
            out.update(seconds=t, calls=n, tbps=SUM_BYTES / t / 1e12)
        out["status"] = "ok"
    except Exception as e:  # noqa: BLE001  (an OOM is a result)
        text = f"{type(e).__name__}: {e}"
        oom = any(w in text for w in ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory", "OOM"))
        out["status"] = "OOM" if oom else "error"
        out["error"] = text[:600]
    out.setdefault("peak_bytes_per_gpu", _peaks(devices))
    return out


def _routes_agree(mesh: Any, ua: Any) -> list[dict[str, Any]]:
    # The two-device split against the ring on the GPUs' own kernels, S = 4096: outputs and gradients (bf16
    # with Hk 16 and 4 through cuDNN's blocks, float32 through the jnp blocks).
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from unarray._backends.jax import attention_ring

    sh = NamedSharding(mesh, P(None, "s"))
    rng = np.random.default_rng(0)
    rows = []
    for dtype, hk in (("bfloat16", H), ("bfloat16", 4), ("float32", H)):
        arrs = [rng.standard_normal((1, 4096, h, D)).astype(np.float32) for h in (H, hk, hk)]
        q, k, v = (jax.device_put(jnp.asarray(a, dtype), sh) for a in arrs)
        got = {}
        for route in ("split", "ring"):
            token = attention_ring.PREFER.set(route)
            try:
                def f(q: Any, k: Any, v: Any) -> Any:
                    return ua.scaled_dot_product_attention(q, k, v, is_causal=True, layout="bshd")

                grads = jax.grad(lambda q, k, v: jnp.sum(f(q, k, v).astype(jnp.float32) ** 2),
                                 argnums=(0, 1, 2))(q, k, v)
                got[route] = (np.asarray(f(q, k, v), np.float32), [np.asarray(g, np.float32) for g in grads],
                              ua.explain("scaled_dot_product_attention", q, k, v, is_causal=True,
                                         layout="bshd").kernel.split(" (", 1)[-1][:32])
            finally:
                attention_ring.PREFER.reset(token)
        (o1, g1, k1), (o2, g2, k2) = got["split"], got["ring"]
        rows.append({"dtype": dtype, "Hk": hk, "routes": [k1, k2], "out_max_abs_diff": float(np.max(np.abs(o1 - o2))),
                     "grad_max_rel_diff": [float(np.max(np.abs(a - b)) / (1 + np.max(np.abs(b))))
                                           for a, b in zip(g1, g2, strict=True)]})
    return rows


# ---------------------------------------------------------------- parent
def run_child(cfg: dict[str, Any], timeout: float) -> dict[str, Any]:
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(int(cfg["gpus"])))
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, __file__, "--child", json.dumps(cfg)], capture_output=True, text=True,
                           env=env, timeout=max(timeout, 5))
    except subprocess.TimeoutExpired:
        return {**cfg, "status": "skipped: time budget (killed)", "wall_s": time.perf_counter() - t0}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        text = p.stderr[-600:]
        oom = "RESOURCE_EXHAUSTED" in p.stderr or "out of memory" in p.stderr.lower()
        return {**cfg, "status": "OOM" if oom else "error", "error": text, "wall_s": time.perf_counter() - t0}
    res: dict[str, Any] = json.loads(lines[-1])
    res["wall_s"] = round(time.perf_counter() - t0, 1)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--child", default=None)
    ap.add_argument("--gpus", type=int, default=2, help="the sharded side's GPU count (2 on the two-H200 host)")
    ap.add_argument("--budget", type=float, default=330.0, help="seconds for the whole script")
    ap.add_argument("--sizes", default="", help="attention sequence lengths, e.g. 32k,64k,128k,1M")
    ap.add_argument("--what", default="matmul,sum,attention",
                    help="comma-separated sections (also: routes, the split against the ring)")
    ap.add_argument("--routes", default="auto", help="the sharded side's routes, e.g. auto,ring,split (PREFER); "
                    "ROUTE@G forces G head groups, e.g. split@4")
    a = ap.parse_args()
    sizes = parse_sizes(a.sizes) or SIZES
    what_list = a.what.split(",")
    if a.child is not None:
        print(json.dumps(child(json.loads(a.child))))
        return 0
    start = time.perf_counter()

    def left() -> float:
        return a.budget - (time.perf_counter() - start)

    rows: list[dict[str, Any]] = []
    if "routes" in what_list:  # the split against the ring, values and gradients, before any timing
        rows.append(run_child({"what": "routes", "gpus": a.gpus}, min(180.0, left())))
        print(json.dumps(rows[-1]), flush=True)
    for what in [w for w in ("matmul", "sum") if w in what_list]:
        for g in (1, a.gpus):
            rows.append(run_child({"what": what, "gpus": g}, min(90.0, left())))
            print(json.dumps(rows[-1]), flush=True)
    failed_at: int | None = None  # the size where the 1-GPU run first failed
    last_t: dict[int, float] = {}
    for s in sizes if "attention" in what_list else []:
        if failed_at is not None and s > 2 * failed_at and not a.sizes:
            break  # the sharded side ran the failing size and one more
        for g, route in [(1, "")] + [(a.gpus, r) for r in a.routes.split(",")]:
            if g == 1 and failed_at is not None:
                continue
            # A call costs ~4x the last size's; ~12 calls plus ~25 s of start-up must fit the budget.
            guess = 4.0 * last_t.get(g, 0.0) * 12 + 25
            cfg = {"what": "attention", "gpus": g, "S": s, "check": s == sizes[0], "route": route}
            if guess > left() and not (a.sizes and left() > 60):
                rows.append({**cfg, "status": "skipped: time budget"})
            else:
                rows.append(run_child(cfg, min(240.0, left())))
            r = rows[-1]
            print(json.dumps(r), flush=True)
            if r.get("status") == "ok":
                last_t[g] = float(r["seconds"])
            elif g == 1 and failed_at is None:
                failed_at = s
        one = [r for r in rows if r.get("S") == s and r["gpus"] == 1 and r.get("status") == "ok"]
        for two in ([r] for r in rows if r.get("S") == s and r["gpus"] == a.gpus and r.get("status") == "ok"):
            if not one:
                break
            ratio = one[0]["seconds"] / two[0]["seconds"]
            p1, p2 = (_gib(r[0].get("peak_bytes_per_gpu")) for r in (one, two))
            peaks = f"1 GPU {p1}, {a.gpus} GPUs {p2}"
            print(f"SUMMARY S={s // 1024}k route {two[0].get('route') or 'auto'} | {a.gpus} GPUs / 1: {ratio:.2f}x | "
                  f"peak GiB per GPU: {peaks}", flush=True)
        if all(str(r.get("status", "")).startswith("skipped") for r in rows if r.get("S") == s):
            break
    write(pathlib.Path(a.out), rows, a.gpus, time.perf_counter() - start)
    return 0


def _gib(b: Any) -> str:
    return "/".join(f"{x / 2**30:.2f}" for x in b) if b else "-"


def write(out: pathlib.Path, rows: list[dict[str, Any]], gpus: int, wall: float) -> None:
    import platform

    out.mkdir(parents=True, exist_ok=True)
    meta = {"host": platform.node(), "gpus": gpus, "wall_s": round(wall, 1),
            "timing": "wall clock around block_until_ready (JAX has no device events); median after 2 warm-ups",
            "peak": "memory_stats()['peak_bytes_in_use'] per GPU, each configuration in a fresh process"}
    try:
        import jax

        meta["jax"] = jax.__version__
    except Exception:  # noqa: BLE001
        pass
    (out / "scale_jax.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = [f"# JAX over {gpus} GPUs vs 1 ({meta.get('jax', '?')}, {meta['host']})", "",
             f"Timing: {meta['timing']}. Peak memory: {meta['peak']}.", "",
             "| what | size | GPUs | status | time (ms) | TFLOP/s or TB/s | peak GiB per GPU | kernel / note |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["what"] == "routes":
            for c in r.get("checks", []):
                lines.append(f"| split vs ring | S=4096 {c['dtype']} Hk={c['Hk']} | {r['gpus']} | {r.get('status')} "
                             f"| - | - | - | output max abs diff {c['out_max_abs_diff']:.3g}; gradients max rel "
                             f"diff {max(c['grad_max_rel_diff']):.3g} ({' / '.join(c['routes'])}) |")
            if r.get("error"):
                lines.append(f"| split vs ring | - | {r['gpus']} | {r.get('status')} | - | - | - | "
                             f"{r['error'][:160]} |")
            continue
        size = f"S={r['S']}" if "S" in r else (f"{MATMUL_N}^2 bf16" if r["what"] == "matmul" else "8 GiB f32")
        rate = f"{r['tflops']:.1f} TFLOP/s" if "tflops" in r else f"{r['tbps']:.2f} TB/s" if "tbps" in r else "-"
        ms = f"{r['seconds'] * 1e3:.2f}" if "seconds" in r else "-"
        note = (f"route {r['route']}: " if r.get("route") else "") + r.get("kernel", r.get("out_spec", ""))
        if "max_abs_err_vs_1gpu" in r:
            note += f"; max abs err vs 1 GPU {r['max_abs_err_vs_1gpu']:.3g}"
        if r.get("error"):
            note += " " + r["error"][:160].replace("|", "/").replace("\n", " ")
        lines.append(f"| {r['what']} | {size} | {r['gpus']} | {r.get('status', '?')} | {ms} | {rate} | "
                     f"{_gib(r.get('peak_bytes_per_gpu'))} | {note[:220]} |")
    speed = []
    for s in SIZES:
        one = [r for r in rows if r.get("S") == s and r["gpus"] == 1 and r.get("status") == "ok"]
        two = [r for r in rows if r.get("S") == s and r["gpus"] == gpus and r.get("status") == "ok"]
        for r in two if one else []:
            speed.append(f"S={s} {r.get('route') or 'auto'}: {r['tflops'] / one[0]['tflops']:.2f}x")
    lines += ["", f"Attention throughput, {gpus} GPUs / 1: " + (", ".join(speed) or "-")]
    (out / "scale_jax.md").write_text("\n".join(lines) + "\n")
    (out / "scale_jax.svg").write_text(_svg(rows, gpus))


def _svg(rows: list[dict[str, Any]], gpus: int) -> str:
    # TFLOP/s against S (log2 axis), one line per GPU count; written by hand (no plotting library needed).
    w, h, pad = 640, 400, 60
    pts = {g: [(r["S"], r["tflops"]) for r in rows if r.get("what") == "attention" and r["gpus"] == g
               and r.get("status") == "ok"] for g in (1, gpus)}
    xs = [s for p in pts.values() for s, _ in p] or [SIZES[0]]
    ys = [t for p in pts.values() for _, t in p] or [1.0]
    import math

    lo, hi = math.log2(min(xs)), math.log2(max(xs)) + 1e-9
    top = max(ys) * 1.15

    def xy(s: float, t: float) -> tuple[float, float]:
        return (pad + (math.log2(s) - lo) / max(hi - lo, 1) * (w - 2 * pad), h - pad - t / top * (h - 2 * pad))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
             'font-size="12">', f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
             f'<text x="{w / 2}" y="{h - 15}" text-anchor="middle">sequence length S (causal bf16, B1 H16 D128)'
             '</text>', f'<text x="15" y="{h / 2}" transform="rotate(-90 15 {h / 2})" text-anchor="middle">'
             'TFLOP/s</text>']
    for s in sorted(set(xs)):
        x, _ = xy(s, 0)
        parts.append(f'<text x="{x}" y="{h - pad + 16}" text-anchor="middle">{s // 1024}k</text>')
    for frac in (0.25, 0.5, 0.75, 1.0):
        _, y = xy(min(xs), top * frac / 1.15)
        parts.append(f'<text x="{pad - 6}" y="{y + 4}" text-anchor="end">{top * frac / 1.15:.0f}</text>')
    for g, colour in ((1, "#1f77b4"), (gpus, "#d62728")):
        p = sorted(pts[g])
        if p:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(s, t) for s, t in p))
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for s, t in p:
                x, y = xy(s, t)
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>')
        label = "1 GPU: jax.nn cuDNN" if g == 1 else f"{gpus} GPUs: unarray ring"
        parts.append(f'<text x="{w - pad - 150}" y="{pad + (15 if g == 1 else 32)}" fill="{colour}">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
