"""The package as a user installs it: ``pip install -e .`` and ``pip install .`` into a fresh virtual
environment, then a type checker and the wheel's contents.

The editable install must put a plain path on ``sys.path`` (a ``.pth`` line): an import hook (a
meta-path finder, setuptools' default for a project whose root holds more than the package) works for
``import unarray`` but is invisible to mypy and pyright, which then find no ``unarray`` and read every
call as ``Any``.

The fresh environment is a plain venv (no ``--system-site-packages``, so this machine's own unarray
install cannot stand in for the one under test). The tools it needs (pip, setuptools, NumPy, mypy) come
from this interpreter's site-packages through a folder of links that leaves out every unarray entry;
the link folder is a path line in a ``.pth``, so its own ``.pth`` files (another unarray install's
import hook) are not run.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What the build reads: the package, its build configuration, and the files pyproject names.
# The root's own modules come too: they must stay out of the wheel.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "unarray", "__main__.py", "conftest.py")

USER_MODULE = textwrap.dedent(
    """
    from typing import assert_type

    import numpy as np
    import numpy.typing as npt

    import unarray as ua

    a: npt.NDArray[np.float64] = np.ones((2, 2))
    assert_type(ua.matmul(a, a), npt.NDArray[np.float64])
    reveal_type(ua.matmul(a, a))
    """
)

# Generic code as docs/generic_code.md teaches it (xp = ua.array_namespace(x)): the bound namespace is typed as
# the module's functions, so the caller's array type comes back (Tensor in, Tensor out).
GENERIC_MODULE = textwrap.dedent(
    """
    from typing import assert_type

    import numpy as np
    import numpy.typing as npt
    import torch

    import unarray as ua
    from unarray.typing import ArrayT


    def energy(x: torch.Tensor) -> torch.Tensor:
        xp = ua.array_namespace(x)
        return xp.sum(x * x)


    def softmax(x: ArrayT) -> ArrayT:
        xp = ua.array_namespace(x)
        y = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        return y / xp.sum(y, axis=-1, keepdims=True)


    t = torch.ones(3)
    a: npt.NDArray[np.float64] = np.ones(3)
    xp = ua.array_namespace(t)
    assert_type(softmax(t), torch.Tensor)
    assert_type(softmax(a), npt.NDArray[np.float64])
    assert_type(xp.add(1.0, t), torch.Tensor)
    assert_type(xp.linalg.vector_norm(t), torch.Tensor)
    assert_type(xp.fft.fft(t), torch.Tensor)
    assert_type(xp.nn.softmax(t, axis=-1), torch.Tensor)
    reveal_type(energy(t))
    """
)

# What the checker must refuse of the namespace: a name it lacks, a wrong array type.
WRONG_MODULE = textwrap.dedent(
    """
    import torch

    import unarray as ua

    t = torch.ones(3)
    xp = ua.array_namespace(t)
    xp.concatenate([t, t])
    n: int = xp.sum(t)
    """
)


def _env(tmp: Path) -> Path:
    """A plain venv whose Python sees this interpreter's packages except unarray; returns its python."""
    target = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    inner = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    Path(inner, "zz_tools.pth").write_text(f"{_links(tmp)}\n")  # after the install's own .pth
    return python


def _links(tmp: Path) -> Path:
    # A folder of links to this interpreter's site-packages, less every unarray install and every .pth.
    links = tmp / "tools"
    links.mkdir()
    for sp in map(Path, site.getsitepackages()):
        for entry in sp.iterdir() if sp.is_dir() else ():
            name = entry.name
            if name.startswith(("unarray", "__editable__")) or name.endswith(".pth"):
                continue
            if not (links / name).exists():
                (links / name).symlink_to(entry)
    return links


def _copy(tmp: Path) -> Path:
    # A copy: the build writes the C extensions next to their sources, which must not touch the
    # checkout whose .so files the running tests have loaded.
    clone = tmp / "clone"
    clone.mkdir()
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, clone / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
        else:
            shutil.copy2(src, clone / name)
    return clone


