"""The command line, run as a user runs it (subprocesses): ``unarray`` / ``python -m unarray``.

--version and the program name, the install hint of a missing backend (CPU builds first), a check
that checks nothing fails, per-backend times, where reports go, TensorFlow's log lines in the
workers, the C path in the environment report, and the deviation list.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import unarray as ua
from unarray import _backends, _native, _precision
from unarray.conformance import deviations, runner, worker
from unarray.interop import _routes

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "unarray"


def _run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # The checkout on the path, so that a run from another directory imports this unarray even where it
    # is not installed (the GPU image runs the suite from a plain checkout).
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run(list(args), capture_output=True, text=True, timeout=600, cwd=cwd or ROOT,
                          env={**os.environ, "PYTHONPATH": path, **(env or {})})


def _module(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return _run(sys.executable, "-m", "unarray", *args, **kw)


def _script() -> Path:
    if not SCRIPT.exists():
        pytest.skip("the console script is not installed in this environment (pip install -e . installs it)")
    return SCRIPT


# -- version, name, install hints ------------------------------------------------------------------------
def test_module_prints_its_version() -> None:
    r = _module("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"unarray {ua.__version__}"


def test_console_script_prints_its_version() -> None:
    r = _run(str(_script()), "--version")
    assert r.returncode == 0 and r.stdout.strip() == f"unarray {ua.__version__}"


def test_help_names_the_program_as_it_was_run() -> None:
    assert _module("--help").stdout.startswith("usage: python -m unarray ")
    assert _run(str(_script()), "--help").stdout.startswith("usage: unarray ")
    assert _run(str(_script()), "check", "--help").stdout.startswith("usage: unarray check ")


@pytest.mark.parametrize("name", ["torch", "jax", "tensorflow", "numba"])
def test_install_hint_gives_the_cpu_build_first(name: str) -> None:
    h = _backends.install_hint(name)
    cpu = {"torch": "pip install torch --index-url https://download.pytorch.org/whl/cpu",
           "jax": "pip install jax", "tensorflow": "pip install tensorflow-cpu", "numba": "pip install numba"}[name]
    assert h.startswith(cpu)
    assert "unarray[" not in h  # an extra would fetch PyPI's default (CUDA) wheels
    gpu_words = [w for w in ("cu130", "cuda13", "and-cuda", "numba-cuda") if w in h]
    assert all(h.index(w) > h.index(cpu) + len(cpu) for w in gpu_words), h


def test_cupy_hint_says_it_needs_a_gpu() -> None:
    h = _backends.install_hint("cupy")
    assert "GPU" in h and "without a GPU" in h and "unarray[" not in h


def test_missing_backend_error_carries_the_cpu_hint() -> None:
    # A framework that cannot be imported (blocked in sys.modules) in a fresh process.
    code = ("import sys; sys.modules['tensorflow'] = None\n"
            "from unarray import _backends\n"
            "try:\n    _backends.get('tensorflow')\n"
            "except ImportError as e:\n    print(type(e).__name__, e)\n")
    r = _run(sys.executable, "-c", code)
    assert "BackendNotAvailableError" in r.stdout and "pip install tensorflow-cpu" in r.stdout, r.stdout + r.stderr
    assert "unarray[tensorflow]" not in r.stdout


def test_platform_pages_use_the_same_cpu_commands() -> None:
    for name in ("torch", "jax", "tensorflow"):
        assert deviations.INSTALL[name]["cpu"] == _backends.LIBRARIES[name].install_cpu
    for name, row in deviations.INSTALL.items():
        for platform, cmd in row.items():
            assert not cmd.startswith("pip install unarray"), (name, platform, cmd)  # installed from a clone


# -- check: nothing ran is a failure ---------------------------------------------------------------------
def _absent_platform() -> str:
    visible = {deviations.platform_of(d) for b in ua.backends(probe=True) if b.usable for d in b.devices}
    return next(p for p in ("tpu", "rocm", "cuda") if p not in visible)


def test_check_fails_for_a_device_that_is_not_visible(tmp_path: Path) -> None:
    where = _absent_platform()
    r = _module("check", "--backends", "numpy", "--devices", where, "--out", str(tmp_path / "r"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"--devices {where}" in r.stderr and "visible" in r.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", ["check", "deviations"])
def test_an_unknown_backend_is_named_with_the_known_ones(command: str, tmp_path: Path) -> None:
    from unarray._backends import NAMES

    r = _module(command, "--backends", "foo", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "unknown backend 'foo'" in r.stderr and all(n in r.stderr for n in NAMES), r.stderr
    assert "no installed backend" not in r.stderr and not (tmp_path / "conformance-report").exists()
    r = _module(command, "--backends", "nunpy", cwd=tmp_path)
    assert r.returncode == 2 and "did you mean 'numpy'?" in r.stderr, r.stderr


def test_a_backends_short_name_is_that_backend() -> None:
    r = _module("deviations", "--backends", "tf")
    assert r.returncode == 0 and r.stdout == _module("deviations", "--backends", "tensorflow").stdout


# Every library but the default (NumPy, the one hard dependency, imported with unarray).
_FRAMEWORKS = tuple(n for n in _backends.NAMES if n != _backends.DEFAULT)


def test_a_platform_without_a_driver_is_refused_before_any_framework_is_imported(tmp_path: Path) -> None:
    absent = [p for p in ("cuda", "rocm", "tpu") if runner.no_driver(p)]
    if not absent:
        pytest.skip("every accelerator platform's driver is present here (or the OS is not Linux)")
    code = ("import sys\nfrom unarray.__main__ import main\n"
            f"rc = main(['check', '--devices', {absent[0]!r}, '--out', {str(tmp_path / 'r')!r}])\n"
            f"print(sorted(m for m in sys.modules if m.partition('.')[0] in {_FRAMEWORKS!r}))\n"
            "sys.exit(rc)")
    r = _run(sys.executable, "-c", code)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"--devices {absent[0]}: no such device is visible here (no " in r.stderr and "driver" in r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout  # no framework was imported to find that out
    assert not (tmp_path / "r").exists()


def test_a_driver_on_the_machine_leaves_the_question_to_the_frameworks(monkeypatch: pytest.MonkeyPatch) -> None:
    import glob

    if not sys.platform.startswith("linux"):
        pytest.skip("the driver files are Linux's")
    monkeypatch.setattr(glob, "glob", lambda pattern: [])
    for setting in runner.TPU_SETTINGS:
        monkeypatch.delenv(setting, raising=False)
    assert all(runner.no_driver(p) for p in ("cuda", "rocm", "tpu"))
    assert runner.no_driver("cpu") == "" and runner.no_driver("metal-x") == ""  # never refused on the OS alone
    monkeypatch.setattr(glob, "glob", lambda pattern: [pattern] if pattern in ("/dev/nvidiactl", "/dev/kfd") else [])
    assert runner.no_driver("cuda") == "" and runner.no_driver("rocm") == "" and runner.no_driver("tpu")
    monkeypatch.setenv("TPU_NAME", "my-tpu")
    assert runner.no_driver("tpu") == ""


def test_check_fails_for_an_unknown_op(tmp_path: Path) -> None:
    r = _module("check", "--backends", "numpy", "--ops", "matmull", "--out", str(tmp_path / "r"))
    assert r.returncode == 2 and "matmull" in r.stderr and "did you mean" in r.stderr and "matmul" in r.stderr


def test_check_fails_when_zero_checks_ran(tmp_path: Path) -> None:
    # One backend has no handoff pair: --ops handoff selects nothing to run.
    r = _module("check", "--backends", "numpy", "--ops", "handoff", "--out", str(tmp_path / "r"))
    assert r.returncode == 1 and "no check ran" in r.stderr, r.stdout + r.stderr


def test_check_prints_per_backend_times_and_where_it_wrote(tmp_path: Path) -> None:
    r = _module("check", "--backends", "numpy", "--ops", "matmul", "sum", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    line = re.search(r"numpy@cpu: (\d+) pass in (\d+\.\d)s", r.stdout)
    assert line and int(line.group(1)) > 0
    total = float(re.search(r"pass in (\d+\.\d)s\n", r.stdout).group(1))  # type: ignore[union-attr]
    assert float(line.group(2)) <= total
    progress = [ln for ln in r.stderr.splitlines() if ln.startswith("numpy@cpu:")]
    assert progress and progress[0].endswith(f"in {line.group(2)}s")
    out = tmp_path / "conformance-report"
    assert f"to {out.resolve()}" in r.stdout and (out / "report.md").exists()


def test_default_report_directory_is_ignored_by_git() -> None:
    r = _run("git", "check-ignore", "-q", "conformance-report/report.md")
    if r.returncode == 128:
        pytest.skip("not a git checkout")
    assert r.returncode == 0


def test_workers_run_with_tensorflow_logging_silenced(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, str] = {}

    class Stop(Exception):
        pass

    def popen(cmd: list[str], **kw: Any) -> None:
        seen.update(kw["env"])
        raise Stop

    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")  # even where the user's shell asks for every line
    monkeypatch.setattr(subprocess, "Popen", popen)
    env = runner.Env("numpy", runner.parse_device("cpu"))
    with pytest.raises(Stop):
        worker.run_worker({"mode": "cases"}, [("sum", "f", "float32")], env, lambda r: None)
    assert seen["TF_CPP_MIN_LOG_LEVEL"] == "3"


# -- env: the C path ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["0", "false", "no", "off", ""])
def test_pure_python_falsy_values_keep_the_c_path(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNARRAY_PURE_PYTHON", value)
    assert not _native.pure_python_requested()


@pytest.mark.parametrize("value", ["1", "true", "yes", "on", "TRUE"])
def test_pure_python_truthy_values_ask_for_python(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNARRAY_PURE_PYTHON", value)
    assert _native.pure_python_requested()


def test_env_reports_the_c_path() -> None:
    built = _routes.speedups is not None or _native.pure_python_requested()
    on = _module("env", env={"UNARRAY_PURE_PYTHON": "0"})
    off = _module("env", env={"UNARRAY_PURE_PYTHON": "1"})
    assert on.returncode == 0 and off.returncode == 0
    if built:
        assert "ua.to C path: active" in on.stdout
    else:
        assert "ua.to C path: off (the C extension is not built" in on.stdout
    assert "ua.to C path: off (UNARRAY_PURE_PYTHON=1" in off.stdout
    switch_built = _precision._gate_type() is not None or _native.pure_python_requested()
    if switch_built:
        assert "precision switch C path: active" in on.stdout
    else:
        assert "precision switch C path: off (the C extension is not built" in on.stdout
    assert "precision switch C path: off (UNARRAY_PURE_PYTHON=1" in off.stdout


# -- deviations ---------------------------------------------------------------------------------------------
def test_deviations_lists_every_reason_of_the_table() -> None:
    r = _module("deviations")
    assert r.returncode == 0
    reasons = [ln[2:] for ln in r.stdout.splitlines() if ln.startswith("- ")]
    assert reasons == list(dict.fromkeys(d.reason for d in deviations.DEVIATIONS))
    entries = [ln for ln in r.stdout.splitlines() if ln.startswith("    ")]
    assert len(entries) == len(deviations.DEVIATIONS)


def test_deviations_for_one_backend() -> None:
    r = _module("deviations", "--backends", "jax")
    want = {d.reason for d in deviations.DEVIATIONS if d.backend in ("jax", "*")}
    assert {ln[2:] for ln in r.stdout.splitlines() if ln.startswith("- ")} == want


# -- docs: what they state holds ------------------------------------------------------------------------------
def _doc_rows() -> list[tuple[list[str], int]]:
    text = (ROOT / "conformance" / "README.md").read_text()
    rows = re.findall(r"^\| `python -m unarray check([^`]*)`[^|]*\| (\d+) \|", text, flags=re.M)
    return [(a.split(), int(n)) for a, n in rows]


def test_conformance_readme_states_the_check_counts_the_suite_has() -> None:
    # The stated times were measured with these commands; a changed suite changes the counts, and the
    # page must then be measured again.
    rows = _doc_rows()
    assert len(rows) >= 4
    for args, stated in rows:
        profile = args[args.index("--profile") + 1] if "--profile" in args else "quick"
        names = (args[args.index("--backends") + 1:] if "--backends" in args
                 else ["numpy", "torch", "jax", "tensorflow", "dask"])
        envs, _rows, unavailable = runner.plan(names)
        if unavailable:
            continue  # a backend of that row is not installed here
        envs = [e for e in envs if e.platform == "cpu"]  # the page's figures are the CPU VM's
        op_envs = [e for e in envs if e.backend not in runner.HANDOFF_ONLY]
        n = len(runner.select_cases(profile)) * len(op_envs) + len(runner.handoff_checks(envs))
        assert n == stated, f"check {' '.join(args)}: the suite has {n} checks, conformance/README.md says {stated}"


def test_docs_install_unarray_from_the_clone() -> None:
    pages = [ROOT / "README.md", ROOT / "conformance" / "README.md", *(ROOT / "backends").glob("*.md")]
    for page in pages:
        assert "pip install unarray" not in page.read_text(), page


def _buffer(offset: int, shape: tuple[int, int]) -> Any:
    # A float32 C-contiguous array of `shape` starting `offset` bytes past a 64-byte boundary.
    import numpy as np

    n = 4 * shape[0] * shape[1]
    raw = np.zeros(n + 128, np.uint8)
    start = (-raw.__array_interface__["data"][0]) % 64 + offset
    out = raw[start:start + n].view(np.float32).reshape(shape)
    out[...] = np.arange(1, out.size + 1, dtype=np.float32).reshape(shape)
    return out


@pytest.mark.parametrize("lead", ["torch", "jax", "tensorflow"])
def test_readme_copy_statement_holds(lead: str) -> None:
    # docs/features.md: JAX (CPU) and TensorFlow copy NumPy buffers not 64-byte aligned and strided or reversed views;
    # torch takes any strided view and copies reversed ones. Each copy is counted, and explain says so.
    import numpy as np

    mod = pytest.importorskip(lead)
    ones = np.ones((8, 4), np.float32)
    if lead == "torch":
        a = mod.ones((8, 4), device="cpu")
    elif lead == "jax":
        a = mod.device_put(ones, mod.devices("cpu")[0])
    else:
        with mod.device("/device:CPU:0"):
            a = mod.constant(ones)
    cases = {"aligned": _buffer(0, (8, 4)), "unaligned": _buffer(4, (8, 4)),
             "strided": _buffer(0, (8, 8))[:, ::2], "reversed": _buffer(0, (8, 8))[:, ::-2]}
    copied = {"torch": {"reversed"}, "jax": {"unaligned", "strided", "reversed"},
              "tensorflow": {"unaligned", "strided", "reversed"}}[lead]
    for name, x in cases.items():
        expected = int(name in copied)
        assert ua.explain("add", a, x).copies == expected, (lead, name)
        ua.stats(reset=True)
        r = ua.add(a, x)
        assert ua.stats()["copies"] == expected, (lead, name)
        np.testing.assert_array_equal(np.asarray(r), x + 1)


# -- the main job says where it is ------------------------------------------------------------------------------
def _on_a_terminal(*args: str, env: dict[str, str]) -> str:
    # The command with a pseudo-terminal as its stdout and stderr, as a user's shell runs it.
    import pty
    import select

    master, slave = pty.openpty()
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    proc = subprocess.Popen([sys.executable, "-m", "unarray", *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, cwd=ROOT, env={**os.environ, "PYTHONPATH": path, **env})
    os.close(slave)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 600)
            if not ready:
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal (Linux)
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        proc.wait(timeout=600)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")[-3000:]
    return b"".join(chunks).decode(errors="replace")


def test_check_on_a_terminal_draws_each_backends_count_and_time(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    out = _on_a_terminal("check", "--backends", "numpy", "--ops", "matmul", "sum", "--out", str(tmp_path / "r"),
                         env=env)
    status = [s for s in out.split("\r") if s.startswith("[")]
    assert status, out
    # [ done/total] run time  backend@device its-done/its-total in its time
    assert all(re.match(r"\[\s*\d+/\d+\]\s+\d+\.\ds  numpy@cpu \d+/\d+ in \d+s", s) for s in status), status
    lines = out.replace("\r\n", "\n").split("\n")
    assert any(re.fullmatch(r"numpy@cpu: \d+ pass in \d+\.\ds", ln.split("\r")[-1]) for ln in lines), out


def test_check_in_a_log_is_a_few_plain_lines(tmp_path: Path) -> None:
    r = _module("check", "--backends", "numpy", "--out", str(tmp_path / "r"), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "\r" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert re.fullmatch(r"conformance: \d+ checks on numpy@cpu", lines[0]), lines
    assert re.fullmatch(r"numpy@cpu: \d+ pass in \d+\.\ds", lines[1]), lines
    assert re.fullmatch(r"conformance: \d+ checks in \d+\.\ds", lines[-1]) and len(lines) == 3, lines
    # The run's times are kept: the next run, and --help, give them.
    again = _module("check", "--backends", "numpy", "--out", str(tmp_path / "r"), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert "(the last run here)" in again.stderr.splitlines()[0]
    helped = _module("--help", env={"XDG_CACHE_HOME": str(tmp_path)})
    assert re.search(r"the last runs here: numpy@cpu \d+ s", " ".join(helped.stdout.split())), helped.stdout


def test_help_gives_the_quick_checks_measured_time() -> None:
    from unarray.__main__ import QUICK_MINUTES

    # The page's row of the quick check on every CPU backend: its wall time, measured on the 2-core VM.
    text = (ROOT / "conformance" / "README.md").read_text()
    row = re.search(r"^\| `python -m unarray check` \(NumPy, torch, JAX[^|]*\| \d+ \| ([\d.]+) s", text, flags=re.M)
    assert row, "conformance/README.md has no row for the quick check on every CPU backend"
    assert round(float(row.group(1)) / 60) == QUICK_MINUTES
    helped = " ".join(_module("--help").stdout.split())
    assert f"about {QUICK_MINUTES} minutes with every CPU backend installed" in helped
    assert f"about {QUICK_MINUTES} minutes" in " ".join(_module("check", "--help").stdout.split())


@pytest.mark.parametrize("columns", [72, 120])
def test_env_wraps_its_install_hints_at_the_terminals_width(columns: int) -> None:
    r = _module("env", env={"COLUMNS": str(columns)})
    assert r.returncode == 0, r.stderr
    if "not installed" not in r.stdout:
        pytest.skip("every backend is installed here: no install hint to wrap")
    lines = r.stdout.splitlines()
    # Every line fits, but one that is a single word too long for any line (a file's path).
    too_long = [ln for ln in lines if len(ln) > columns and len(ln.split()) > 1 and "C path:" not in ln]
    assert not too_long, too_long
    hint = lines.index(next(ln for ln in lines if "not installed" in ln))
    # continued under the devices column, or 4 spaces in on a narrow terminal
    assert lines[hint + 1].startswith(" " * (34 if columns - 34 >= 40 else 4)) and lines[hint + 1].strip()
