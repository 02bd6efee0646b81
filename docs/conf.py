"""Sphinx configuration: MyST pages, the API reference from the docstrings (autodoc + napoleon).

Build (CI builds it through tests/structure/test_docs.py, warnings as errors):

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _pages import api_pages, platform_pages  # noqa: E402

import unarray  # noqa: E402

project = "unarray"
author = "the unarray authors"
copyright = "the unarray authors"  # noqa: A001
release = version = unarray.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# Every reference must resolve (nitpicky). What cannot resolve without intersphinx (no network in CI):
# the builtins and the frameworks' own types in signatures, and unarray's private typing aliases.
nitpicky = True
nitpick_ignore_regex = [
    ("py:class", r"(int|float|complex|bool|str|bytes|object|type|None|Any|Callable|Sequence|Iterator|Literal"
                 r"|Mapping|Iterable|Generator|TypeVar|NamedTuple|Exception|BaseException|slice|ellipsis"
                 r"|EllipsisType|ModuleType|TracebackType|contextvars\..*|collections\.abc\..*|typing\..*"
                 r"|types\..*|numpy\..*|np\..*|torch\..*|jax\..*|tf\..*|tensorflow\..*|cupy\..*|dask\..*)"),
    ("py:class", r"(unarray\.)?_\w+(\.\w+)*"),  # private modules' names (unarray._typing.A, ...)
    ("py:class", r"(A|Array|SupportsArray|DTypeLike|DeviceLike|Shape|Axis|Policy|P|R|T|F)"),
    ("py:class", r"(tuple|list|dict|set|frozenset|type)\[.*"),  # subscripted builtins in dataclass fields
    ("py:obj", r"(unarray\.)?_\w+(\.\w+)*"),
]

# Docstrings are NumPy style; types stay inline (no cross-reference per parameter type).
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_param = False
napoleon_use_rtype = False
napoleon_use_ivar = True
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": False}
add_module_names = False

html_theme = "alabaster"
html_title = f"unarray {release}"
html_static_path: list[str] = []

# The API reference and the platform matrix are written from the package at each build.
API = api_pages(unarray, HERE / "_generated" / "api")
PLATFORMS = platform_pages(HERE / "_generated" / "platforms")
