"""``python -m unarray`` (or ``unarray``): environment report and quick conformance check (default),
``env`` (the report alone), ``check`` (the conformance suite, with reports) and ``deviations``
(the known deviations by reason, from the deviation table)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from types import ModuleType

from unarray import _backends, _native


def _report(probe: bool = False) -> int:
    import unarray as ua

    print(f"unarray {ua.__version__} (array API {ua.__array_api_version__}), Python {sys.version.split()[0]}")
    print(f"{'backend':<12}{'version':<14}{'usable':<8}devices")
    unchecked = False
    width = shutil.get_terminal_size().columns  # (COLUMNS, else the terminal's, else 80)
    for info in ua.backends(probe=False):
        if not info.installed:
            hint = _backends.install_hint(info.name)
            print(_wrapped(f"{info.name:<12}{'-':<14}{'-':<8}not installed ({hint})", width))
            continue
        # Note: a framework is imported only where the OS cannot tell its devices (seconds each).
        known = None if probe else _backends.known_devices(info.name)
        usable, error = "?", ""
        if known is None:
            try:
                known, usable = tuple(_backends.get(info.name).devices()), "yes"
            except Exception as e:  # a broken install is reported, not raised
                known, usable, error = (), "no", f"{type(e).__name__}: {e}"
        unchecked = unchecked or usable == "?"
        devs = ", ".join(str(d) for d in known) or error or "none"
        print(f"{info.name:<12}{info.version or '?':<14}{usable:<8}{devs}")
    if unchecked:
        print(_wrapped("?: not imported (the OS shows no GPU or TPU driver, so its devices are the CPU's); "
                       "env --probe imports each backend", width, indent=3))
    from unarray.interop import _routes

    print(f"ua.to C path: {_c_path(_routes.speedups, 'ua.to')}")
    print(f"precision switch C path: {_c_path(_native.load('_gate'), 'the precision switch')}")
    print(f"front end C path: {_c_path(_native.load('_fast'), 'the front end')}")
    return 0


# The quick check's time on the 2-core VM with every CPU backend, as conformance/README.md records it
# (tests/structure/test_cli.py holds this figure to that page's).
QUICK_MINUTES = 3


def _quick_time() -> str:
    """The quick check's time: the recorded measurement, and this machine's last run where one was kept."""
    from unarray.conformance.progress import last_times

    text = (f"The quick check takes seconds with NumPy alone and about {QUICK_MINUTES} minutes with every CPU "
            "backend installed on a 2-core machine, JAX's XLA compilations most of it")
    last = sorted(last_times("quick").items(), key=lambda kv: -kv[1])
    if last:
        text += "; the last runs here: " + ", ".join(f"{label} {s:.0f} s" for label, s in last)
    return text + "."


def _wrapped(line: str, width: int, indent: int = 34) -> str:
    # An install hint under its row, its lines indented to the devices column (to 4 on a narrow terminal).
    import textwrap

    if len(line) <= width:
        return line
    pad = " " * (indent if width - indent >= 40 else 4)
    return textwrap.fill(line, width, subsequent_indent=pad, break_long_words=False, break_on_hyphens=False)


def _c_path(native: ModuleType | None, what: str) -> str:
    if native is not None:
        return f"active ({native.__file__})"
    if _native.pure_python_requested():
        return f"off (UNARRAY_PURE_PYTHON={os.environ.get('UNARRAY_PURE_PYTHON')} asks for the Python path)"
    return f"off (the C extension is not built: pip install -e . with a C compiler builds it); {what} runs in Python"


def _names(values: list[str] | None, aliases: dict[str, str] | None = None) -> list[str] | None:
    # Comma or space separated; ``aliases``: the registry's short names (tf, np, jnp, pytorch, cp) as their backends.
    if not values:
        return None
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    return names if aliases is None else [aliases.get(n, n) for n in names]


def _check(profile: str, backends: list[str] | None, devices: list[str] | None, ops: list[str] | None,
           out: str | None, seed: int, isolate: bool = True, jobs: int | None = None) -> int:
    from unarray.conformance import run, write_all
    from unarray.conformance.progress import Progress
    from unarray.conformance.runner import nothing_to_run

    # Note: a run that checks nothing must not pass (a GPU job that lost its GPU, a misspelt --ops).
    distributed = profile == "distributed"  # the lazy backend on a local cluster, sharded arrays (its own runner)
    if distributed:
        from unarray.conformance import distributed as _distributed

        problem = _distributed.nothing_to_run(backends, ops)
    else:
        problem = nothing_to_run(profile, backends, devices, ops)
    if problem:
        print(f"unarray check: {problem}", file=sys.stderr)
        return 2

    def snapshot(partial: object) -> None:
        if out:
            write_all(partial, out)  # type: ignore[arg-type]

    if distributed:
        report = _distributed.run(seed=seed, ops=ops, progress=Progress(profile=profile), backends=backends)
    else:
        report = run(profile, backends=backends, devices=devices, seed=seed, progress=Progress(profile=profile),
                     ops=ops, isolate=isolate, parallel=jobs, snapshot=snapshot)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(report.counts().items()))
    print(f"conformance ({profile}, seed {seed}): {counts} in {report.seconds:.1f}s")
    for label, line in report.per_backend().items():
        print(f"  {label}: {line}")
    for r in report.failed[:25]:
        err = "" if r.error is None else f" [{r.error:.2e}]"
        print(f"  {r.status.upper():5} {r.backend}@{r.device} {r.op}[{r.form}|{r.dtype}]{err}: {r.message}")
    if len(report.failed) > 25:
        print(f"  ... and {len(report.failed) - 25} more (see the report)")
    if out:
        paths = write_all(report, out)
        print(f"wrote {', '.join(p.name for p in paths)} to {paths[0].parent.resolve()}")
    if not any(r.device != "-" for r in report.results):  # only backend-level rows: no case or handoff ran
        print("unarray check: no check ran", file=sys.stderr)
        return 1
    return 1 if report.failed else 0


def _deviations(backends: list[str] | None) -> int:
    from unarray.conformance.deviations import by_reason
    from unarray.conformance.runner import unknown_backend

    problem = unknown_backend(backends)
    if problem:
        print(f"unarray deviations: {problem}", file=sys.stderr)
        return 2

    for reason, where in by_reason(backends).items():
        print(f"- {reason}")
        for w in where:
            print(f"    {w}")
    return 0


def main(argv: list[str] | None = None, prog: str = "unarray") -> int:
    """The command line: ``unarray`` (the console script) or ``python -m unarray`` (``prog`` names it)."""
    import unarray

    # Note: TensorFlow's C++ start-up chatter would bury the live progress line.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    quick = _quick_time()
    parser = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").replace("``", ""), epilog=quick)
    parser.add_argument("--version", action="version", version=f"unarray {unarray.__version__}")
    sub = parser.add_subparsers(dest="command")
    dev = sub.add_parser("deviations", help="list the known deviations by reason (from the deviation table)")
    dev.add_argument("--backends", nargs="+", metavar="NAME", help="only these backends (default: all)")
    env = sub.add_parser("env", help="report installed backends and devices (about a second; --probe: a few "
                                     "seconds per installed framework)")
    env.add_argument("--probe", action="store_true",
                     help="import every installed backend to check that it loads and ask it for its devices")
    check = sub.add_parser("check", help="run the conformance suite and write report.md/.json/.xml",
                           description="Every op on every installed backend and visible device against a float64 "
                                       "reference, handoff zero-copy, precision policy. Exit status 1 on an "
                                       "unexpected failure (known deviations do not count).")
    check.add_argument("--profile", choices=("quick", "full", "distributed"), default="quick",
                       help="quick (the default; " + quick[0].lower() + quick[1:-1] + "), full (more dtypes, "
                            "forms and examples: about 2 minutes for the three GPU backends on one 16-core GPU "
                            "host) or distributed (the lazy backend on a local distributed cluster, and each "
                            "library's sharded arrays)"),
    check.add_argument("--backends", nargs="+", metavar="NAME",
                       help="backends to check (default: every installed one); comma or space separated")
    check.add_argument("--devices", nargs="+", metavar="KIND",
                       help="platforms or devices to check: cpu, cuda, rocm, tpu, cuda:1 (default: all visible)")
    check.add_argument("--ops", nargs="+", metavar="PATTERN",
                       help="only ops matching these patterns ('linalg.*'; 'handoff' for the handoff pairs)")
    check.add_argument("--out", default="conformance-report", metavar="DIR",
                       help="where to write report.md, report.json and report.xml (default: %(default)s, "
                            "in the current directory; the repository's .gitignore covers it)")
    check.add_argument("--seed", type=int, default=0, help="seed of the input draws (default: 0)")
    check.add_argument("--jobs", type=int, default=None,
                       help="worker processes at once (default: half the cores, at most 8)")
    check.add_argument("--in-process", action="store_true",
                       help="run every backend in this process (faster start; a native crash ends the run)")
    args = parser.parse_args(argv)
    if args.command == "env":
        return _report(args.probe)
    if args.command == "deviations":
        return _deviations(_names(args.backends, _backends.ALIASES))
    if args.command == "check":
        return _check(args.profile, _names(args.backends, _backends.ALIASES), _names(args.devices), _names(args.ops),
                      args.out, args.seed, not args.in_process, args.jobs)
    _report()
    print()
    return _check("quick", None, None, None, None, 0)


if __name__ == "__main__":
    sys.exit(main(prog="python -m unarray"))
