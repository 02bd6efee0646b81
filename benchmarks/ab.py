"""Does one checkout's per-call cost differ from another's (dispatch and handoff, in one run)?

    python benchmarks/ab.py --base OLD_CHECKOUT [--new .] [--rounds 5] [--backends numpy,torch,jax]
                            [--handoff cpu|gpu|none] [--out DIR]

Runs the two checkouts in alternating rounds (base, new, base, new, ...) so that host drift reaches both
alike. Dispatch: this checkout's benchmarks/dispatch.py with ``--tree`` pointing at each checkout (the same
harness times both). Handoff: each checkout's own handoff benchmark (benchmarks/handoff.py, or
benchmarks/gpu/handoff_gpu.py with ``--handoff gpu``), since it reads that checkout's internals. Each figure
is unarray's time over the native call's in the same round; the report gives, per row, the median over
rounds of new/base of that ratio (1.00: no change; 1.03: 3% more per call than the native call costs).
Writes ``ab.md`` and ``ab.json`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _dispatch(tree: Path, backends: str, ops: str, out: Path, tag: str) -> dict[tuple[str, str], float]:
    subprocess.run([sys.executable, str(HERE / "dispatch.py"), "--tree", str(tree), "--backends", backends,
                    "--ops", ops, "--stat", "min", "--out", str(out), "--tag", tag], check=True,
                   stdout=subprocess.DEVNULL)
    rows = json.loads((out / f"dispatch_{tag}.json").read_text())["rows"]
    return {(r["backend"], r["op"]): r["unarray_us"] / r["native_us"] for r in rows}


def _handoff(tree: Path, kind: str, out: Path, tag: str) -> dict[tuple[str, str], float]:
    # the checkout first; the rest of the path stays (packages installed beside it, e.g. with --target)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH")) if p)}
    if kind == "gpu":
        env["OUT"] = str(out / tag)
        env.setdefault("PASSES", "2")
        # the matrix section only (the script's other sections time streams and loops that no A/B row reads)
        run = ("import runpy, sys; sys.path.insert(0, 'benchmarks/gpu'); "
               "m = runpy.run_path('benchmarks/gpu/handoff_gpu.py', run_name='ab'); m['matrix'](); m['write']()")
        subprocess.run([sys.executable, "-c", run], cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
        result = json.loads((out / tag / "handoff_gpu.json").read_text())
        if result.get("errors", {}).get("matrix"):  # a failed section is recorded, not raised: say so
            print(f"{tag}: the GPU handoff matrix failed:\n{result['errors']['matrix']}", flush=True)
        rows = result.get("matrix", [])
    else:
        subprocess.run([sys.executable, "benchmarks/handoff.py", "--out", str(out), "--stem", tag, "--n", "300"],
                       cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
        rows = json.loads((out / f"{tag}.json").read_text())["rows"]
    got: dict[tuple[str, str], float] = {}
    for r in rows if isinstance(rows, list) else []:
        native = r.get("native_us")
        if isinstance(native, dict):  # the GPU matrix times every native path: the fastest one
            native = min(native.values()) if native else None
        for col in ("first_us", "repeated_us", "repeated_loop_us"):
            if native and r.get(col):
                got[(f"{r.get('src')}->{r.get('dst')}", col[:-3])] = r[col] / native
    return got


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", required=True, help="the checkout compared against")
    p.add_argument("--new", default=str(HERE.parent), help="the checkout measured (default: this one)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--backends", default="numpy,torch,jax")
    p.add_argument("--ops", default="matmul,sum,mean,argmax,permute_dims,add,multiply,less,matmul_tf32")
    p.add_argument("--handoff", choices=("cpu", "gpu", "none"), default="cpu")
    p.add_argument("--out", default="out")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    trees = {"base": Path(args.base).resolve(), "new": Path(args.new).resolve()}
    seen: dict[str, dict[str, list[dict[tuple[str, str], float]]]] = {"dispatch": {}, "handoff": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name, tree in trees.items():
                tag = f"{name}{r}"
                seen["dispatch"].setdefault(name, []).append(
                    _dispatch(tree, args.backends, args.ops, Path(tmp), tag))
                if args.handoff != "none":
                    seen["handoff"].setdefault(name, []).append(_handoff(tree, args.handoff, Path(tmp), tag))
                print(f"round {r + 1}/{args.rounds}: {name} done", flush=True)
            _write(out, trees, r + 1, seen)  # after every round: a run cut short keeps its finished rounds


def _write(out: Path, trees: dict[str, Path], rounds: int,
           seen: dict[str, dict[str, list[dict[tuple[str, str], float]]]]) -> None:
    report: dict[str, Any] = {"base": str(trees["base"]), "new": str(trees["new"]), "rounds": rounds,
                              "rows": []}
    lines = [f"# A/B: {trees['new']} against {trees['base']}", "",
             f"{rounds} alternating rounds; per row the median over rounds of (new unarray/native) / "
             "(base unarray/native), and the two ratios' medians.", "",
             "| what | row | base unarray/native | new unarray/native | new/base |", "|---|---|---|---|---|"]
    for what, by_tree in seen.items():
        if not by_tree:
            continue
        keys = sorted(set.intersection(*(set(d) for runs in by_tree.values() for d in runs)))
        for key in keys:
            b = [d[key] for d in by_tree["base"]][:rounds]
            n = [d[key] for d in by_tree["new"]][:rounds]
            change = statistics.median(x / y for x, y in zip(n, b, strict=True))
            row = {"what": what, "row": " ".join(key), "base": statistics.median(b), "new": statistics.median(n),
                   "new_over_base": change}
            report["rows"].append(row)
            lines.append(f"| {what} | {row['row']} | {row['base']:.3f} | {row['new']:.3f} | {change:.3f} |")
    (out / "ab.json").write_text(json.dumps(report, indent=1))
    (out / "ab.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
