"""What every case module shares: the case record, the profiles, the seeded inputs and the tolerances.

How inputs are drawn and results compared: unarray/conformance/cases.py, which lists every case.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

__all__ = ["SHAPES_PER_CASE", "Case", "Profile", "arr", "dim", "family_of", "shape", "shape_rng", "shapes_of",
           "tolerance", "upcast"]

Inputs = tuple[tuple[Any, ...], dict[str, Any]]
Draw = Callable[[np.random.Generator, str], Inputs]

EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52,
       "complex64": 2.0**-23, "complex128": 2.0**-52}
# Unit roundoff of the float32 passes a reduced precision policy allows.
POLICY_EPS = {"highest": 2.0**-23, "tf32": 2.0**-10, "bf16": 2.0**-7, "fastest": 2.0**-7}


@dataclass(frozen=True)
class Profile:
    """How much to run: examples per case and which dtypes per family."""

    name: str
    hot_examples: int
    examples: int
    dtypes: dict[str, tuple[str, ...]]
    hot_dtypes: dict[str, tuple[str, ...]]
    # Every combination of axis/keepdims/dtype/correction forms (full), or each form value at
    # least once (quick: the combinations are sampled, which keeps JAX's per-shape compiles down).
    exhaustive: bool = True

    def of(self, families: str, hot: bool = False) -> list[str]:
        """The dtypes of the space-separated ``families`` (``"int float"``), the hot ops' with ``hot``."""
        return [d for f in families.split() for d in (self.hot_dtypes if hot else self.dtypes)[f]]


# Distinct shapes a case's examples cycle through (later examples draw new values in the same shapes):
# each new shape is one compilation on JAX and TensorFlow, and shape variety also comes from the forms.
SHAPES_PER_CASE = 3


PROFILES = {
    "quick": Profile("quick", 1, 1,
                     {"bool": ("bool",), "int": ("int32",), "float": ("float32",), "complex": ("complex64",)},
                     {"bool": ("bool",), "int": ("int32",), "float": ("float32", "float64"),
                      "complex": ("complex64",)}, exhaustive=False),
    "full": Profile("full", 8, 3,
                    {"bool": ("bool",), "int": ("int32", "int64"), "float": ("float32", "float64"),
                     "complex": ("complex64", "complex128")},
                    {"bool": ("bool",), "int": ("int8", "int32", "int64", "uint8"), "float": ("float32", "float64"),
                     "complex": ("complex64", "complex128")}),
}


@dataclass(frozen=True)
class Case:
    """One op in one form and dtype.

    Attributes:
        op: the public name (``"sum"``, ``"linalg.det"``, ``"fft.fft"``).
        form: the variant, e.g. ``"axis=(0, 2), keepdims"``.
        dtype: the input dtype name.
        draw: ``draw(rng, dtype) -> (args, kwargs)`` with NumPy arrays that the
            runner turns into arrays of the backend under test.
        ref: the reference, called with the inputs upcast to float64; by
            default the NumPy function of the same name.
        compare: ``"auto"`` (exact for integer/bool results, else within the
            tolerance), ``"exact"``, or a callable ``(actual, expected, args64)
            -> error`` returning the largest relative error.
        n_terms: how many terms a result element accumulates (tolerance grows
            with its square root).
        scale: ``scale(args64, kwargs) -> float``: the magnitude errors are
            relative to (default: the largest magnitude of the reference).
        precision: the policy the case runs under; tolerances follow it.
        examples: examples per run (set by the profile).
        creation: the op takes ``backend=``/``device=`` instead of array inputs.
        call: ``call(ua, args, kwargs) -> result``; by default ``ua.<op>(*args, **kwargs)``
            (``call(ua, args, kwargs, env)`` with ``with_env``, where ``env.backend`` and
            ``env.device`` name what is under test).
        tol_factor: multiplies the tolerance (ill-conditioned linear algebra).
        ref_upcast: whether the reference sees float64-upcast inputs (not for dtype queries).
    """

    op: str
    form: str
    dtype: str
    draw: Draw
    ref: Callable[..., Any] | None = None
    compare: str | Callable[..., float] = "auto"
    n_terms: int | Callable[[Inputs], int] = 1
    scale: Callable[..., float] | None = None
    precision: str = "highest"
    examples: int = 1
    creation: bool = False
    check_dtype: bool = True
    call: Callable[..., Any] | None = None
    tol_factor: float = 1.0
    with_env: bool = False
    ref_upcast: bool = True

    @property
    def id(self) -> str:
        return f"{self.op}[{self.form}|{self.dtype}]"

    def rng(self, seed: int, example: int) -> np.random.Generator:
        return np.random.default_rng([seed, zlib.crc32(self.id.encode()), example])


