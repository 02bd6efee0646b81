"""A newcomer's set-up: the README's two commands, CI running the second one, and a collection that
needs no optional framework.

The clean-install failure these guard against: ``pytest --doctest-modules`` imported
``unarray/_backends/cupy.py`` (which imports CuPy at the top) on a machine without CuPy, so
collection stopped with ``ModuleNotFoundError`` and no test ran. CI had CuPy installed by hand.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = ("torch", "jax", "jaxlib", "tensorflow", "cupy", "numba", "array_api_strict", "dask", "mlx",
            "triton")


def _setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```\n(.*?)```", section, flags=re.S)]


def test_readme_gives_exactly_two_setup_commands() -> None:
    commands = _setup_commands()
    assert len(commands) == 2, commands
    main_job, tests = commands
    assert "python -m unarray" in main_job and main_job.startswith("pip install -e .")
    assert "python -m pytest" in tests
    # A torch requirement other than the pinned CPU wheel downloads a multi-GB CUDA build.
    assert "torch==2.13.0" in tests


def test_ci_runs_the_readme_test_command_in_its_own_venv() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert _setup_commands()[1] in script.splitlines()
    assert "python -m venv" in script and "--system-site-packages" not in script
    # The venv is entered before the README's command runs.
    assert script.index("bin/activate") < script.index(_setup_commands()[1])


def test_test_extras_carry_what_the_tests_import() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    test_extra = re.search(r"^test = \[(.*?)\]", pyproject, flags=re.M)
    assert test_extra is not None
    # SciPy and scikit-learn: tests/client runs their own tests (they skip without them, so CI must have them).
    for requirement in ("pytest", "hypothesis", "array-api-strict", "pyyaml", "ruff", "mypy", "scipy", "scikit-learn"):
        assert f'"{requirement}' in test_extra.group(1), requirement


# Collect the package's doctests in a fresh interpreter where every optional framework is missing
# (a meta-path finder that refuses them): collection must succeed and skip what needs them.
_BLOCKED_COLLECTION = textwrap.dedent(
    """
    import importlib.abc, sys
    BLOCKED = {blocked!r}

    class Missing(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, Missing())
    import importlib.util
    _find_spec = importlib.util.find_spec
    def find_spec(name, package=None):
        if name.partition(".")[0] in BLOCKED:
            return None
        return _find_spec(name, package)
    importlib.util.find_spec = find_spec
    import pytest
    code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "unarray"])
    leaked = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
    print("LEAKED", leaked)
    sys.exit(int(code))
    """
)


def test_doctest_collection_needs_no_optional_framework() -> None:
    script = _BLOCKED_COLLECTION.format(blocked=OPTIONAL)
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "LEAKED []" in r.stdout
    assert "unarray/_backends/cupy/backend.py" not in r.stdout  # skipped, not collected
    assert "unarray/creation.py" in r.stdout or "creation" in r.stdout  # the rest is still collected


@pytest.mark.parametrize("module", ["cupy", "torch", "jax", "tensorflow", "mlx"])
def test_backend_module_is_ignored_exactly_when_its_framework_is_missing(
        module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import conftest  # the root conftest's rule

    stem = f"{module}/backend"
    path = ROOT / "unarray" / "_backends" / f"{stem}.py"
    real = conftest.importlib.util.find_spec
    monkeypatch.setattr(conftest.importlib.util, "find_spec", lambda name: None if name == module else real(name))
    assert conftest.pytest_ignore_collect(path) is True
    monkeypatch.setattr(conftest.importlib.util, "find_spec", lambda name: object())
    assert conftest.pytest_ignore_collect(path) is None
    # Front-end modules are never ignored: they import no framework.
    assert conftest.pytest_ignore_collect(ROOT / "unarray" / "creation.py") is None


def test_a_triton_kernel_module_is_ignored_where_torch_or_triton_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import conftest

    path = ROOT / "unarray" / "_kernels" / "transpose_triton.py"
    real = conftest.importlib.util.find_spec
    for missing in ("torch", "triton"):
        monkeypatch.setattr(conftest.importlib.util, "find_spec",
                            lambda name, m=missing: None if name == m else real(name))
        assert conftest.pytest_ignore_collect(path) is True, missing
    monkeypatch.setattr(conftest.importlib.util, "find_spec", lambda name: object())
    assert conftest.pytest_ignore_collect(path) is None


def _setup_section() -> str:
    return (ROOT / "README.md").read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]


def test_readme_and_tour_say_how_a_cpu_only_machine_gets_torchs_cpu_build() -> None:
    from unarray._backends import LIBRARIES

    index = LIBRARIES["torch"].install_cpu.split("--index-url ", 1)[1]  # the CPU build the install hint names
    section = _setup_section()
    # Before the commands, one sentence says what a machine without a GPU gets; the test command itself takes
    # torch's CPU build (on PyPI torch's Linux wheel is the CUDA build), so copying it downloads no CUDA.
    before = " ".join(section.split("```", 1)[0].split())
    assert "needs a GPU or downloads CUDA" in before and "torch's CPU build" in before, before
    assert f"torch==2.13.0 --extra-index-url {index} " in _setup_commands()[1]
    tour = (ROOT / "docs" / "tour.md").read_text()
    block = tour.split("## Install", 1)[1].split("```", 2)[1]
    lines = block.splitlines()
    cpu_line = next(i for i, ln in enumerate(lines) if ln.startswith('pip install -e ".[cpu]"'))
    # Before .[cpu] pulls torch from PyPI, the CPU build is installed (the same command as the hint).
    assert any(ln.startswith(LIBRARIES["torch"].install_cpu) for ln in lines[:cpu_line]), block
    assert "CUDA build" in tour.split("## Install", 1)[1].split("\n## ", 1)[0]


def test_an_unreachable_cpu_index_costs_the_test_command_no_back_off() -> None:
    # Where torch's CPU index cannot be reached (an offline mirror, CI), pip's five retries with back-off cost
    # about 10 s a package; the command itself asks for one retry, so a new user and CI run it alike.
    assert _setup_commands()[1].split(" && ")[0].endswith(" --retries 1")
    assert "PIP_RETRIES" not in (ROOT / ".ci" / "run").read_text()


def test_readme_gives_the_docs_build_and_the_docs_extra_carries_it() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert '`pip install -e ".[docs]" && python -m sphinx -W -b html docs docs/_build/html`' in readme
    docs_extra = re.search(r"^docs = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert docs_extra is not None
    for requirement in ("sphinx", "myst-parser"):
        assert f'"{requirement}' in docs_extra.group(1), requirement
    # The site needs no more than the extra gives: the extensions conf.py names are Sphinx's and MyST's.
    conf = (ROOT / "docs" / "conf.py").read_text()
    extensions = re.search(r"^extensions = \[(.*?)\]", conf, flags=re.M)
    assert extensions is not None
    for ext in re.findall(r'"([\w.]+)"', extensions.group(1)):
        assert ext.startswith("sphinx.") or ext == "myst_parser", ext


def test_ci_runs_the_readmes_test_command_verbatim() -> None:
    # The README gives two set-up commands; the second (install and run the tests) is what .ci/run runs.
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```(?:bash|sh|console)?\n(.*?)^```", readme, flags=re.M | re.S)
    commands = [line.strip() for b in blocks for line in b.splitlines() if line.strip().startswith("pip install -e")]
    assert len(commands) >= 2 and commands[1] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_c_sources_read_no_type_dict_directly() -> None:
    # A static builtin type's tp_dict is NULL from Python 3.12 (its dict lives in the interpreter): reading it
    # crashed the C hot path on import there, where CI's Python could not see it. Type lookups go through
    # _PyType_Lookup (or PyType_GetDict), which every supported version answers.
    root = Path(__file__).resolve().parents[2] / "unarray"
    sources = sorted(root.rglob("*.c"))
    assert sources
    for src in sources:
        code = re.sub(r"/\*.*?\*/", "", src.read_text(), flags=re.S)
        assert not re.search(r"(->|\.)tp_dict\b", code), f"{src.name} reads a type's tp_dict directly"


def test_importing_a_test_helper_module_changes_no_environment() -> None:
    # pytest's doctest collection imports every module under tests/ in the suite's own process: a helper that
    # set XLA_FLAGS on import gave JAX fake devices there and changed the conformance plan's counts.
    helpers = sorted(p.stem for p in (ROOT / "tests").glob("_*.py") if p.stem != "__init__")
    assert helpers
    code = textwrap.dedent(f"""
        import importlib, importlib.util, json, os
        for lib in ("numpy", "torch", "jax", "tensorflow", "cupy", "hypothesis", "unarray"):
            if importlib.util.find_spec(lib) is not None:
                importlib.import_module(lib)  # (what a framework sets on its own import is not the helpers')
        before = dict(os.environ)
        for name in {helpers!r}:
            importlib.import_module("tests." + name)
        changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
        print(json.dumps(changed))
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout[-500:]
