"""The conformance suite itself: the CLI, its three reports, failure and deviation reporting,
crash isolation, the platform pages and the CI templates."""

from __future__ import annotations

import inspect
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import unarray as ua
from unarray import _backends
from unarray.__main__ import main
from unarray.conformance import check, deviations, runner, worker
from unarray.conformance.cases import all_cases, tolerance
from unarray.conformance.progress import Progress

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def numpy_quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, str]:
    out = tmp_path_factory.mktemp("quick")
    proc = subprocess.run([sys.executable, "-m", "unarray", "check", "--backends", "numpy", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    return proc.returncode, out, proc.stdout + proc.stderr


def test_quick_profile_on_numpy_passes_and_writes_three_reports(numpy_quick: tuple[int, Path, str]) -> None:
    rc, out, log = numpy_quick
    assert rc == 0, log[-3000:]
    assert {p.name for p in out.iterdir()} >= {"report.md", "report.json", "report.xml"}
    data = json.loads((out / "report.json").read_text())
    assert data["profile"] == "quick"
    assert data["summary"].get("pass", 0) > 500
    assert not [r for r in data["results"] if r["status"] in ("fail", "error")]


def test_junit_xml_parses_and_counts_match_json(numpy_quick: tuple[int, Path, str]) -> None:
    _, out, _ = numpy_quick
    root = ET.parse(out / "report.xml").getroot()
    data = json.loads((out / "report.json").read_text())
    assert root.tag == "testsuites"
    assert int(root.get("tests", "0")) == len(data["results"])
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "numpy@cpu"
    assert len(suite.findall("testcase")) == len(data["results"])


def test_markdown_matrix_has_a_row_per_op_and_a_column_per_backend(numpy_quick: tuple[int, Path, str]) -> None:
    _, out, _ = numpy_quick
    md = (out / "report.md").read_text()
    assert "| op | numpy@cpu |" in md
    assert "| `matmul` | pass" in md
    assert "| `scaled_dot_product_attention` | pass" in md


def test_every_public_function_has_a_case() -> None:
    ops = {c.op for c in all_cases("quick")}
    # (a C hot call of the front end wraps its function)
    names = [n for n in ua.__all__ if inspect.isfunction(inspect.unwrap(getattr(ua, n)))]
    names += [f"linalg.{n}" for n in ua.linalg.__all__] + [f"fft.{n}" for n in ua.fft.__all__]
    # ua.to and ua.stats are what the handoff checks exercise (rows "handoff->backend"); the read-only promise's
    # debug mode (checking_readonly, verify_readonly) checks the caller's own writes:
    # tests/interop/test_readonly_promise.py.
    missing = [n for n in names if n not in ops and n not in ("to", "stats", "checking_readonly", "verify_readonly")]
    assert missing == []


def test_every_case_family_is_covered_for_hot_ops() -> None:
    by_op: dict[str, set[str]] = {}
    for c in all_cases("quick"):
        by_op.setdefault(c.op, set()).add(c.dtype)
    assert {"int32", "float32", "float64", "complex64"} <= by_op["sum"]
    assert {"bool", "int32", "float32"} <= by_op["any"]
    assert {"float32", "float64"} <= by_op["scaled_dot_product_attention"]


def _wrong_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    b = _backends.get("numpy")
    right = type(b).sum

    def wrong(x, axis, dtype, keepdims):  # type: ignore[no-untyped-def]
        out = right(b, x, axis, dtype, keepdims)
        return out * out.dtype.type(1.01) if out.dtype.kind in "fc" else out

    monkeypatch.setattr(b, "sum", wrong)


def test_an_injected_wrong_result_fails_with_its_error_and_exit_status(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _wrong_sum(monkeypatch)
    rc = main(["check", "--backends", "numpy", "--ops", "sum", "--in-process", "--out", str(tmp_path)])
    assert rc == 1
    data = json.loads((tmp_path / "report.json").read_text())
    floats = [r for r in data["results"] if r["dtype"].startswith("float")]
    assert floats and all(r["status"] == "fail" for r in floats)
    assert all(r["status"] == "pass" for r in data["results"] if r["dtype"] == "int32")
    assert all(0.005 < r["error"] < 0.02 for r in floats)
    assert "exceeds the tolerance" in floats[0]["message"]
    assert "| `sum` | **FAIL**" in (tmp_path / "report.md").read_text()
    failures = ET.parse(tmp_path / "report.xml").getroot().iter("failure")
    assert any("largest relative error" in (f.get("message") or "") for f in failures)


def test_a_known_deviation_is_reported_as_such_and_does_not_fail(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _wrong_sum(monkeypatch)
    dev = deviations.Deviation("sum", "numpy", "cpu", "*", "injected by the test: sums off by 1%")
    monkeypatch.setattr(deviations, "DEVIATIONS", (*deviations.DEVIATIONS, dev))
    rc = main(["check", "--backends", "numpy", "--ops", "sum", "--in-process", "--out", str(tmp_path)])
    assert rc == 0
    data = json.loads((tmp_path / "report.json").read_text())
    statuses = {r["dtype"]: r["status"] for r in data["results"]}
    assert statuses["float32"] == "known" and statuses["int32"] == "pass"
    md = (tmp_path / "report.md").read_text()
    assert "known [1]" in md and "injected by the test: sums off by 1%" in md
    skipped = list(ET.parse(tmp_path / "report.xml").getroot().iter("skipped"))
    assert skipped and all("known deviation" in (s.get("message") or "") for s in skipped)


def test_an_error_is_a_failure_with_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    b = _backends.get("numpy")

    def broken(*a, **k):  # type: ignore[no-untyped-def]
        raise RuntimeError("kernel exploded")

    monkeypatch.setattr(b, "matrix_transpose", broken)
    case = next(c for c in all_cases("quick") if c.op == "matrix_transpose")
    r = runner.run_case(case, runner.Env("numpy", ua.Device("cpu")))
    assert r.status == "error" and r.unexpected
    assert "kernel exploded" in r.message


def test_a_worker_that_dies_costs_one_case_and_is_reported() -> None:
    seen: list[runner.Result] = []
    spec = {"mode": "cases", "backend": "numpy", "device": "cpu", "profile": "no-such-profile", "seed": 0,
            "ops": ["sum"], "shard": [0, 1]}
    labels = [("sum", "f", dt) for dt in ("float32", "float64", "int32", "int64")]
    out = worker.run_worker(spec, labels, runner.Env("numpy", ua.Device("cpu")), seen.append)
    assert len(out) == 4 and out == seen
    assert all(r.status == "error" for r in out)
    assert "process died" in out[0].message and "process died" in out[1].message
    # Two deaths before any case: the rest are reported without starting more workers.
    assert "dies before its first case" in out[2].message and "dies before its first case" in out[3].message


def test_tolerance_follows_dtype_terms_and_policy() -> None:
    assert tolerance("int32") == 0.0
    assert tolerance("float64") < tolerance("float32") < tolerance("float32", precision="tf32")
    assert tolerance("float32", 100) == pytest.approx(10 * tolerance("float32"))
    assert tolerance("float64", precision="bf16") == tolerance("float64")


def test_progress_is_one_updating_line_on_a_tty_and_few_plain_lines_otherwise(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no earlier run: no estimates
    tty, plain = io.StringIO(), io.StringIO()
    for stream, is_tty in ((tty, True), (plain, False)):
        p = Progress(stream, tty=is_tty)
        p.start(40, {"numpy@cpu": 20, "torch@cpu": 20})
        for label in ("numpy@cpu", "torch@cpu"):
            p.begin(label)
            for _ in range(20):
                p.step(label, "sum")
            p.block_done(label, [SimpleNamespace(status="pass")] * 20, 0.5)
        p.finish()
    assert "\r[" in tty.getvalue() and "numpy@cpu 20/20" in tty.getvalue()
    assert "\r" not in plain.getvalue()
    # A CI log: the run's first and last line and one per backend, whatever the number of checks.
    lines = plain.getvalue().splitlines()
    assert lines[:3] == ["conformance: 40 checks on 2 backends and devices", "numpy@cpu: 20 pass in 0.5s",
                         "torch@cpu: 20 pass in 0.5s"] and len(lines) == 4
    assert plain.getvalue().splitlines()[-1].startswith("conformance: 40 checks in ")
    # A check that holds the run (a compilation): the terminal's line is redrawn on the ticker meanwhile, a
    # plain stream gets a line once it has been quiet for its interval.
    for is_tty in (True, False):
        stream = io.StringIO()
        p = Progress(stream, tty=is_tty, tick=0.05, quiet=0.3)
        p.start(3, {"jax@cpu": 3})
        p.begin("jax@cpu")
        p.step("jax@cpu", "matmul")
        time.sleep(1.0)
        p.finish()
        if is_tty:
            assert stream.getvalue().count("\r[") >= 5, stream.getvalue()
        else:
            assert "  ... jax@cpu 1/3 in " in stream.getvalue(), stream.getvalue()


def _two_backends_begun() -> list[str]:
    # A plain stream's lines for a run of NumPy's and JAX's first checks (two each).
    stream = io.StringIO()
    p = Progress(stream, tty=False)
    p.start(4, {"numpy@cpu": 2, "jax@cpu": 2})
    for label in ("numpy@cpu", "jax@cpu"):
        p.begin(label)
    p.finish()
    return stream.getvalue().splitlines()


def test_a_backend_whose_last_run_was_slow_gets_a_line_before_it_starts(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from unarray.conformance import progress

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    progress.remember("quick", {"jax@cpu": 61.0, "numpy@cpu": 2.0}, {"jax@cpu": 2, "numpy@cpu": 2})
    assert progress.last_times("quick") == {"jax@cpu": 61.0, "numpy@cpu": 2.0}
    assert progress.last_times("full") == {}
    lines = _two_backends_begun()
    assert lines[0] == "conformance: 4 checks on 2 backends and devices, about 63 s (the last run here)"
    assert "jax@cpu: 2 checks, about 61 s (the last run here)" in lines
    assert not any(ln.startswith("numpy@cpu: 2 checks") for ln in lines)  # a fast one gets no line
    # A run of a part of a backend's checks is told that part of its time.
    stream = io.StringIO()
    Progress(stream, tty=False).start(1, {"jax@cpu": 1})
    assert stream.getvalue().startswith("conformance: 1 checks on jax@cpu, about 30 s (the last run here)")
    (tmp_path / "unarray" / "check-times.json").write_text("not json")
    assert progress.last_times("quick") == {}


def test_a_first_run_says_before_a_slow_backend_how_long_its_recorded_run_took(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from unarray.conformance import progress

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nothing kept: a first run
    lines = _two_backends_begun()
    assert "jax@cpu: 2 checks; its whole quick run took about 114 s on a 2-core machine" in lines, lines
    assert not any(ln.startswith("numpy@cpu: 2 checks") for ln in lines)
    # The figures are the recorded row's (conformance/README.md), per backend.
    text = (ROOT / "conformance" / "README.md").read_text()
    row = re.search(r"^\| `python -m unarray check` \(NumPy, torch, JAX[^\n]*\| ([^|]*) \|$", text, flags=re.M)
    assert row, "conformance/README.md has no row for the quick check on every CPU backend"
    from unarray._backends import LIBRARIES

    names = {"JAX": "jax", "TensorFlow": "tensorflow", "torch": "torch", "NumPy": "numpy", "dask": "dask"}
    recorded = {names[n]: round(float(v)) for n, v in re.findall(r"(\w+) ([\d.]+) s", row.group(1)) if n in names}
    kept = {name: lib.check_seconds for name, lib in LIBRARIES.items() if lib.check_seconds}
    assert {k: v for k, v in recorded.items() if v > progress.SLOW} == kept, recorded


def test_backend_pages_match_the_deviation_table() -> None:
    for name in deviations.BACKENDS:
        page = ROOT / "backends" / f"{name}.md"
        assert page.read_text() == deviations.render_markdown(name), (
            f"{page} is stale: run python -m unarray.conformance.deviations --write backends")


def test_platform_index_matches_the_deviation_table() -> None:
    assert (ROOT / "backends" / "README.md").read_text() == deviations.render_index()


def test_partial_reports_are_marked_partial_until_the_run_completes() -> None:
    from unarray.conformance import markdown

    seen: list[tuple[bool, int, str]] = []
    cases = [c for c in all_cases("quick") if c.op == "matrix_transpose"]
    final = runner.run(backends=["numpy"], cases=cases, isolate=False, ops=["matrix_transpose"],
                       snapshot=lambda r: seen.append((r.complete, len(r.results), markdown(r))),
                       snapshot_every=0.0)
    assert final.complete and len(final.results) == len(cases)
    assert seen and all(not done for done, _, _ in seen)
    assert [n for _, n, _ in seen] == list(range(1, len(cases) + 1))
    assert "Partial report" in seen[0][2] and "Partial report" not in markdown(final)


def test_every_deviation_names_a_known_backend_and_platform_and_a_reason() -> None:
    import fnmatch

    for d in deviations.DEVIATIONS:
        assert any(fnmatch.fnmatchcase(b, d.backend) for b in deviations.BACKENDS), d
        assert any(fnmatch.fnmatchcase(p, d.platform) for p in deviations.PLATFORMS), d
        assert len(d.reason) > 20, d


@pytest.mark.parametrize("name", ["cpu", "cuda", "rocm", "tpu"])
def test_ci_templates_parse_and_run_the_suite(name: str) -> None:
    yaml = pytest.importorskip("yaml")
    text = (ROOT / "backends" / "ci" / f"{name}.yml").read_text()
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict) and doc.get("jobs")
    steps = [s for job in doc["jobs"].values() for s in job["steps"]]
    runs = " ".join(str(s.get("run", "")) for s in steps)
    assert "python -m unarray check" in runs
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert uploads and "report.xml" in str(uploads[0]["with"]["path"])
    if name != "cpu":
        assert any("self-hosted" in str(job.get("runs-on")) for job in doc["jobs"].values())


def test_compare_catches_shape_nan_and_exactness_problems() -> None:
    import numpy as np

    case = next(c for c in all_cases("quick") if c.op == "sin" and c.dtype == "float32")
    x = np.array([1.0, 2.0, np.nan])
    assert check.compare(case, x, x.copy(), (), {}, 1)[2] == ""
    assert "shape" in check.compare(case, x[:2], x, (), {}, 1)[2]
    assert "NaN/inf positions" in check.compare(case, np.array([1.0, 2.0, 3.0]), x, (), {}, 1)[2]
    err, tol, msg = check.compare(case, x * (1 + 1e-3), x, (), {}, 1)
    assert msg and err == pytest.approx(1e-3, rel=1e-6) and tol == tolerance("float32")
    ints = np.array([1, 2, 3])
    assert "exact" in check.compare(case, ints + np.array([0, 0, 1]), ints, (), {}, 1)[2]


def test_a_cases_examples_cycle_through_a_few_shapes_with_new_values() -> None:
    # Each new shape is one XLA compilation on JAX: the full profile's 8 examples of a hot case reuse
    # SHAPES_PER_CASE shapes, every example still drawing values of its own.
    from unarray.conformance.cases_common import SHAPES_PER_CASE, shapes_of

    assert SHAPES_PER_CASE == 3
    hot = [c for c in all_cases("full") if c.examples == 8]
    assert hot
    for case in hot[::37]:
        draws = []
        for e in range(case.examples):
            with shapes_of(case, 0, e, SHAPES_PER_CASE):
                args, _ = case.draw(case.rng(0, e), case.dtype)
            draws.append([a for a in args if hasattr(a, "shape")])
        shapes = [tuple(a.shape for a in d) for d in draws]
        assert len(set(shapes)) <= SHAPES_PER_CASE, case.id
        assert all(shapes[e] == shapes[e % SHAPES_PER_CASE] for e in range(case.examples)), case.id
        # The values are fresh (floats: integer draws may have one value in their range, e.g. prod's).
        if case.dtype.startswith("float"):
            for e in range(SHAPES_PER_CASE, case.examples):
                before = draws[e % SHAPES_PER_CASE]
                assert any(not (a == b).all() for a, b in zip(draws[e], before, strict=True)), case.id


@pytest.mark.parametrize("src", ["numpy", "torch"])
def test_the_handoff_checks_draw_aligned_inputs_so_their_split_is_the_same_every_run(src: str) -> None:
    # JAX on the CPU aliases only a 64-byte-aligned buffer; torch.asarray of the drawn NumPy array shares it.
    for lib in ("jax", src):
        pytest.importorskip(lib)
    held = []
    for i in range(12):
        held.append(np.empty(16 * i + 8, np.uint8))  # shifts where the allocator puts the next draw
        r = check.handoff_case(src, "jax", ua.Device("cpu"), ("float32", "int32", "bool")[i % 3], False, seed=0)
        assert r.status == "pass", r