def family_of(dtype: str) -> str:
    if dtype == "bool":
        return "bool"
    if dtype.startswith(("int", "uint")):
        return "int"
    return "complex" if dtype.startswith("complex") else "float"


def tolerance(dtype: str, n_terms: int = 1, precision: str = "highest") -> float:
    """Relative tolerance for a result accumulated over ``n_terms`` values of ``dtype``.

    16 units of roundoff times sqrt(n) (rounding of a well-conditioned sum
    grows like sqrt(n)); float32 under a reduced policy uses that policy's
    unit roundoff. Integer and bool results are exact (0).
    """
    eps = EPS.get(dtype)
    if eps is None:
        return 0.0
    if dtype in ("float32", "complex64"):
        eps = max(eps, POLICY_EPS.get(precision, eps))
    return cast(float, 16 * eps * max(1.0, float(n_terms)) ** 0.5)


_SHAPE_RNG: ContextVar[np.random.Generator | None] = ContextVar("unarray_conformance_shapes", default=None)


@contextmanager
def shapes_of(case: Case, seed: int, example: int, per_case: int) -> Iterator[None]:
    """Within it, ``shape`` and ``dim`` draw from a stream of their own that repeats every ``per_case``
    examples of ``case``; values keep drawing from the example's own generator."""
    token = _SHAPE_RNG.set(np.random.default_rng([seed, zlib.crc32(case.id.encode()), 1, example % per_case]))
    try:
        yield
    finally:
        _SHAPE_RNG.reset(token)


def shape_rng(rng: np.random.Generator) -> np.random.Generator:
    return _SHAPE_RNG.get() or rng


def shape(rng: np.random.Generator, ndim: int, lo: int = 1, hi: int = 5) -> tuple[int, ...]:
    """A shape of ``ndim`` dimensions, each in ``[lo, hi]`` (from the shape stream inside ``shapes_of``)."""
    return tuple(int(n) for n in shape_rng(rng).integers(lo, hi + 1, size=ndim))


def dim(rng: np.random.Generator, lo: int, hi: int) -> int:
    """One size or rank in ``[lo, hi]``, from the shape stream like ``shape``."""
    return int(shape_rng(rng).integers(lo, hi + 1))


def arr(rng: np.random.Generator, shp: tuple[int, ...], dtype: str, lo: float = 0.5, hi: float = 2.0,
        signed: bool = True) -> np.ndarray:
    """Values with magnitude in ``[lo, hi]`` (never zero when ``lo > 0``), a random sign if ``signed``.

    Integers are drawn from ``[ceil(lo), floor(hi)]``; unsigned dtypes never get a sign.
    """
    fam = family_of(dtype)
    if fam == "bool":
        return rng.random(shp) < 0.5
    if dtype.startswith("uint"):
        signed = False
    mag: Any
    if fam == "int":
        mag = rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, size=shp)
    else:
        mag = rng.uniform(lo, hi, size=shp)
    if signed:
        mag = mag * rng.choice(np.array([-1, 1]), size=shp)
    if fam == "complex":
        im = rng.uniform(lo, hi, size=shp) * (rng.choice(np.array([-1, 1]), size=shp) if signed else 1)
        mag = mag + 1j * im
    return np.asarray(mag).astype(dtype)


def upcast(a: Any) -> Any:
    """float16/32 -> float64, complex64 -> complex128, recursively; others unchanged."""
    if isinstance(a, np.ndarray):
        if a.dtype.kind == "f":
            return a.astype(np.float64)
        if a.dtype.kind == "c":
            return a.astype(np.complex128)
        return a
    if isinstance(a, (list, tuple)):
        return type(a)(upcast(i) for i in a)
    return a
