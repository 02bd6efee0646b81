"""The worker processes: each backend and device runs its cases in a child process
(``python -m unarray.conformance.worker SPEC``), so a case that aborts the process (a native
crash) costs that case only. ``run_worker`` starts the child and resumes after such a case;
``_worker`` is the child's side, one ``START i`` and ``RESULT {...}`` line per case on stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from typing import Any

from unarray import _backends
from unarray._devices import parse_device
from unarray.conformance.cases import select_cases
from unarray.conformance.check import handoff_case, run_case, short
from unarray.conformance.results import Env, Result


def setup(name: str) -> None:
    # The library's global modes the cases need (its Backend.conformance_setup: JAX's x64 mode), in this process.
    try:
        _backends.get(name).conformance_setup()
    except Exception:  # noqa: BLE001 - not installed or broken: its cases report it
        pass


def run_worker(spec: dict[str, Any], labels: list[tuple[str, str, str]], env: Env,
                record: Callable[[Result], None]) -> list[Result]:
    """Run ``spec`` in a child process, resuming after a case that kills it."""
    out: list[Result] = []

    def emit(r: Result) -> None:
        out.append(r)
        record(r)

    # Note: several workers may share one GPU; JAX must not grab most of its memory up front.
    # TensorFlow's C++ log lines (start-up notices, warnings) are silenced: a crash's tail stays readable.
    child_env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false", "TF_CPP_MIN_LOG_LEVEL": "3"}
    start = barren = 0
    while start < len(labels):
        cmd = [sys.executable, "-m", "unarray.conformance.worker", json.dumps({**spec, "start": start})]
        # Note: stderr goes to a file, not a pipe: a chatty framework would fill a pipe and stall the worker.
        with tempfile.TemporaryFile("w+") as errfile:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errfile, text=True, env=child_env)
            current, started = start, False
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("UNAVAILABLE "):  # the backend's framework failed to import: one row says so
                    why = short(json.loads(line[12:]))
                    emit(Result("(backend)", "import and devices", "-", env.backend, "-", "-", "unavailable", None,
                                why))
                    proc.wait()
                    return out
                if line.startswith("START "):
                    current, started = int(line.split()[1]), True
                elif line.startswith("RESULT "):
                    emit(Result(**json.loads(line[7:])))
                    current += 1
            rc = proc.wait()
            errfile.seek(0)
            err = errfile.read()[-20000:]
        if current >= len(labels):
            return out
        op, form, dtype = labels[current]
        lines = err.strip().splitlines()
        key = [ln for ln in lines if any(w in ln for w in ("Check failed", "Error", "Fatal", "Segmentation",
                                                            "Aborted", "terminate"))]
        tail = short(" | ".join((key or lines)[-3:]), 400)
        backend = env.backend if spec["mode"] == "cases" else spec["checks"][current][0]
        emit(Result(op, form, dtype, backend, str(env.device), env.platform, "error", None,
                    f"the process died (exit status {rc}) running this case: {tail}"))
        start = current + 1
        # Note: a worker that dies twice before finishing any case would die for every case; stop there.
        barren = 0 if started else barren + 1
        if barren >= 2:
            for op, form, dtype in labels[start:]:
                emit(Result(op, form, dtype, backend, str(env.device), env.platform, "error", None,
                            f"not run: the worker process dies before its first case ({tail})"))
            break
    return out


def _worker(spec: dict[str, Any]) -> None:
    start = int(spec.get("start", 0))
    if spec["mode"] == "cases":
        try:
            _backends.get(spec["backend"])
        except Exception as e:  # the parent did not import it (its devices were known): the report says why
            print("UNAVAILABLE " + json.dumps(f"{type(e).__name__}: {e}"), flush=True)
            return
        setup(spec["backend"])
        env = Env(spec["backend"], parse_device(spec["device"]))
        shard, n = spec.get("shard", (0, 1))
        chosen = select_cases(spec["profile"], spec["ops"] or None)[shard::n]
        items: list[Callable[[], Result]] = [partial(run_case, c, env, spec["seed"]) for c in chosen]
    else:
        for name in sorted({n for c in spec["checks"] for n in (c[0], c[1])}):
            setup(name)
        items = [partial(handoff_case, c[0], c[1], parse_device(c[2]), c[3], c[4], spec["seed"])
                 for c in spec["checks"]]
    # Note: the protocol gets its own copy of stdout; anything a framework prints goes to stderr.
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for i in range(start, len(items)):
        print(f"START {i}", file=proto, flush=True)
        print("RESULT " + json.dumps(asdict(items[i]()), default=str), file=proto, flush=True)


if __name__ == "__main__":
    _worker(json.loads(sys.argv[1]))
