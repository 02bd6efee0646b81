"""The special cases of the standard's element-wise functions (2025.12, each function's "Special cases"
section), on every backend: NaN, signed zeros, infinities, and complex branch cuts and infinities.

One table row per listed case; one test per backend, function and dtype evaluates all of the function's rows
in one call and reports every row that differs. Where the standard lets libraries choose (floor_divide with an
infinite operand), a row lists each allowed answer. Shift counts outside ``[0, bits)``, which the standard
leaves to the library, shift every bit out on every backend (NumPy's rule: 0, or -1 for a negative number
shifted right), so results agree across backends.
"""

from __future__ import annotations

import cmath
import math
from typing import Any

import numpy as np
import pytest

import unarray as ua
from tests._support import TestBackend

INF, NAN, PI = math.inf, math.nan, math.pi

# function -> rows (x, expected) for unary functions; an expected tuple lists the allowed answers.
UNARY: dict[str, list[tuple[float, Any]]] = {
    "abs": [(NAN, NAN), (-0.0, 0.0), (-INF, INF), (INF, INF)],
    "acos": [(NAN, NAN), (1.5, NAN), (-1.5, NAN), (1.0, 0.0)],
    "acosh": [(NAN, NAN), (0.5, NAN), (1.0, 0.0), (INF, INF)],
    "asin": [(NAN, NAN), (1.5, NAN), (-1.5, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "asinh": [(NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF)],
    "atan": [(NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, PI / 2), (-INF, -PI / 2)],
    "atanh": [(NAN, NAN), (-1.5, NAN), (1.5, NAN), (-1.0, -INF), (1.0, INF), (0.0, 0.0), (-0.0, -0.0)],
    "ceil": [(INF, INF), (-INF, -INF), (0.0, 0.0), (-0.0, -0.0), (NAN, NAN), (-0.5, -0.0), (2.0, 2.0)],
    "cos": [(NAN, NAN), (0.0, 1.0), (-0.0, 1.0), (INF, NAN), (-INF, NAN)],
    "cosh": [(NAN, NAN), (0.0, 1.0), (-0.0, 1.0), (INF, INF), (-INF, INF)],
    "exp": [(NAN, NAN), (0.0, 1.0), (-0.0, 1.0), (INF, INF), (-INF, 0.0)],
    "expm1": [(NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -1.0)],
    "floor": [(INF, INF), (-INF, -INF), (0.0, 0.0), (-0.0, -0.0), (NAN, NAN), (0.5, 0.0), (-2.0, -2.0)],
    "log": [(NAN, NAN), (-1.0, NAN), (0.0, -INF), (-0.0, -INF), (1.0, 0.0), (INF, INF)],
    "log1p": [(NAN, NAN), (-1.5, NAN), (-1.0, -INF), (0.0, 0.0), (-0.0, -0.0), (INF, INF)],
    "log2": [(NAN, NAN), (-1.0, NAN), (0.0, -INF), (-0.0, -INF), (1.0, 0.0), (INF, INF)],
    "log10": [(NAN, NAN), (-1.0, NAN), (0.0, -INF), (-0.0, -INF), (1.0, 0.0), (INF, INF)],
    "round": [(INF, INF), (-INF, -INF), (0.0, 0.0), (-0.0, -0.0), (NAN, NAN), (0.5, 0.0), (1.5, 2.0),
              (2.5, 2.0), (-0.5, -0.0), (-2.5, -2.0)],
    "sign": [(NAN, NAN), (-3.0, -1.0), (3.0, 1.0), (INF, 1.0), (-INF, -1.0), (0.0, (0.0, -0.0)),
             (-0.0, (0.0, -0.0))],
    "signbit": [(0.0, False), (-0.0, True), (INF, False), (-INF, True), (-1.0, True)],
    "sin": [(NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, NAN), (-INF, NAN)],
    "sinh": [(NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF)],
    "sqrt": [(NAN, NAN), (-1.0, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, INF)],
    "square": [(NAN, NAN), (-0.0, 0.0), (-INF, INF)],
    "tan": [(NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, NAN), (-INF, NAN)],
    "tanh": [(NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0)],
    "trunc": [(INF, INF), (-INF, -INF), (0.0, 0.0), (-0.0, -0.0), (NAN, NAN), (-0.5, -0.0), (0.5, 0.0)],
    "reciprocal": [(0.0, INF), (-0.0, -INF), (INF, 0.0), (-INF, -0.0), (NAN, NAN)],
}

BINARY: dict[str, list[tuple[float, float, Any]]] = {
    "add": [(NAN, 1.0, NAN), (1.0, NAN, NAN), (INF, -INF, NAN), (-INF, INF, NAN), (INF, INF, INF),
            (-INF, -INF, -INF), (INF, 2.0, INF), (-0.0, -0.0, -0.0), (-0.0, 0.0, 0.0), (0.0, -0.0, 0.0),
            (2.0, -2.0, 0.0)],
    "subtract": [(NAN, 1.0, NAN), (INF, INF, NAN), (-INF, -INF, NAN), (INF, -INF, INF), (-0.0, 0.0, -0.0),
                 (0.0, 0.0, 0.0), (2.0, 2.0, 0.0)],
    "multiply": [(NAN, 1.0, NAN), (INF, 0.0, NAN), (-0.0, INF, NAN), (-0.0, 0.0, -0.0), (-0.0, -0.0, 0.0),
                 (-INF, -INF, INF), (INF, -2.0, -INF), (-2.0, 0.0, -0.0)],
    "divide": [(NAN, 1.0, NAN), (INF, -INF, NAN), (0.0, -0.0, NAN), (0.0, 2.0, 0.0), (-0.0, 2.0, -0.0),
               (0.0, -2.0, -0.0), (-0.0, -2.0, 0.0), (2.0, 0.0, INF), (2.0, -0.0, -INF), (-2.0, 0.0, -INF),
               (-2.0, -0.0, INF), (INF, 2.0, INF), (INF, -2.0, -INF), (-INF, 2.0, -INF), (2.0, INF, 0.0),
               (2.0, -INF, -0.0), (-2.0, INF, -0.0), (-2.0, -INF, 0.0)],
    "floor_divide": [(NAN, 1.0, NAN), (1.0, NAN, NAN), (INF, -INF, NAN), (0.0, -0.0, NAN), (0.0, 2.0, 0.0),
                     (-0.0, 2.0, -0.0), (0.0, -2.0, -0.0), (-0.0, -2.0, 0.0), (2.0, 0.0, INF),
                     (2.0, -0.0, -INF), (-2.0, 0.0, -INF), (-2.0, -0.0, INF), (INF, 2.0, (INF, NAN)),
                     (INF, -2.0, (-INF, NAN)), (-INF, 2.0, (-INF, NAN)), (-INF, -2.0, (INF, NAN)),
                     (2.0, INF, 0.0), (2.0, -INF, (-0.0, -1.0)), (-2.0, INF, (-0.0, -1.0)), (-2.0, -INF, 0.0),
                     (7.0, -2.0, -4.0), (-7.0, 2.0, -4.0)],
    "remainder": [(NAN, 1.0, NAN), (1.0, NAN, NAN), (INF, INF, NAN), (0.0, 0.0, NAN), (0.0, 2.0, 0.0),
                  (-0.0, 2.0, 0.0), (0.0, -2.0, -0.0), (-0.0, -2.0, -0.0), (2.0, 0.0, NAN), (-2.0, -0.0, NAN),
                  (INF, 2.0, NAN), (-INF, -2.0, NAN), (2.0, INF, 2.0), (2.0, -INF, -INF), (-2.0, INF, INF),
                  (-2.0, -INF, -2.0), (7.0, -2.0, -1.0), (-7.0, 2.0, 1.0)],
    "pow": [(2.0, NAN, NAN), (NAN, 0.0, 1.0), (NAN, -0.0, 1.0), (NAN, 2.0, NAN), (2.0, INF, INF),
            (2.0, -INF, 0.0), (1.0, INF, 1.0), (-1.0, -INF, 1.0), (0.5, INF, 0.0), (0.5, -INF, INF),
            (INF, 2.0, INF), (INF, -2.0, 0.0), (-INF, 3.0, -INF), (-INF, 2.0, INF), (-INF, -3.0, -0.0),
            (-INF, -2.0, 0.0), (0.0, 2.0, 0.0), (0.0, -2.0, INF), (-0.0, 3.0, -0.0), (-0.0, 2.0, 0.0),
            (-0.0, -3.0, -INF), (-0.0, -2.0, INF), (-2.0, 0.5, NAN)],
    "atan2": [(NAN, 1.0, NAN), (1.0, NAN, NAN), (1.0, 0.0, PI / 2), (1.0, -0.0, PI / 2), (0.0, 1.0, 0.0),
              (0.0, 0.0, 0.0), (0.0, -0.0, PI), (0.0, -1.0, PI), (-0.0, 1.0, -0.0), (-0.0, 0.0, -0.0),
              (-0.0, -0.0, -PI), (-0.0, -1.0, -PI), (-1.0, 0.0, -PI / 2), (-1.0, -0.0, -PI / 2),
              (1.0, INF, 0.0), (1.0, -INF, PI), (-1.0, INF, -0.0), (-1.0, -INF, -PI), (INF, 1.0, PI / 2),
              (-INF, 1.0, -PI / 2), (INF, INF, PI / 4), (INF, -INF, 3 * PI / 4), (-INF, INF, -PI / 4),
              (-INF, -INF, -3 * PI / 4)],
    "copysign": [(2.0, -0.0, -2.0), (-2.0, 0.0, 2.0), (INF, -1.0, -INF), (0.0, -INF, -0.0), (NAN, 1.0, NAN)],
    "hypot": [(INF, NAN, INF), (NAN, -INF, INF), (0.0, -3.0, 3.0), (-3.0, -0.0, 3.0), (1.0, NAN, NAN),
              (NAN, NAN, NAN)],
    "logaddexp": [(NAN, 1.0, NAN), (1.0, NAN, NAN), (INF, 1.0, INF), (1.0, INF, INF), (INF, -INF, INF),
                  (-INF, -INF, -INF)],
    "maximum": [(NAN, 1.0, NAN), (1.0, NAN, NAN), (-INF, 1.0, 1.0)],
    "minimum": [(NAN, 1.0, NAN), (1.0, NAN, NAN), (INF, 1.0, 1.0)],
    "nextafter": [(NAN, 1.0, NAN), (1.0, NAN, NAN), (-0.0, 0.0, 0.0), (0.0, -0.0, -0.0), (2.0, 2.0, 2.0)],
}

C = complex
CUNARY: dict[str, list[tuple[complex, Any]]] = {
    "sqrt": [(C(0.0, 0.0), C(0.0, 0.0)), (C(-0.0, 0.0), C(0.0, 0.0)), (C(1.0, INF), C(INF, INF)),
             (C(NAN, INF), C(INF, INF)), (C(-INF, 1.0), C(0.0, INF)), (C(INF, 1.0), C(INF, 0.0)),
             (C(-INF, -0.0), C(0.0, -INF))],
    "log": [(C(-0.0, 0.0), C(-INF, PI)), (C(0.0, 0.0), C(-INF, 0.0)), (C(1.0, INF), C(INF, PI / 2)),
            (C(-INF, 1.0), C(INF, PI)), (C(INF, 1.0), C(INF, 0.0)), (C(-INF, INF), C(INF, 3 * PI / 4)),
            (C(INF, INF), C(INF, PI / 4)), (C(-1.0, 0.0), C(0.0, PI)), (C(-1.0, -0.0), C(0.0, -PI))],
    "log1p": [(C(-1.0, 0.0), C(-INF, 0.0)), (C(0.0, 0.0), C(0.0, 0.0)), (C(1.0, INF), C(INF, PI / 2)),
              (C(-INF, 1.0), C(INF, PI)), (C(INF, 1.0), C(INF, 0.0))],
    "exp": [(C(0.0, 0.0), C(1.0, 0.0)), (C(-0.0, 0.0), C(1.0, 0.0)), (C(INF, 0.0), C(INF, 0.0)),
            (C(NAN, 0.0), C(NAN, 0.0)), (C(1.0, INF), C(NAN, NAN)), (C(-INF, 1.0), C(0.0 * math.cos(1.0),
                                                                                   0.0 * math.sin(1.0)))],
    "expm1": [(C(0.0, 0.0), C(0.0, 0.0)), (C(-0.0, 0.0), C(0.0, 0.0)), (C(-0.0, -0.0), C(0.0, -0.0)),
              (C(0.0, -0.0), C(0.0, -0.0)), (C(INF, 0.0), C(INF, 0.0)), (C(NAN, 0.0), C(NAN, 0.0)),
              (C(1.0, INF), C(NAN, NAN)), (C(-INF, 1.0), C(-1.0, 0.0))],
    "sinh": [(C(0.0, 0.0), C(0.0, 0.0)), (C(INF, 0.0), C(INF, 0.0)), (C(NAN, 0.0), C(NAN, 0.0))],
    "cosh": [(C(0.0, 0.0), C(1.0, 0.0)), (C(INF, 0.0), C(INF, 0.0)), (C(NAN, 0.0), C(NAN, 0.0))],
    "tanh": [(C(0.0, 0.0), C(0.0, 0.0)), (C(INF, 1.0), C(1.0, 0.0)), (C(NAN, 0.0), C(NAN, 0.0))],
    "asinh": [(C(0.0, 0.0), C(0.0, 0.0)), (C(1.0, INF), C(INF, PI / 2)), (C(INF, 1.0), C(INF, 0.0))],
    "acosh": [(C(0.0, 0.0), C(0.0, PI / 2)), (C(-0.0, 0.0), C(0.0, PI / 2)), (C(1.0, INF), C(INF, PI / 2)),
              (C(INF, 1.0), C(INF, 0.0)), (C(-INF, 1.0), C(INF, PI))],
    "atanh": [(C(0.0, 0.0), C(0.0, 0.0)), (C(1.0, 0.0), C(INF, 0.0)), (C(INF, 1.0), C(0.0, PI / 2)),
              (C(1.0, INF), C(0.0, PI / 2))],
    "abs": [(C(INF, NAN), INF), (C(NAN, -INF), INF), (C(-0.0, 0.0), 0.0), (C(3.0, -4.0), 5.0)],
    "sign": [(C(0.0, 0.0), C(0.0, 0.0)), (C(-3.0, 4.0), C(-0.6, 0.8))],
}

def _shifted(name: str, a: int, s: int, bits: int) -> int:
    # unarray's rule for shift counts (the standard leaves counts outside [0, bits) to the library).
    if name == "bitwise_left_shift":
        v = (a << s) if 0 <= s < bits else 0
        v &= (1 << bits) - 1
        return v - (1 << bits) if v >> (bits - 1) else v
    return a >> s if 0 <= s < bits else (-1 if a < 0 else 0)


def _listed(backend: TestBackend, dtype: str) -> bool:
    with ua.use(backend.name):
        return dtype in ua.__array_namespace_info__().dtypes()


def _matches(got: Any, want: Any, eps: float) -> bool:
    if isinstance(want, tuple):
        return any(_matches(got, w, eps) for w in want)
    if isinstance(want, bool) or isinstance(got, (bool, np.bool_)):
        return bool(got) is want
    if isinstance(want, complex) or isinstance(got, complex):
        g, w = complex(got), complex(want)
        return _matches(g.real, w.real, eps) and _matches(g.imag, w.imag, eps)
    g, w = float(got), float(want)
    if math.isnan(w):
        return math.isnan(g)
    if w == 0 or math.isinf(w):
        return g == w and math.copysign(1, g) == math.copysign(1, w)
    return abs(g - w) <= 8 * eps * abs(w)


def _check(backend: TestBackend, name: str, dtype: str, args: list[np.ndarray], want: list[Any]) -> None:
    if not _listed(backend, dtype):
        pytest.skip(f"{backend.name} lists no {dtype} here")
    xs = [backend.asarray(a) for a in args]
    with np.errstate(all="ignore"):
        out = backend.to_numpy(getattr(ua, name)(*xs))
    eps = float(np.finfo(dtype).eps)
    bad = [(tuple(a[i].item() for a in args), out[i].item(), w) for i, w in enumerate(want)
           if not _matches(out[i].item(), w, eps)]
    assert not bad, f"{name} {dtype}: (input, got, want) {bad}"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_real_unary(backend: TestBackend, name: str, dtype: str) -> None:
    rows = UNARY[name]
    _check(backend, name, dtype, [np.array([x for x, _ in rows], dtype)], [w for _, w in rows])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_real_binary(backend: TestBackend, name: str, dtype: str) -> None:
    rows = BINARY[name]
    args = [np.array([r[0] for r in rows], dtype), np.array([r[1] for r in rows], dtype)]
    _check(backend, name, dtype, args, [r[2] for r in rows])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_real_binary_with_a_python_scalar(backend: TestBackend, name: str) -> None:
    # The same rows with x2 a Python float (the standard's scalar argument), grouped by that scalar.
    rows = BINARY[name]
    for x2 in sorted({r[1] for r in rows}, key=repr):
        group = [r for r in rows if repr(r[1]) == repr(x2)]
        x = backend.asarray(np.array([r[0] for r in group], np.float32))
        with np.errstate(all="ignore"):
            out = backend.to_numpy(getattr(ua, name)(x, x2))
        bad = [(r[0], g, r[2]) for r, g in zip(group, out.tolist(), strict=True)
               if not _matches(g, r[2], float(np.finfo(np.float32).eps))]
        assert not bad, f"{name}(x, {x2}): (x, got, want) {bad}"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(CUNARY))
def test_complex_unary(backend: TestBackend, name: str, dtype: str) -> None:
    rows = CUNARY[name]
    # conj symmetry: f(conj(x)) == conj(f(x)) for the analytic functions, checked on the mirrored rows too.
    mirrored = [] if name in ("abs", "sign") else [(x.conjugate(), w.conjugate()) for x, w in rows
                                                   if isinstance(w, complex) and x.imag != 0]
    rows = rows + mirrored
    _check(backend, name, dtype, [np.array([x for x, _ in rows], dtype)], [w for _, w in rows])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shift_counts_outside_the_bit_width(backend: TestBackend, name: str, dtype: str) -> None:
    if not _listed(backend, dtype):
        pytest.skip(f"{backend.name} lists no {dtype} here")
    bits = np.iinfo(dtype).bits
    rows = [(a, s) for a in (1, 5, -8, np.iinfo(dtype).min, np.iinfo(dtype).max)
            for s in (0, 3, bits - 1, bits, bits + 9, -1, -bits)]
    args = [np.array([a for a, _ in rows], dtype), np.array([s for _, s in rows], dtype)]
    out = backend.to_numpy(getattr(ua, name)(*[backend.asarray(a) for a in args]))
    want = [_shifted(name, a, s, bits) for a, s in rows]
    bad = [(r, g, w) for r, g, w in zip(rows, out.tolist(), want, strict=True) if g != w]
    assert not bad, f"{name} {dtype}: ((x1, x2), got, want) {bad}"


def test_the_table_agrees_with_cmath_where_cmath_is_defined() -> None:
    # A guard on the table itself: Python's cmath follows C99 Annex G, which the standard follows.
    fn = {"sqrt": cmath.sqrt, "log": cmath.log, "exp": cmath.exp, "sinh": cmath.sinh, "cosh": cmath.cosh,
          "tanh": cmath.tanh, "asinh": cmath.asinh, "acosh": cmath.acosh}
    checked = 0
    for name, f in fn.items():
        for x, want in CUNARY[name]:
            try:
                got = f(x)
            except (ValueError, OverflowError):
                continue
            assert _matches(got, want, 2**-52), (name, x, got, want)
            checked += 1
    assert checked >= 20
