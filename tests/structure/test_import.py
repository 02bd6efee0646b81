"""Importing unarray imports no array framework (checked in a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = ["numpy", "torch", "jax", "jaxlib", "tensorflow", "cupy", "numba"]


def _modules_after(code: str) -> set[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))



def unarray_backend_names() -> tuple[str, ...]:
    from unarray._backends import NAMES

    return NAMES


@pytest.fixture(scope="module")
def after_import() -> set[str]:
    return _modules_after("import unarray")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_import_unarray_imports_no_framework(after_import: set[str], framework: str) -> None:
    assert framework not in after_import
    assert not any(m.startswith(framework + ".") for m in after_import)


def test_import_unarray_imports_no_backend_module(after_import: set[str]) -> None:
    # No backend adapter and no array-api-compat namespace is loaded before an array needs it: only the
    # packages' facts (each package's __init__, which imports no framework) and the framework-free contracts
    # the registry reads them with (the Library record, the handoff and compiler contracts, the inspection API), and
    # the one watch a package declares on its library's tracer (Library.tracer_watch, framework-free).
    from unarray._backends import LIBRARIES

    contracts = {f"unarray._backends.{m}" for m in ("_library", "_handoff", "_compiler", "_info")}
    watches = {f"unarray._backends.{lib.name}.watch" for lib in LIBRARIES.values() if lib.tracer_watch}
    assert watches == {"unarray._backends.torch.watch"}
    facts = contracts | watches | {f"unarray._backends.{n}" for n in unarray_backend_names()}
    loaded = {m for m in after_import if m.startswith("unarray._backends.")}
    assert loaded <= facts, sorted(loaded - facts)  # (the inspection API only once introspection is first used)
    assert {f"unarray._backends.{n}" for n in unarray_backend_names()} | watches <= loaded
    assert "array_api_compat" not in after_import


def test_import_unarray_leaves_the_rarely_used_and_the_heavy_for_later(after_import: set[str]) -> None:
    # The lazily bound public names' modules wait for their first use (the interop package itself is light), and
    # nothing the import runs reaches inspect (with ast, dis, tokenize) or dataclasses: a third of its time.
    import unarray

    later = set(unarray._LAZY.values()) - {"unarray.interop"} | {"unarray.interop._public", "unarray._explanation"}
    heavy = {"inspect", "ast", "dis", "tokenize", "dataclasses", "unarray._backends.attention_masks"}
    assert not (later | heavy) & after_import, sorted((later | heavy) & after_import)


def test_numpy_use_loads_only_numpy() -> None:
    mods = _modules_after("import numpy as np, unarray as ua\nua.sum(np.ones(3))\nua.backends()")
    assert "unarray._backends.numpy.backend" in mods
    for framework in FRAMEWORKS[1:]:
        assert framework not in mods, framework


def test_public_names_import_nothing() -> None:
    code = "import unarray as ua\n[getattr(ua, n) for n in ua.__all__]\nua.linalg.det\nua.fft.fft"
    mods = _modules_after(code)
    for framework in FRAMEWORKS:
        assert framework not in mods, framework


def test_import_survives_a_torch_it_cannot_use() -> None:
    # torch already imported has its types registered on unarray's import (tests/jit/test_compile_once.py); a torch
    # half imported (a stub module here) must leave unarray importable and working on other arrays.
    script = ("import sys, types\nsys.modules['torch'] = types.ModuleType('torch')\n"
              "import numpy as np, unarray as ua\nprint(float(ua.sum(np.ones(3))))")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "3.0"
