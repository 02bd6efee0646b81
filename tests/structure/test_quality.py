"""The quality tools gate the suite: ruff (lint) and mypy (types) must be clean."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    pytest.importorskip("ruff", reason="ruff comes with the test extra (CI installs it)")
    r = _run(sys.executable, "-m", "ruff", "check", "unarray", "tests", "tools", "benchmarks")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy", reason="mypy comes with the test extra (CI installs it)")
    r = _run(sys.executable, "-m", "mypy")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


# A library author's module, type-checked as a user's would be: the result of each call has the
# leading array's type (unarray/_typing.py), with a Python scalar first or a second library's array
# joining. TensorFlow ships no type information (its arrays are Any to a checker), so it is left out.
USER_MODULE = '''
from typing import assert_type

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt
import torch

import unarray as ua

t = torch.ones(3, 4)
j = jnp.ones((3, 4))
a: npt.NDArray[np.float32] = np.ones((3, 4), np.float32)

assert_type(ua.matmul(t, ua.matrix_transpose(t)), torch.Tensor)
assert_type(ua.matmul(j, j.T, precision="tf32"), jax.Array)
assert_type(ua.sum(j), jax.Array)
assert_type(ua.mean(t, axis=0), torch.Tensor)
assert_type(ua.argmax(t, axis=1), torch.Tensor)
assert_type(ua.abs(a), npt.NDArray[np.float32])
assert_type(ua.add(t, 1.0), torch.Tensor)
assert_type(ua.add(2, t), torch.Tensor)
assert_type(ua.multiply(t, a), torch.Tensor)
assert_type(ua.exp(j), jax.Array)
assert_type(ua.permute_dims(t, (1, 0)), torch.Tensor)
assert_type(ua.concat([j, j]), jax.Array)
assert_type(ua.stack((t, t)), torch.Tensor)
assert_type(ua.unstack(t), tuple[torch.Tensor, ...])
assert_type(ua.where(t > 0, t, 0.0), torch.Tensor)
assert_type(ua.zeros_like(j), jax.Array)
assert_type(ua.astype(t, ua.float64), torch.Tensor)
assert_type(ua.linalg.vector_norm(t), torch.Tensor)
assert_type(ua.scaled_dot_product_attention(t, t, t), torch.Tensor)
'''


def test_a_type_checker_infers_the_leading_arrays_type(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy comes with the test extra (CI installs it)")
    for lib in ("torch", "jax"):
        pytest.importorskip(lib)
    user = tmp_path / "user_module.py"
    user.write_text(USER_MODULE)
    r = _run(sys.executable, "-m", "mypy", "--strict", "--no-warn-unused-ignores", str(user))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    broken = tmp_path / "broken_module.py"  # the check can fail: a wrong expectation is reported
    habits = "ua.sort(t, dim=0)\nua.array_namespace(t).concat([t, t], dim=0)\nua.zeros(3, out=t)\n"  # torch's keywords
    broken.write_text(USER_MODULE.replace("assert_type(ua.sum(j), jax.Array)", "assert_type(ua.sum(j), torch.Tensor)")
                      + habits)
    r = _run(sys.executable, "-m", "mypy", "--strict", str(broken))
    assert r.returncode == 1 and "Expression is of type" in r.stdout, r.stdout[-2000:]
    refused = [ln.partition('Argument "')[2].partition('"')[0] for ln in r.stdout.splitlines() if '"Never"' in ln]
    assert refused == ["dim", "dim", "out"], r.stdout[-2000:]  # ua.sort, xp.concat, ua.zeros


# A user's own generic function: ``ArrayT`` (unarray.typing) keeps the caller's array type through
# operators and ua calls. A plain TypeVar of the user's own is refused (the operators are unknown on it):
# the second run shows the check can fail.
GENERIC_MODULE = '''
from typing import assert_type

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt
import torch

import unarray as ua
from unarray.typing import ArrayT as A


def energy(x: A) -> A:
    return ua.sum(x * x)


def layer(x: A, w: A) -> A:
    y = ua.matmul(x, w) + 1.0
    y = 2.0 * y - y / 3 + (-y) ** 2 + abs(y) @ ua.matrix_transpose(w)
    return ua.maximum(y, 0.0)


def bits(x: A) -> A:
    return (x & x) | (x ^ x) | ~x | (x << 1) | (x >> 1) | (x // 2) | (x % 2)


f64: npt.NDArray[np.float64] = np.ones((3, 3))
i64: npt.NDArray[np.int64] = np.ones((3, 3), np.int64)
assert_type(energy(f64), npt.NDArray[np.float64])
assert_type(energy(torch.ones(3)), torch.Tensor)
assert_type(energy(jnp.ones(3)), jax.Array)
assert_type(layer(torch.ones(3, 3), torch.ones(3, 3)), torch.Tensor)
assert_type(layer(f64, f64), npt.NDArray[np.float64])
assert_type(bits(i64), npt.NDArray[np.int64])
assert_type(bits(torch.ones(3, dtype=torch.int32)), torch.Tensor)
'''


def test_a_users_generic_function_keeps_the_array_type(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy comes with the test extra (CI installs it)")
    for lib in ("torch", "jax"):
        pytest.importorskip(lib)
    user = tmp_path / "generic_module.py"
    user.write_text(GENERIC_MODULE)
    r = _run(sys.executable, "-m", "mypy", "--strict", str(user))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    own = tmp_path / "own_typevar.py"
    own.write_text(GENERIC_MODULE.replace("from unarray.typing import ArrayT as A",
                                          'from typing import TypeVar\nA = TypeVar("A")')
                   + "ua.concatenate([f64, f64])\n")
    r = _run(sys.executable, "-m", "mypy", "--strict", str(own))
    assert r.returncode == 1 and "Unsupported left operand type" in r.stdout, r.stdout[-2000:]
    # The namespace's runtime __getattr__ (NumPy's names) is hidden from the checker: a missing name stays an error.
    assert 'Module has no attribute "concatenate"' in r.stdout, r.stdout[-2000:]


# Measurements and history belong in docs/ (docs/design-notes.md, benchmarks/results/), not in the package's
# comments: a timing, a bandwidth, a GPU model, a "measured", an issue number or a work session in a comment or
# docstring fails here. A unit that states a rule rather than a measurement goes in _UNITS_ALLOWED.
_MEASUREMENT = re.compile(
    r"\b\d+(?:\.\d+)? ?(?:us|µs|ms|ns|[GMT]B/s|GiB/s|TFLOP/s|TFLOPS)\b|µs|\b[AH]100\b|\bH200\b|\bmeasured\b"
    r"|\bissue \d+|\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    r"|thirteenth|fourteenth|\d+th) (?:session|round)\b|benchmarks/results/", re.IGNORECASE)
_UNITS_ALLOWED: frozenset[tuple[str, str]] = frozenset()  # (path relative to unarray/, matched text)


def _comment_text(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each comment and docstring-like (triple-quoted) string of a Python or C source."""
    src = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [(src.count("\n", 0, m.start()) + 1, m.group()) for m in re.finditer(r"/\*.*?\*/|//[^\n]*", src, re.S)]
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        triple = tok.type == tokenize.STRING and tok.string.lstrip("rbuRBU").startswith(('"""', "'''"))
        if tok.type == tokenize.COMMENT or triple:
            out.append((tok.start[0], tok.string))
    return out


def test_package_comments_carry_no_measurements() -> None:
    pkg = ROOT / "unarray"
    found = []
    for path in sorted([*pkg.rglob("*.py"), *pkg.rglob("*.c")]):
        rel = path.relative_to(pkg).as_posix()
        for line, text in _comment_text(path):
            for m in _MEASUREMENT.finditer(text):
                if (rel, m.group()) not in _UNITS_ALLOWED:
                    found.append(f"unarray/{rel}:{line + text.count(chr(10), 0, m.start())}: {m.group()!r}")
    assert not found, "measurements or history in comments (move them to docs/design-notes.md):\n" + "\n".join(found)
