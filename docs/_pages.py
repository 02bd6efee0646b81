"""Pages written from the package itself at build time (into ``docs/_generated/``, not committed).

- The API reference: every name of ``ua.__all__`` (and of ``ua.fft``, ``ua.linalg``, ``ua.nn``), grouped as
  the array API standard groups them, so a function added to the namespace appears without editing a page.
- The platform matrix: ``unarray.conformance.deviations`` renders it (the same text as ``backends/*.md``),
  its links rewritten for this site.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType

# Defining module -> (page, section title). The standard's categories first, then unarray's own.
SECTIONS: dict[str, tuple[str, str]] = {
    "unarray.creation": ("standard", "Creation functions"),
    "unarray.creation_from_arrays": ("standard", "Creation functions"),
    "unarray.datatypes": ("standard", "Data type functions"),
    "unarray._dtypes": ("standard", "Data type functions"),
    "unarray.elementwise": ("standard", "Element-wise functions"),
    "unarray.indexing": ("standard", "Indexing functions"),
    "unarray.linear_algebra": ("standard", "Linear algebra functions"),
    "unarray.manipulation": ("standard", "Manipulation functions"),
    "unarray.searching": ("standard", "Searching functions"),
    "unarray.sets": ("standard", "Set functions"),
    "unarray.sorting": ("standard", "Sorting functions"),
    "unarray.statistical": ("standard", "Statistical functions"),
    "unarray.utility": ("standard", "Utility functions"),
    "unarray.introspection": ("unarray", "Backends, devices and explain"),
    "unarray._devices": ("unarray", "Backends, devices and explain"),
    "unarray.interop": ("unarray", "Handoff"),
    "unarray.interop._public": ("unarray", "Handoff"),
    "unarray.interop._dlpack": ("unarray", "Handoff"),
    "unarray._precision": ("unarray", "Precision"),
    "unarray._dispatch": ("unarray", "Backends, devices and explain"),
    "unarray._lookup": ("unarray", "Backends, devices and explain"),
    "unarray._explanation": ("unarray", "Backends, devices and explain"),
    "unarray.nn": ("unarray", "Attention"),
    "unarray.layout": ("unarray", "Layout"),
    "unarray._jit": ("unarray", "Compilation"),
    "unarray._jit_keys": ("unarray", "Compilation"),
    "unarray._jit_compilers": ("unarray", "Compilation"),
}
PAGES = {
    "standard": ("The standard's functions", "The array API standard's functions, grouped as the standard "
                 "groups them. Each runs on the backend of its array arguments and returns that library's array."),
    "unarray": ("unarray's own functions", "Backends, devices, handoff, precision and explanation: what unarray "
                "adds around the standard."),
    "errors": ("Errors", "Every error unarray raises is one of these; each is also the builtin exception a caller "
               "would catch (``ValueError``, ``TypeError``...)."),
}
EXTENSIONS = {"fft": "The standard's ``fft`` extension.", "linalg": "The standard's ``linalg`` extension.",
              "nn": "Neural-network blocks (unarray's own)."}


def _title(text: str, ch: str = "=") -> list[str]:
    return [text, ch * len(text), ""]


def _section_of(obj: object) -> tuple[str, str]:
    mod = getattr(obj, "__module__", "") or ""
    if mod in SECTIONS:
        return SECTIONS[mod]
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return ("errors", "")
    doc = inspect.getdoc(__import__(mod, fromlist=["_"])) if mod.startswith("unarray") else ""
    return ("unarray", (doc or mod).splitlines()[0].rstrip(".") if doc else mod)


def api_pages(ua: ModuleType, out: Path) -> list[str]:
    """Write the API pages under ``out``; returns their names (for the toctree)."""
    out.mkdir(parents=True, exist_ok=True)
    groups: dict[str, dict[str, list[str]]] = {p: {} for p in PAGES}
    documented: set[int] = set()
    data: list[str] = []
    for name in ua.__all__:
        obj = getattr(ua, name)
        if inspect.ismodule(obj):
            continue
        if not (callable(obj) or inspect.isclass(obj)) or type(obj).__name__ == "DType":
            data.append(name)
            continue
        page, section = _section_of(obj)
        kind = "autoexception" if page == "errors" else "autoclass" if inspect.isclass(obj) else "autofunction"
        groups[page].setdefault(section, []).append(f".. {kind}:: unarray.{name}")
        documented.add(id(obj))
    names = []
    for page, sections in groups.items():
        title, intro = PAGES[page]
        lines = [".. currentmodule:: unarray", "", *_title(title), intro, ""]
        for section in sorted(sections, key=lambda s: (s == "", s)):
            if section:
                lines += _title(section, "-")
            for entry in sections[section]:
                lines += [entry, ""]
        if page == "standard":
            lines += [*_title("Data types and constants", "-"),
                      "The dtype objects and constants of the namespace: "
                      + ", ".join(f"``ua.{n}``" for n in data) + ".", ""]
        (out / f"{page}.rst").write_text("\n".join(lines), encoding="utf-8")
        names.append(page)
    for ext, intro in EXTENSIONS.items():
        mod = getattr(ua, ext)
        lines = [f".. currentmodule:: unarray.{ext}", "", *_title(f"ua.{ext}"), intro, ""]
        for name in mod.__all__:
            obj = getattr(mod, name)
            again = id(obj) in documented
            lines += [f".. autofunction:: unarray.{ext}.{name}", *(["   :no-index:"] if again else []), ""]
            documented.add(id(obj))
        (out / f"{ext}.rst").write_text("\n".join(lines), encoding="utf-8")
        names.append(ext)
    return names


def platform_pages(out: Path) -> list[str]:
    """Write the platform matrix (index and one page per backend) under ``out``."""
    from unarray.conformance import deviations

    out.mkdir(parents=True, exist_ok=True)

    def fix(text: str) -> str:
        # Links to this folder's pages stay; links to repository files become their path, as code.
        def link(m: re.Match[str]) -> str:
            label, target = m.group(1), m.group(2)
            if re.fullmatch(r"\w+\.md", target):
                return m.group(0)
            path = "backends/" + target if not target.startswith("../") else target[3:]
            return f"{label} (`{path}`)" if label.strip("`") != target else f"`{path}`"
        text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", link, text)
        return text.replace("../conformance/README.md", "`conformance/README.md`")

    names = []
    for backend in deviations.BACKENDS:
        (out / f"{backend}.md").write_text(fix(deviations.render_markdown(backend)), encoding="utf-8")
        names.append(backend)
    toc = "\n".join(["", "```{toctree}", ":hidden:", "", *names, "```", ""])
    (out / "index.md").write_text(fix(deviations.render_index()) + toc, encoding="utf-8")
    return names
