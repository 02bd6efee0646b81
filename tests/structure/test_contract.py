"""The backend contract is explicit: every public name a backend class defines is the contract's, one of
the standard's functions served by the generic path (``GENERIC``), or a declared optional method; a
misspelt override (``def argmaxx``) is reported instead of leaving the generic path to run."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

from unarray import _backends
from unarray._backends._base import Backend
from unarray._backends._contract import GENERIC, OPTIONAL, BackendContract

ROOT = Path(__file__).resolve().parents[2] / "unarray" / "_backends"

# The contract's members (its Protocol) and the base class's public methods: the names a backend may override.
_CONTRACT = {n for n in vars(BackendContract) if not n.startswith("_")}
_BASE = {n for k in Backend.__mro__[:-1] for n in vars(k) if not n.startswith("_")}  # (with its mixins: NNOps)
ALLOWED = _CONTRACT | _BASE | GENERIC | OPTIONAL


def unknown_names(names: set[str]) -> list[str]:
    """The public names among ``names`` that no part of the contract declares (misspellings)."""
    return sorted(n for n in names if not n.startswith("_") and n not in ALLOWED)


def _class_names(cls: type) -> set[str]:
    # Every name the class and its bases up to Backend define (a mixin's methods count as the class's).
    out: set[str] = set()
    for c in cls.__mro__:
        if c is Backend or c is object:
            break
        out |= set(vars(c))
    return out


def _source_names(lib: str) -> set[str]:
    """The names a backend's class body defines, read from its source (for a library not installed here)."""
    tree = ast.parse((ROOT / lib / "backend.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "Backend" for b in node.bases):
            out: set[str] = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.add(item.name)
                elif isinstance(item, ast.Assign):
                    out |= {t.id for t in item.targets if isinstance(t, ast.Name)}
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    out.add(item.target.id)
            return out
    raise AssertionError(f"no Backend subclass in _backends/{lib}/backend.py")


def _backend_class_names(lib: str) -> set[str]:
    try:
        module = importlib.import_module(f"unarray._backends.{lib}.backend")
    except ImportError:  # the library is not installed here: its class read from the source
        return _source_names(lib)
    return _class_names(type(module.BACKEND))


def test_the_protocol_declares_the_base_class_public_interface() -> None:
    # The base's public methods are the contract's or the standard's functions it gives a generic body.
    assert sorted(_BASE - _CONTRACT - GENERIC) == []
    assert sorted(_CONTRACT - _BASE - {"xp", "native", "name"}) == []  # (annotations only in Backend)
    assert not (GENERIC & OPTIONAL)


@pytest.mark.parametrize("lib", _backends.NAMES)
def test_every_public_name_of_a_backend_class_is_declared(lib: str) -> None:
    names = _backend_class_names(lib)
    assert names, lib
    assert unknown_names(names) == [], (
        f"{lib}: these names are neither the contract's (unarray/_backends/_contract.py BackendContract), "
        "the standard's (GENERIC) nor declared optional (OPTIONAL): a misspelt override?")


def test_the_checker_reports_a_misspelt_override() -> None:
    class Misspelt(Backend):
        name = "misspelt"

        def argmaxx(self, x: Any, axis: int | None, keepdims: bool) -> Any:  # meant argmax
            return x

        def linalg_svdd(self, x: Any) -> Any:  # meant linalg_svd
            return x

        def argmin(self, x: Any, axis: int | None, keepdims: bool) -> Any:  # a real override: fine
            return x

    assert unknown_names(_class_names(Misspelt)) == ["argmaxx", "linalg_svdd"]


def test_the_source_reader_reports_a_misspelt_override(tmp_path: Path) -> None:
    # The path taken for a library that is not installed (CuPy on a CPU machine) reads the same names.
    src = inspect.getsource(importlib.import_module("unarray._backends.numpy.backend"))
    assert "    def argmax(self" in src
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "backend.py").write_text(src.replace("    def argmax(self", "    def argmaxx(self", 1))
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert unknown_names(_source_names("fake")) == ["argmaxx"]
    finally:
        ROOT = saved


@pytest.mark.parametrize("lib", ["numpy", "torch", "jax", "tensorflow", "dask", "numba"])
def test_a_name_outside_the_contract_is_an_attribute_error(lib: str) -> None:
    pytest.importorskip(lib)
    b = _backends.get(lib)
    with pytest.raises(AttributeError, match="argmaxx"):
        b.argmaxx  # noqa: B018
    assert not hasattr(b, "einsum")  # a library function the standard lacks is not served either
    with pytest.raises(AttributeError):
        b._private  # noqa: B018


def test_the_generic_list_is_the_standards_functions() -> None:
    strict = pytest.importorskip("array_api_strict")
    standard = {n for n in strict.__all__
                if inspect.isfunction(getattr(strict, n)) and "flags" not in n and not n.startswith("_")}
    standard |= {f"{ns}_{n}" for ns in ("linalg", "fft") for n in getattr(strict, ns).__all__}
    # Each of the standard's functions is served by the generic path or has a generic body in Backend.
    assert sorted(standard - GENERIC - _BASE) == []
    # The list names only the standard's functions (eig and eigvals: 2025.12, after array-api-strict's release).
    assert sorted(GENERIC - standard) == ["linalg_eig", "linalg_eigvals"]
