"""Extract each function's summary, parameters and result from the array API standard's stubs.

Reads the stub files of ``data-apis/array-api`` (``src/array_api_stubs/_<version>/*.py``, or the excerpts
of them kept in ``tools/array_api_spec/*.txt``: same syntax, notes cut) and writes
``tools/array_api_spec.json``, which ``tools/gen_frontend.py`` turns into the generated docstrings. Each
excerpt's first comment line names its source file, version and commit; they are copied into the JSON.

    python tools/extract_spec.py          # rewrite tools/array_api_spec.json
    python tools/extract_spec.py --check  # exit 1 if it would change
    python tools/extract_spec.py PATH...  # read these stub files instead (e.g. a checkout of array-api)
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SPEC_DIR = HERE / "array_api_spec"
OUT = HERE / "array_api_spec.json"
# Where each stub file's functions live in unarray ("" = the main namespace).
PREFIX = {"linalg": "linalg.", "fft": "fft."}

_SOURCE = re.compile(r"of (?P<repo>\S+) (?P<path>\S+_(?P<y>\d{4})_(?P<m>\d{2})/\S+\.py)")
_COMMIT = re.compile(r"commit (?P<commit>[0-9a-f]{40})")


def rst_plain(text: str) -> str:
    """The spec's reST made safe for unarray's docs: roles whose targets live in the spec's own site
    (``:ref:``, ``:func:``, ``:meth:``) become plain text, ``:math:`` becomes literal, single backticks
    become literals."""
    text = re.sub(r":ref:`([^`<]*?)\s*(?:<[^>]*>)?`", lambda m: m.group(1).replace("-", " "), text)
    text = re.sub(r":(?:func|meth|class):`~?(?:array_api\.)?([^`]*)`", r"``\1``", text)
    text = re.sub(r":math:`([^`]*)`", r"``\1``", text)
    text = re.sub(r"(?<![`\w])`([^`]+)`(?![`\w])", r"``\1``", text)
    return " ".join(text.split())


def first_sentence(text: str) -> str:
    m = re.search(r"^(.*?\.)(\s|$)", text)
    return m.group(1) if m else text


def _sections(doc: str) -> dict[str, list[str]]:
    lines = [ln.rstrip() for ln in doc.strip("\n").splitlines()]
    out: dict[str, list[str]] = {"": []}
    current = ""
    i = 0
    while i < len(lines):
        head = lines[i].strip()
        if i + 1 < len(lines) and head and set(lines[i + 1].strip()) == {"-"}:
            current = head
            out[current] = []
            i += 2
            continue
        out[current].append(lines[i])
        i += 1
    return out


def _summary(lines: list[str]) -> str:
    para: list[str] = []
    for ln in lines:
        if not ln.strip():
            if para:
                break
            continue
        para.append(ln.strip())
    return rst_plain(" ".join(para))


def _entries(lines: list[str]) -> list[tuple[str, str, str]]:
    """``name: type`` heads and their (indented) descriptions, first paragraph only."""
    entries: list[tuple[str, str, list[str]]] = []
    base = None
    for ln in lines:
        if not ln.strip():
            if entries and entries[-1][2] and entries[-1][2][-1] != "":
                entries[-1][2].append("")
            continue
        indent = len(ln) - len(ln.lstrip())
        if base is None:
            base = indent
        if indent == base:
            name, _, typ = ln.strip().partition(":")
            entries.append((name.strip(), typ.strip(), []))
        elif entries:
            entries[-1][2].append(ln.strip())
    result = []
    for name, typ, desc in entries:
        para = " ".join(desc[: desc.index("")] if "" in desc else desc)
        default = next((d for d in desc if d.startswith("Default:")), "")
        words = rst_plain(para)
        if default and rst_plain(default) not in words:
            words = f"{words} {rst_plain(default)}"
        result.append((name, typ, words))
    return result


def parse(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    text = path.read_text(encoding="utf-8")
    head = next((ln for ln in text.splitlines() if ln.startswith("#")), "")
    commit = _COMMIT.search(text[:600])
    src = _SOURCE.search(head)
    source: dict[str, Any] = {
        "repository": src.group("repo") if src else "data-apis/array-api",
        "path": src.group("path") if src else path.name,
        "version": f"{src.group('y')}.{src.group('m')}" if src else "",
        "commit": commit.group("commit") if commit else "",
        "excerpt": path.name,
    }
    stem = path.name.split(".")[0]
    prefix = PREFIX.get(stem, "")
    funcs: dict[str, dict[str, Any]] = {}
    for node in ast.parse(text).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        doc = ast.get_docstring(node, clean=True) or ""
        if doc.startswith("Alias for"):
            continue
        secs = _sections(doc)
        params = [{"name": n.lstrip("*"), "type": t, "description": d}
                  for n, t, d in _entries(secs.get("Parameters", []))]
        returns = _entries(secs.get("Returns", []))
        funcs[prefix + node.name] = {
            "summary": first_sentence(_summary(secs[""])),
            "parameters": params,
            "returns": {"type": returns[0][1], "description": returns[0][2]} if returns else None,
            "source": source["path"],
            "version": source["version"],
        }
    return source, funcs


def build(paths: list[Path]) -> dict[str, Any]:
    sources, functions = [], {}
    for p in sorted(paths):
        src, funcs = parse(p)
        sources.append(src)
        functions.update(funcs)
    return {
        "note": "generated by tools/extract_spec.py from the array API standard's stubs; do not edit by hand",
        "sources": sources,
        "functions": dict(sorted(functions.items())),
    }


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if not a.startswith("--")] or sorted(SPEC_DIR.glob("*.txt"))
    new = json.dumps(build(paths), indent=1, ensure_ascii=False) + "\n"
    old = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    if new == old:
        return 0
    if check:
        print(f"out of date: {OUT.name}; run python tools/extract_spec.py")
        return 1
    OUT.write_text(new, encoding="utf-8")
    print(f"rewrote {OUT.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
