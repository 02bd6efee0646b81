"""Report writers: a Markdown matrix (op x backend@device), JSON, and JUnit XML for CI systems.

Cells of the matrix: ``pass`` (with the largest relative error seen), ``FAIL``
or ``ERROR`` (with the largest error or the message, detailed below the
matrix), ``known [n]`` (a listed deviation, its reason in note n) and ``-``
(not run there).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from unarray.conformance.results import Result, RunReport

__all__ = ["junit_xml", "markdown", "write_all"]

_RANK = {"error": 4, "fail": 3, "unavailable": 2, "known": 1, "pass": 0}


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _cell(results: list[Result], notes: dict[str, int]) -> str:
    if not results:
        return "-"
    worst = max(results, key=lambda r: _RANK.get(r.status, 0))
    errs = [r.error for r in results if r.error is not None and r.error != float("inf")]
    if worst.status == "pass":
        return f"pass ({max(errs):.1e})" if errs and max(errs) > 0 else "pass"
    if worst.status == "known":
        n = notes.setdefault(worst.reason, len(notes) + 1)
        return f"known [{n}]"
    bad = [r for r in results if r.status == worst.status]
    shown = [r.error for r in bad if r.error is not None]
    label = "**FAIL**" if worst.status == "fail" else "**ERROR**"
    if shown and max(shown) != float("inf"):
        return f"{label} {max(shown):.1e}"
    return f"{label} ({len(bad)})"


def markdown(report: RunReport) -> str:
    """The report as Markdown: environment, backends, summary, the matrix and the details."""
    env = report.environment
    counts = report.counts()
    lines = ["# unarray conformance report", "",
             f"Profile `{report.profile}`, seed {report.seed}, {report.seconds:.1f} s; "
             + ", ".join(f"{k} {v}" for k, v in env.items()) + ".", "",
             "## Backends", "", "| backend | version | usable | devices | note |", "| --- | --- | --- | --- | --- |"]
    for b in report.backends:
        note = "" if b["usable"] else _esc((b["error"] or "not installed")[:160])
        lines.append(f"| {b['name']} | {b['version'] or '-'} | {'yes' if b['usable'] else 'no'} | "
                     f"{', '.join(b['devices']) or '-'} | {note} |")
    lines += ["", "## Summary", "", "| status | checks |", "| --- | --- |"]
    lines += [f"| {s} | {n} |" for s, n in sorted(counts.items(), key=lambda kv: -_RANK.get(kv[0], 0))]
    verdict = "**unexpected failures**" if report.failed else "no unexpected failures"
    lines += ["", f"Verdict: {verdict}." + ("" if report.complete else " **Partial report: the run was still going.**"),
              ""]
    cols = list(dict.fromkeys(f"{r.backend}@{r.device}" for r in report.results if r.device != "-"))
    notes: dict[str, int] = {}
    by_op: dict[str, dict[str, list[Result]]] = {}
    for r in report.results:
        if r.device == "-":
            continue
        by_op.setdefault(r.op, {}).setdefault(f"{r.backend}@{r.device}", []).append(r)
    lines += ["## Matrix", "", "Largest relative error against the float64 reference in parentheses.", "",
              "| op | " + " | ".join(cols) + " |", "| --- |" + " --- |" * len(cols)]
    for op, per in by_op.items():
        lines.append(f"| `{op}` | " + " | ".join(_cell(per.get(c, []), notes) for c in cols) + " |")
    unexpected = [r for r in report.results if r.status in ("fail", "error", "unavailable")]
    if unexpected:
        lines += ["", "## Failures and unavailable backends", "",
                  "| op | form | dtype | backend@device | status | error | message |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in unexpected:
            err = "-" if r.error is None else f"{r.error:.2e}"
            lines.append(f"| `{r.op}` | {_esc(r.form)} | {r.dtype} | {r.backend}@{r.device} | {r.status} | {err} | "
                         f"{_esc(r.message)} |")
    if notes:
        lines += ["", "## Known deviations", ""]
        for reason, n in sorted(notes.items(), key=lambda kv: kv[1]):
            lines.append(f"{n}. {reason}")
    return "\n".join(lines) + "\n"


def junit_xml(report: RunReport) -> str:
    """JUnit XML: one testsuite per backend@device, one testcase per case (known deviations are skipped)."""
    root = ET.Element("testsuites", name="unarray-conformance")
    suites: dict[str, list[Result]] = {}
    for r in report.results:
        suites.setdefault(f"{r.backend}@{r.device}", []).append(r)
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped", "time"), 0.0)
    for key, results in suites.items():
        suite = ET.SubElement(root, "testsuite", name=key)
        for r in results:
            tc = ET.SubElement(suite, "testcase", classname=f"unarray.conformance.{r.backend}.{r.device}",
                               name=f"{r.op}[{r.form}|{r.dtype}]", time=f"{r.seconds:.4f}")
            if r.status == "fail":
                err = "" if r.error is None else f" (largest relative error {r.error:.3g})"
                ET.SubElement(tc, "failure", message=r.message + err, type="mismatch").text = r.message + err
            elif r.status in ("error", "unavailable"):
                tag = "error" if r.status == "error" else "skipped"
                ET.SubElement(tc, tag, message=r.message, type=r.status).text = r.message
            elif r.status == "known":
                ET.SubElement(tc, "skipped", message=f"known deviation: {r.reason}", type="known")
        n = Counter(r.status for r in results)
        stats = {"tests": len(results), "failures": n["fail"], "errors": n["error"],
                 "skipped": n["unavailable"] + n["known"], "time": sum(r.seconds for r in results)}
        for k, v in stats.items():
            suite.set(k, f"{v:.3f}" if k == "time" else str(int(v)))
            totals[k] += v
    for k, v in totals.items():
        root.set(k, f"{v:.3f}" if k == "time" else str(int(v)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_all(report: RunReport, out_dir: str | Path) -> list[Path]:
    """Write ``report.md``, ``report.json`` and ``report.xml`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.md", out / "report.json", out / "report.xml"]
    paths[0].write_text(markdown(report))
    paths[1].write_text(json.dumps(report.as_dict(), indent=1, default=str) + "\n")
    paths[2].write_text(junit_xml(report))
    return paths