def _pip(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    return subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", "--no-input", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300, env=env)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    for tool in ("mypy", "setuptools", "pip"):
        pytest.importorskip(tool, reason=f"{tool} comes with the test extra (CI installs it)")
    tmp = tmp_path_factory.mktemp("install")
    return _env(tmp), _copy(tmp)


def test_editable_install_gives_a_type_checker_the_packages_types(fresh: tuple[Path, Path]) -> None:
    python, clone = fresh
    r = _pip(python, "install", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(clone), cwd=clone)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    user = clone.parent / "user" / "user_module.py"
    user.parent.mkdir()
    user.write_text(USER_MODULE)
    (user.parent / "generic_module.py").write_text(GENERIC_MODULE)
    (user.parent / "wrong_module.py").write_text(WRONG_MODULE)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    # From the user's own folder: the clone is reached only through the install. One run for the three modules
    # (reading torch's types takes most of it).
    r = subprocess.run([str(python), "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                        user.name, "generic_module.py", "wrong_module.py"], capture_output=True, text=True,
                       cwd=user.parent, timeout=600, env=env)
    assert "Cannot find implementation or library stub" not in r.stdout, r.stdout[-3000:]
    revealed = {ln.partition(":")[0]: ln for ln in r.stdout.splitlines() if "Revealed type" in ln}
    assert 'is "numpy.ndarray[' in revealed.get(user.name, ""), r.stdout[-3000:]  # not "Any"
    assert 'is "torch._tensor.Tensor"' in revealed.get("generic_module.py", ""), r.stdout[-3000:]
    errors = [ln for ln in r.stdout.splitlines() if "error:" in ln]
    # Only the wrong module's two lines fail: the README's example and the generic one check.
    assert all(ln.startswith("wrong_module.py:") for ln in errors) and len(errors) == 2, r.stdout[-3000:]
    assert '"BoundNamespace" has no attribute "concatenate"' in errors[0], errors
    assert 'expression has type "Tensor", variable has type "int"' in errors[1], errors
    # And the interpreter imports the clone (the same path, as the install's .pth line says).
    r = subprocess.run([str(python), "-c", "import unarray; print(unarray.__file__)"], capture_output=True,
                       text=True, cwd=user.parent, timeout=120, env=env)
    assert r.returncode == 0 and Path(r.stdout.strip()).resolve() == (clone / "unarray" / "__init__.py").resolve(), \
        r.stdout + r.stderr


def test_wheel_ships_the_types_and_the_c_extensions(fresh: tuple[Path, Path]) -> None:
    python, clone = fresh
    out = clone.parent / "wheels"
    r = _pip(python, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out), str(clone), cwd=clone)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (wheel,) = out.glob("unarray-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "unarray/py.typed" in names
    if shutil.which(sysconfig.get_config_var("CC").split()[0]):  # pip builds them where a C compiler is found
        for ext in ("unarray/_gate.", "unarray/_fast.", "unarray/interop/_speedups."):
            assert any(n.startswith(ext) and n.endswith(".so") for n in names), (ext, names)
    # Only the package: the repository's other folders and files are not installed.
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"unarray"}, top


def test_python_m_unarray_runs_from_the_folder_that_holds_the_clone(tmp_path: Path) -> None:
    # The clone's folder named unarray, run from its parent: the folder is first on sys.path (a namespace
    # package without the package's names) and its own __main__.py puts the package in its place.
    import unarray

    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "unarray").symlink_to(ROOT, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    runs = {
        "as installed here": ([sys.executable, "-m", "unarray"], env),
        # No site-packages (-S), so no install of unarray can win: the namespace package is what is found.
        "with no install": ([sys.executable, "-S", "-m", "unarray"], {**env, "PYTHONPATH": str(_links(tmp_path))}),
    }
    for how, (cmd, run_env) in runs.items():
        r = subprocess.run([*cmd, "--version"], capture_output=True, text=True, cwd=parent, env=run_env, timeout=120)
        assert r.returncode == 0 and r.stdout.strip() == f"unarray {unarray.__version__}", (how, r.stdout + r.stderr)
        r = subprocess.run([*cmd, "check", "--backends", "foo"], capture_output=True, text=True, cwd=parent,
                           env=run_env, timeout=120)
        assert r.returncode == 2 and "unknown backend 'foo'" in r.stderr, (how, r.stdout + r.stderr)
