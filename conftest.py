"""Collection rules for the doctest run over the package (``--doctest-modules``).

A backend module imports its framework at the top (the rule of ``unarray/_backends``), so
collecting it for doctests on a machine without that framework would stop the whole run with
``ModuleNotFoundError``. Such a module is skipped at collection, decided from
``importlib.util.find_spec`` only: nothing optional is imported while collecting.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
from _pytest.doctest import (
    DoctestItem,
    DoctestTextfile,
    _get_checker,
    _get_continue_on_failure,
    _get_runner,
    get_optionflags,
)

# Packages whose modules import a framework at the top: the backends, the GPU kernels (_kernels), and the
# conformance suite's modules named after the one library they check (sharded_torch_rank.py imports torch).
_FRAMEWORK_DIRS = tuple((Path(__file__).parent / "unarray" / d).resolve()
                        for d in ("_backends", "_kernels", "conformance"))


# The GPU kernels' Triton, besides the registry's libraries; a Triton kernel module imports torch too.
_ALSO = {"triton": ("torch",)}


def _needs(rel: Path) -> tuple[str, ...]:
    # A backend or kernel module is named after the frameworks it imports (attention_jax.py, dask_chunks.py,
    # transpose_triton.py, ...), or sits in a backend's own package, named after its framework
    # (torch/precision.py, tensorflow/linalg.py); ``rel`` is the path below _backends or _kernels.
    from unarray._backends import NAMES  # the registry imports no framework

    named = [name for name in (*NAMES, *_ALSO) if any(name in part for part in rel.with_suffix("").parts)]
    return tuple(dict.fromkeys(n for name in named for n in (name, *_ALSO.get(name, ()))))


def _below_framework_dir(path: Path) -> Path | None:
    resolved = path.resolve()
    for d in _FRAMEWORK_DIRS:
        if resolved != d and resolved.is_relative_to(d):
            return resolved.relative_to(d)
    return None


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    path = Path(collection_path)
    rel = _below_framework_dir(path) if path.suffix == ".py" or path.is_dir() else None
    if rel is None:
        return None
    if any(importlib.util.find_spec(name) is None for name in _needs(rel)):
        return True
    return None


# -- Markdown pages as doctests ------------------------------------------------------------------------------------
# ``python -m pytest docs/ README.md`` runs a page's ```python and ```pycon blocks as one session, in order, and
# nothing else of the page: prose and the closing fences are not read as expected output. A block whose first line
# is ``# needs: dask`` (libraries, or "2 GPUs") says what it needs; where that is missing, the block is not run and
# is reported as a skip with the reason.
_BLOCK = re.compile(r"^```(?:python|pycon)[ \t]*\n(.*?)^```", re.M | re.S)
_NEEDS = re.compile(r"\A#\s*needs:\s*(.+)$", re.M)
_DEVICES = re.compile(r"^(\d+) GPUs?$")


def _gpus(libraries: list[str]) -> int:
    from unarray import _backends
    from unarray._devices import no_driver

    if no_driver("cuda") and no_driver("rocm"):
        return 0
    counts = [sum(d.kind != "cpu" for d in _backends.get(lib).devices()) for lib in libraries
              if lib in _backends.NAMES and importlib.util.find_spec(lib) is not None]
    return max(counts, default=0)


def missing(needs: str) -> str:
    """Why a block that ``# needs:`` these cannot run here ("" where it can)."""
    items = [n.strip() for n in needs.split(",") if n.strip()]
    libraries = [n for n in items if not _DEVICES.match(n)]
    for name in libraries:
        if importlib.util.find_spec(name) is None:
            return f"needs {name}, which is not installed"
    for n in items:
        m = _DEVICES.match(n)
        if m and _gpus(libraries) < int(m.group(1)):
            return f"needs {n} ({', '.join(libraries) or 'any library'}), which this machine does not have"
    return ""


def blocks(text: str) -> list[tuple[int, str, str]]:
    """A page's example blocks: (the line its code starts on, 0-based; its code; its ``# needs:`` or "")."""
    out = []
    for m in _BLOCK.finditer(text):
        code = m.group(1)
        needs = _NEEDS.match(code)
        out.append((text.count("\n", 0, m.start(1)), code, needs.group(1).strip() if needs else ""))
    return out


class _KeptNamespace(dict):  # type: ignore[type-arg]
    # Note: doctest empties a namespace when its test ends; torch.compile's cleanup, run when the compiled code is
    # freed (often at exit), deletes the names it installed there and raised KeyError on the emptied dict. The
    # namespace is freed with its test item instead.
    def clear(self) -> None:
        pass


class MarkdownPage(DoctestTextfile):
    # pytest's text-file doctest, fed the page's blocks only
    def collect(self) -> Any:
        import doctest

        text = self.path.read_text(encoding="utf-8")
        lines = [""] * (text.count("\n") + 1)  # the examples at their own line numbers, everything else blank
        skipped = []
        for start, code, needs in blocks(text):
            reason = missing(needs) if needs else ""
            if reason:
                skipped.append((start, reason))
                continue
            for i, line in enumerate(code.splitlines()):
                lines[start + i] = line
        test = doctest.DocTestParser().get_doctest("\n".join(lines), _KeptNamespace(__name__="__main__"),
                                                   self.path.name, str(self.path), 0)
        runner = _get_runner(verbose=False, optionflags=get_optionflags(self.config), checker=_get_checker(),
                             continue_on_failure=_get_continue_on_failure(self.config))
        if test.examples:
            yield DoctestItem.from_parent(self, name=self.path.name, runner=runner, dtest=test)
        for start, reason in skipped:
            yield SkippedBlock.from_parent(self, name=f"{self.path.name}:{start + 1}", reason=reason, line=start)


class SkippedBlock(pytest.Item):
    def __init__(self, *, reason: str, line: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.reason, self.line = reason, line

    def runtest(self) -> None:
        # (reported at the block's line of the page, not at this line)
        raise pytest.skip.Exception(self.reason, _use_item_location=True)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.line, self.name


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".md" and _BLOCK.search(file_path.read_text(encoding="utf-8")):
        return MarkdownPage.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, DoctestItem) and item.dtest is not None and type(item.dtest.globs) is dict:
            item.dtest.globs = _KeptNamespace(item.dtest.globs)
