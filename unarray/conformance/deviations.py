"""The platform matrix: install commands per backend and platform, and the known deviations.

Each backend package declares its rows and its page's facts (``unarray/_backends/<lib>/deviations.py``); this
module assembles them into one table and renders the pages.

A known deviation is a case (op, backend, platform, dtype; ``fnmatch`` patterns)
that the suite expects to differ from the standard or from the float64
reference, with the reason. Such a case is reported as ``known`` and does not
fail the run; a listed deviation that no longer shows is reported as a plain
pass with a note, so the table can be pruned.

``backends/<name>.md`` is generated from this module
(``python -m unarray.conformance.deviations --write backends``) and a test
checks that the committed pages match it.
"""

from __future__ import annotations

import fnmatch
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unarray._backends import LIBRARIES, NAMES
from unarray._backends.rules import RULES, Rule  # unarray's one answer where the standard leaves it open

__all__ = ["BACKENDS", "DEVIATIONS", "PLATFORMS", "RULES", "Deviation", "Rule", "by_reason", "lookup", "platform_of",
           "render_markdown"]

PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
# Every registered backend, in the registry's order (a page each).
BACKENDS = NAMES


@dataclass(frozen=True)
class Deviation:
    """One expected difference: where it shows (``fnmatch`` patterns) and why."""

    op: str
    backend: str
    platform: str
    dtype: str
    reason: str

    def matches(self, op: str, backend: str, platform: str, dtype: str) -> bool:
        return (fnmatch.fnmatchcase(op, self.op) and fnmatch.fnmatchcase(backend, self.backend)
                and fnmatch.fnmatchcase(platform, self.platform) and fnmatch.fnmatchcase(dtype, self.dtype))


# Each backend package's facts for the pages and the table (its deviations.py: plain values, no framework).
_FACTS: dict[str, Any] = {n: importlib.import_module(f"unarray._backends.{n}.deviations") for n in NAMES}

# A platform's own rows, on whatever library runs there.
_PLATFORM_ROWS = (
    Deviation("*", "*", "tpu", "float64", "TPUs have no float64 arithmetic; unarray refuses it (DTypeError)"),
    Deviation("*", "*", "tpu", "complex128", "TPUs have no float64 arithmetic; unarray refuses it (DTypeError)"),
)

# The table, in the order its first match is taken: the platforms' rows, the handoffs to each library (from any
# source), then each library's own rows.
DEVIATIONS: tuple[Deviation, ...] = (
    *_PLATFORM_ROWS,
    *(Deviation(*row) for n in NAMES for row in getattr(_FACTS[n], "INBOUND", ())),
    *(Deviation(*row) for n in NAMES for row in getattr(_FACTS[n], "ROWS", ())),
)

# Install commands per backend and platform ("" = not available there). unarray itself comes from its
# clone (pip install -e .); these add the framework, CPU builds from each package's facts (the missing-backend hint).
# A package names the commands of its platforms; the CPU one is its Library's unless it names another, and a
# platform it does not name has none ("").
INSTALL: dict[str, dict[str, str]] = {
    n: {"cpu": LIBRARIES[n].install_cpu, **dict.fromkeys(PLATFORMS[1:], ""), **_FACTS[n].INSTALL} for n in NAMES}


def platform_of(device: object) -> str:
    """The platform column of a device: ``cpu``, ``cuda``, ``rocm``, ``tpu`` (or its kind)."""
    kind = getattr(device, "kind", str(device).partition(":")[0])
    return {"gpu": "cuda", "mps": "mps"}.get(kind, kind)


def lookup(op: str, backend: str, platform: str, dtype: str) -> Deviation | None:
    """The first known deviation that covers this case, if any."""
    return next((d for d in DEVIATIONS if d.matches(op, backend, platform, dtype)), None)


def by_reason(backends: Sequence[str] | None = None) -> dict[str, list[str]]:
    """The known deviations grouped by reason, in table order: reason -> ["backend on platform: op (dtype)"].

    ``backends`` keeps the entries whose backend pattern matches one of them (``python -m unarray deviations``).
    """
    out: dict[str, list[str]] = {}
    for d in DEVIATIONS:
        if backends and not any(fnmatch.fnmatchcase(b, d.backend) for b in backends):
            continue
        who = "every backend" if d.backend == "*" else d.backend
        where = "every platform" if d.platform == "*" else d.platform
        what = "every op" if d.op == "*" else d.op.replace("handoff->*", "handoff to any backend") \
            .replace("handoff->", "handoff to ")
        dtype = "" if d.dtype == "*" else f" ({d.dtype})"
        out.setdefault(d.reason, []).append(f"{who} on {where}: {what}{dtype}")
    return out


