"""The documentation gates the suite: the site builds with warnings as errors, its pages' examples run, every
public function documents its parameters, result, errors and an example, and the standard's text the
generator uses is the one its extractor writes."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import unarray as ua

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_SECTION = re.compile(r"^(Parameters|Returns|Yields|Raises|Examples|Notes|See Also|Warns)\n-{3,}$", re.M)
# Calls through which a function dispatches to a backend, each of which raises a typed error.
_DISPATCH = re.compile(r"\b(_one|_pair|_many|_fail|_recover|one|pair|many|fail|recover|_float_input|_creation_backend"
                       r"|_dispatch\.\w+)\(")


def public_functions() -> list[tuple[str, Callable[..., Any]]]:
    """Every function of the public namespaces: ``unarray``, ``ua.fft``, ``ua.linalg``, ``ua.nn``."""
    out: dict[str, Callable[..., Any]] = {}
    for prefix, mod in (("", ua), ("fft.", ua.fft), ("linalg.", ua.linalg), ("nn.", ua.nn)):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or inspect.isbuiltin(obj):
                out[prefix + name] = obj
    return sorted(out.items())


def sections(doc: str) -> dict[str, str]:
    parts = _SECTION.split(doc)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _raises_something(fn: Callable[..., Any]) -> bool:
    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):  # a C function (ua.to): it raises for what it refuses
        return True
    body = src.split('"""', 2)[-1] if src.count('"""') >= 2 else src
    return "raise " in body or bool(_DISPATCH.search(body))


def _has_parameters(fn: Callable[..., Any]) -> bool:
    try:
        return len(inspect.signature(fn).parameters) > 0
    except (TypeError, ValueError):
        return True


FUNCTIONS = public_functions()


def test_the_namespace_has_functions() -> None:
    names = [n for n, _ in FUNCTIONS]
    assert len(names) > 150 and "matmul" in names and "linalg.svd" in names and "nn.softmax" in names


@pytest.mark.parametrize(("name", "fn"), FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_public_function_is_documented(name: str, fn: Callable[..., Any]) -> None:
    doc = inspect.getdoc(fn) or ""
    assert doc and not doc.startswith("\n"), f"ua.{name} has no summary line"
    secs = sections(doc)
    missing = [s for s in ("Returns", "Examples") if s not in secs]
    if _has_parameters(fn):
        missing += [] if "Parameters" in secs else ["Parameters"]
    if _raises_something(fn):
        missing += [] if "Raises" in secs else ["Raises"]
    assert not missing, f"ua.{name}'s docstring lacks the NumPy-style section(s) {missing}"
    assert ">>> " in secs["Examples"], f"ua.{name}'s Examples section has no doctest"
    if _has_parameters(fn) and inspect.isfunction(inspect.unwrap(fn)):
        documented = set(re.findall(r"^\*{0,2}(\w+)(?:\s*:|$)", secs["Parameters"], re.M))
        # (**refused: Refused takes nothing: the keywords of other libraries, refused with a typed error)
        params = {p.name for p in inspect.signature(fn).parameters.values() if p.annotation != "Refused"}
        assert params <= documented, f"ua.{name} documents no {sorted(params - documented)} under Parameters"


def test_the_standard_text_is_current() -> None:
    out = subprocess.run([sys.executable, "tools/extract_spec.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_generated_docstrings_come_from_the_standard() -> None:
    import json

    spec = json.loads((ROOT / "tools" / "array_api_spec.json").read_text(encoding="utf-8"))["functions"]
    assert len(spec) > 120
    for name in ("abs", "linalg.svd", "fft.rfft", "where"):
        fn = ua
        for part in name.split("."):
            fn = getattr(fn, part)
        doc = inspect.getdoc(fn) or ""
        first = " ".join(doc.split("\n\n")[0].split())
        assert first == spec[name]["summary"], name
        params = sections(doc)["Parameters"]
        for p in spec[name]["parameters"]:
            assert " ".join(p["description"].split())[:40] in " ".join(params.split()), (name, p["name"])
    assert "JAX on CUDA GPUs, ROCm GPUs and TPUs" in " ".join((inspect.getdoc(ua.linalg.eig) or "").split())


# The pages' examples are run by pytest itself (``python -m pytest docs/ README.md``, the root conftest's Markdown
# collector): each page's blocks as one session, a block that names what it ``# needs:`` skipped where that is missing.
_OPTIONAL = ("torch", "jax", "tensorflow", "dask", "mlx", "cupy", "numba")
_IMPORT = re.compile(r"^(?:>>> )?(?:import|from) ([\w, .]+)", re.M)


def _pages() -> list[Path]:
    return [p for p in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"] if ">>> " in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_a_block_that_imports_an_optional_library_says_it_needs_it(page: Path) -> None:
    import conftest

    found = conftest.blocks(page.read_text(encoding="utf-8"))
    assert any(">>> " in code for _, code, _ in found), f"{page.name}: its examples are not in ```python blocks"
    for start, code, needs in found:
        if ">>> " not in code:
            continue  # a listing, not an example (not run)
        imported = {w.strip().split(".")[0] for m in _IMPORT.findall(code) for w in m.replace(" as ", ",").split(",")}
        named = {n.strip() for n in needs.split(",")}
        lacking = sorted((imported & set(_OPTIONAL)) - named)
        assert not lacking, f"{page.name}:{start + 1} imports {lacking}: its first line says '# needs: ...'"


def test_pytest_runs_a_pages_blocks_and_skips_what_it_lacks(tmp_path: Path) -> None:
    # A closing fence right after an output line ends the output; a block that needs a missing library is
    # reported as a skip with the reason; the other blocks run as one session.
    page = tmp_path / "page.md"
    page.write_text("Prose.\n\n```python\n>>> x = 2\n>>> x + 1\n3\n```\n\nMore prose: 4.\n\n"
                    "```pycon\n# needs: no_such_library\n>>> import no_such_library\n```\n\n"
                    "```python\n>>> x * 5\n10\n```\n", encoding="utf-8")
    r = _pytest_in(tmp_path, page)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "1 passed, 1 skipped" in r.stdout
    assert "SKIPPED [1] page.md:12: needs no_such_library, which is not installed" in r.stdout, r.stdout[-2000:]
    page.write_text("```python\n>>> 1 + 1\n3\n```\n", encoding="utf-8")  # and a wrong output fails
    assert _pytest_in(tmp_path, page).returncode == 1


def test_no_traceback_at_exit_after_a_compiled_page(tmp_path: Path) -> None:
    # torch.compile's cleanup deletes the names it installed in the namespace of the code it compiled (the
    # page's, at a graph break) when that code is freed, often at exit; doctest had emptied the namespace,
    # and each deletion printed a KeyError traceback. The collector keeps a page's namespace.
    pytest.importorskip("torch")
    page = tmp_path / "jit.md"
    page.write_text("```python\n>>> import torch, unarray as ua\n>>> def f(a):\n...     b = a * 2\n"
                    "...     print('a graph break')\n...     return ua.sum(b)\n>>> g = ua.jit(f)\n"
                    ">>> import warnings; warnings.simplefilter('ignore')\n>>> float(g(torch.ones(3)))\n"
                    "a graph break\n6.0\n```\n", encoding="utf-8")
    r = _pytest_in(tmp_path, page)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
    assert "Traceback" not in r.stderr and "KeyError" not in r.stderr, r.stderr[-3000:]


def _pytest_in(where: Path, page: Path) -> subprocess.CompletedProcess[str]:
    # The root conftest as a plugin (the page lies outside the checkout), the checkout first on the path.
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "-ra",
                           "--rootdir", str(where), str(page)], cwd=where, env=env, capture_output=True, text=True,
                          timeout=900)


def test_site_builds_without_warnings(tmp_path: Path) -> None:
    pytest.importorskip("sphinx", reason="sphinx comes with the test extra (CI installs it)")
    pytest.importorskip("myst_parser", reason="myst-parser comes with the test extra (CI installs it)")
    out = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"),
         str(DOCS), str(tmp_path / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-8000:]
    assert "WARNING" not in out.stderr, out.stderr[-8000:]
    html = (tmp_path / "html" / "_generated" / "api" / "standard.html").read_text(encoding="utf-8")
    assert "Calculates the absolute value for each element" in html and "Backend support" in html
    assert (tmp_path / "html" / "handoff.html").exists()


def test_the_readme_states_no_figure_that_nothing_checks() -> None:
    # A measured figure in the README's prose goes stale unchecked: the figures are in docs/ and
    # benchmarks/results/ beside their machine and command; the README's picture is one of those results.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    prose = re.sub(r"^```.*?^```", "", readme, flags=re.M | re.S)
    measured = re.findall(r"\b\d[\d.,]*\s?(?:x|%|µs|us|ms|s|GB|GiB|MB|MiB)\b", prose)
    assert not measured, f"README states {measured}: move them to docs/ with their measurement"
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert len(pictures) == 1, pictures
    picture = ROOT / pictures[0]
    assert picture.parent == ROOT / "benchmarks" / "results" and picture.exists()
    # The result page that shows it names the script that draws it, and the README names both.
    page = next(p for p in picture.parent.glob("*.md") if f"]({picture.name})" in p.read_text(encoding="utf-8"))
    script = re.search(r"Script: `(benchmarks/[\w/]+\.py)`", page.read_text(encoding="utf-8"))
    assert script and (ROOT / script.group(1)).exists()
    assert Path(script.group(1)).name in readme and f"benchmarks/results/{page.name}" in readme
