"""The documentation gates the suite: the site builds with warnings as errors, its pages' examples run, every
public function documents its parameters, result, errors and an example, and the standard's text the
generator uses is the one its extractor writes."""

from __future__ import annotations

import doctest
import importlib.util
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
        params = {p.name for p in inspect.signature(fn).parameters.values()}
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


# The guide's pages whose sessions run on one CPU (the scaling pages show multi-device sessions, which
# tests/ops/test_dask.py and the sharded conformance suites run instead).
PAGES = [DOCS / name for name in ("tour.md", "generic_code.md", "precision.md", "handoff.md", "attention.md",
                                       "adding-a-backend.md")]
_NEEDS = {"tour.md": ("torch",), "generic_code.md": ("torch",), "precision.md": ("torch",),
          "handoff.md": ("torch", "jax"), "adding-a-backend.md": ("mlx",)}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples_run(page: Path) -> None:
    for mod in _NEEDS.get(page.name, ()):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{page.name}'s examples use {mod}, which is not installed")
    # The page's ```python blocks, one session (a closing fence needs no blank line before it).
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"^```(?:python|pycon)\n(.*?)^```", text, flags=re.M | re.S)
    test = doctest.DocTestParser().get_doctest("\n\n".join(blocks), {}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, f"{result.failed} example(s) of {page.name} failed"


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