def _status(backend: str, platform: str) -> str:
    if not INSTALL[backend][platform]:
        return "not available"
    if platform == "cpu":
        return "suite runs in CI (hosted runner)"
    return f"suite runs on a self-hosted {platform} runner" if platform != "tpu" else "suite runs on a TPU VM"


def render_markdown(backend: str) -> str:
    """``backends/<backend>.md``: install, known deviations and status per platform."""
    # The package's facts: NOTE; OPERATORS, what the native arrays' own operators do (unarray never wraps them, so
    # x + y is the library's +); CORRECTED, where the library's own function answers otherwise than ua.<op>.
    facts = _FACTS[backend]
    corrected: tuple[tuple[str, str, str], ...] = getattr(facts, "CORRECTED", ())
    lines = [f"# {backend}", "", "<!-- generated by python -m unarray.conformance.deviations --write backends -->",
             "", facts.NOTE, "", "Operators: " + facts.OPERATORS, ""]
    lines += ["unarray itself is installed from its clone (`pip install -e .` in the repository root); each "
              "platform's command below adds the framework.", ""]
    if corrected:
        lines += ["Corrected by unarray (the library's own function answers otherwise; `ua.<op>` gives the "
                  "standard's answer):", "", "| op | dtype | the library's own answer |", "| --- | --- | --- |"]
        lines += [f"| `{op}` | `{dtype}` | {what} |" for op, dtype, what in corrected]
        lines.append("")
    for platform in PLATFORMS:
        lines += [f"## {platform}", "", "| install | status |", "| --- | --- |"]
        cmd = INSTALL[backend][platform]
        lines.append(f"| {'`' + cmd + '`' if cmd else '-'} | {_status(backend, platform)} |")
        devs = [d for d in DEVIATIONS if fnmatch.fnmatchcase(backend, d.backend)
                and fnmatch.fnmatchcase(platform, d.platform)]
        if cmd and devs:
            lines += ["", "Known deviations (reported as `known`, not failures):", "",
                      "| op | dtype | reason |", "| --- | --- | --- |"]
            lines += [f"| `{d.op}` | `{d.dtype}` | {d.reason} |" for d in devs]
        elif cmd:
            lines += ["", "Known deviations: none."]
        lines.append("")
    return "\n".join(lines)


def render_index() -> str:
    """``backends/README.md``: the backend x platform matrix and where the CI templates are."""
    lines = ["# The platform matrix", "",
             "<!-- generated by python -m unarray.conformance.deviations --write backends -->",
             "", "Which backend runs on which platform, how to install it there, and what the conformance suite",
             "expects to differ (one page per backend). `ci/` holds GitHub Actions templates that install each",
             "platform's builds and run `python -m unarray check` (see ../conformance/README.md).", "",
             "| backend | " + " | ".join(PLATFORMS) + " |", "| --- |" + " --- |" * len(PLATFORMS)]
    for b in BACKENDS:
        cells = []
        for p in PLATFORMS:
            n = sum(1 for d in DEVIATIONS if fnmatch.fnmatchcase(b, d.backend) and fnmatch.fnmatchcase(p, d.platform))
            cells.append("-" if not INSTALL[b][p] else f"yes ({n} known deviation{'s' if n != 1 else ''})")
        lines.append(f"| [{b}]({b}.md) | " + " | ".join(cells) + " |")
    lines += ["", "Where the standard leaves the answer open and the libraries disagree, unarray gives one answer on "
              "every backend (a library's own array operators, `x + y`, stay the library's: see each page):", "",
              "| case | unarray's answer | why |", "| --- | --- | --- |"]
    lines += [f"| {r.case} | {r.answer} | {r.why} |" for r in RULES]
    lines += ["", "| platform | CI template | runner |", "| --- | --- | --- |",
              "| cpu | [ci/cpu.yml](ci/cpu.yml) | GitHub-hosted `ubuntu-latest` |",
              "| cuda | [ci/cuda.yml](ci/cuda.yml) | self-hosted, labels `gpu`, `cuda` |",
              "| rocm | [ci/rocm.yml](ci/rocm.yml) | self-hosted, labels `gpu`, `rocm` |",
              "| tpu | [ci/tpu.yml](ci/tpu.yml) | self-hosted on a Cloud TPU VM, label `tpu` |", ""]
    return "\n".join(lines)


def write(directory: str | Path) -> list[Path]:
    out = [Path(directory) / "README.md"]
    out[0].write_text(render_index())
    for b in BACKENDS:
        p = Path(directory) / f"{b}.md"
        p.write_text(render_markdown(b))
        out.append(p)
    return out


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        for p in write(sys.argv[2]):
            print(p)
    else:
        for b in BACKENDS:
            print(render_markdown(b))
