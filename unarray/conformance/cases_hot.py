"""The hot ops in depth: matmul (with the precision policy), transposes and every reduction
across its axis / keepdims / dtype / correction / include_initial forms."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np

from unarray.conformance.cases_common import Case, Inputs, Profile, arr, dim, shape

AXES: tuple[Any, ...] = (None, 0, -1, (0, 2))
UP = {"float32": "float64", "complex64": "complex128", "int8": "int64", "int32": "int64", "uint8": "uint64",
      "float64": "float64", "complex128": "complex128", "int64": "int64"}


class DT(str):
    """A dtype argument by name: the runner passes ``ua.<name>`` to unarray and the
    float64 counterpart to the reference."""


def _red_terms(inp: Inputs) -> int:
    (x,), kw = inp
    axis = kw.get("axis")
    if axis is None:
        return math.prod(x.shape)
    return math.prod(x.shape[a] for a in ((axis,) if isinstance(axis, int) else axis))


def _cum_terms(inp: Inputs) -> int:
    (x,), kw = inp
    return cast(int, x.shape[kw["axis"]] + 1)


def _combos(p: Profile, *options: Sequence[Any]) -> list[tuple[Any, ...]]:
    if p.exhaustive:
        return list(itertools.product(*options))
    # Each value of each option at least once, cycling the shorter lists.
    n = max(len(o) for o in options)
    return [tuple(o[i % len(o)] for o in options) for i in range(n)]


def _reduction(p: Profile, op: str, families: str, lo: float, hi: float, signed: bool, with_dtype: bool = False,
               with_correction: bool = False, keepdims: bool = True, holes: bool = False) -> Iterator[Case]:
    for dtype in p.of(families, hot=True):
        dts = [None, DT(UP[dtype])] if with_dtype and dtype in UP else [None]
        corrections = [0.0, 1.0] if with_correction else [None]
        kds = (False, True) if keepdims else (False,)
        for axis, kd, dt, corr in _combos(p, AXES, kds, dts, corrections):
            if op in ("argmin", "argmax") and isinstance(axis, tuple):
                continue
            kw: dict[str, Any] = {"axis": axis, "keepdims": kd}
            form = f"axis={axis}" + (", keepdims" if kd else "")
            if dt is not None:
                kw["dtype"] = dt
                form += f", dtype={dt}"
            if corr is not None:
                kw["correction"] = corr
                form += f", correction={corr:g}"

            def draw(rng: np.random.Generator, d: str, kw: dict[str, Any] = kw) -> Inputs:
                x = arr(rng, shape(rng, 3, 1, 4), d, lo, hi, signed)
                if holes:  # any/all need falsy elements too
                    x = np.where(rng.random(x.shape) < 0.3, np.zeros((), x.dtype), x)
                return (x,), dict(kw)

            yield Case(op, form, dtype, draw, n_terms=_red_terms, examples=p.hot_examples)


def _cumulative(p: Profile, op: str, families: str, lo: float, hi: float) -> Iterator[Case]:
    for dtype in p.of(families, hot=True):
        dts = [None, DT(UP[dtype])] if dtype in UP else [None]
        for axis, init, dt in _combos(p, (0, -1), (False, True), dts):
            kw: dict[str, Any] = {"axis": axis, "include_initial": init}
            form = f"axis={axis}" + (", include_initial" if init else "")
            if dt is not None:
                kw["dtype"] = dt
                form += f", dtype={dt}"

            def draw(rng: np.random.Generator, d: str, kw: dict[str, Any] = kw) -> Inputs:
                return (arr(rng, shape(rng, 3, 1, 4), d, lo, hi, signed=True),), dict(kw)

            yield Case(op, form, dtype, draw, n_terms=_cum_terms, examples=p.hot_examples)


MATMUL_FORMS = {
    "(M,K)@(K,N)": lambda r, k: ((r[0], k), (k, r[1])),
    "(B,M,K)@(K,N)": lambda r, k: ((r[2], r[0], k), (k, r[1])),
    "(B,1,M,K)@(C,K,N)": lambda r, k: ((r[2], 1, r[0], k), (r[3], k, r[1])),
    "(K,)@(K,N)": lambda r, k: ((k,), (k, r[1])),
    "(M,K)@(K,)": lambda r, k: ((r[0], k), (k,)),
    "(K,)@(K,)": lambda r, k: ((k,), (k,)),
}


def _matmul_ref(x1: Any, x2: Any, precision: str | None = None) -> Any:
    return np.matmul(x1, x2)


def _matmul_scale(args: tuple[Any, ...], kw: dict[str, Any]) -> float:
    a, b = (np.abs(x) for x in args)
    return float(np.max(np.matmul(a, b)))


def _matmul_terms(inp: Inputs) -> int:
    return int(inp[0][0].shape[-1])


def _matmul(p: Profile) -> Iterator[Case]:
    for dtype in p.of("int float complex", hot=True):
        for form, shapes in MATMUL_FORMS.items():
            def draw(rng: np.random.Generator, d: str, shapes: Any = shapes) -> Inputs:
                s1, s2 = shapes(shape(rng, 4, 1, 6), dim(rng, 1, 32))
                lo, hi = (1, 5) if d.startswith(("int", "uint")) else (0.5, 2.0)
                return (arr(rng, s1, d, lo, hi), arr(rng, s2, d, lo, hi)), {}

            yield Case("matmul", form, dtype, draw, ref=_matmul_ref, n_terms=_matmul_terms, scale=_matmul_scale,
                       examples=p.hot_examples)
    # The precision policy: float32 under "highest" must meet float32 tolerances on every device
    # (a silent TF32/bf16 pass over K=1024 terms misses them by orders of magnitude).
    for policy in ("highest", "tf32", "bf16"):
        def draw_p(rng: np.random.Generator, d: str, policy: str = policy) -> Inputs:
            m, n = dim(rng, 16, 64), dim(rng, 16, 64)
            return (arr(rng, (m, 1024), d), arr(rng, (1024, n), d)), {"precision": policy}

        yield Case("matmul", f"precision={policy}, K=1024", "float32", draw_p, ref=_matmul_ref,
                   n_terms=_matmul_terms, scale=_matmul_scale, precision=policy, examples=p.hot_examples)

    def draw_scope(rng: np.random.Generator, d: str) -> Inputs:
        return (arr(rng, (32, 1024), d), arr(rng, (1024, 32), d)), {}

    def call_scope(ua: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        with ua.precision("highest"):
            return ua.matmul(*args)

    yield Case("matmul", "with ua.precision('highest'), K=1024", "float32", draw_scope, ref=_matmul_ref,
               n_terms=_matmul_terms, scale=_matmul_scale, call=call_scope, examples=p.hot_examples)


def _transposes(p: Profile) -> Iterator[Case]:
    for dtype in p.of("bool int float complex", hot=True):
        def draw_t(rng: np.random.Generator, d: str) -> Inputs:
            return (arr(rng, shape(rng, dim(rng, 2, 4)), d),), {}

        yield Case("matrix_transpose", "ndim 2-4", dtype, draw_t, compare="exact", examples=p.hot_examples)

        def draw_p(rng: np.random.Generator, d: str) -> Inputs:
            x = arr(rng, shape(rng, dim(rng, 1, 4)), d)
            return (x,), {"axes": tuple(int(a) for a in rng.permutation(x.ndim))}

        yield Case("permute_dims", "random axes, ndim 1-4", dtype, draw_p, compare="exact",
                   examples=p.hot_examples)
        yield Case("ascontiguousarray", "of a permuted view, ndim 1-4", dtype, draw_p, compare="exact",
                   examples=p.hot_examples, call=_compact_permuted,
                   ref=lambda x, axes: np.ascontiguousarray(np.transpose(x, axes)))


def _compact_permuted(ua: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    return ua.ascontiguousarray(ua.permute_dims(args[0], kw["axes"]))


def cases(p: Profile) -> Iterator[Case]:
    yield from _matmul(p)
    yield from _transposes(p)
    yield from _reduction(p, "sum", "int float complex", 0.5, 2.0, False, with_dtype=True)
    yield from _reduction(p, "prod", "int float complex", 0.8, 1.25, True, with_dtype=True)
    yield from _reduction(p, "mean", "float complex", 0.5, 2.0, False)
    yield from _reduction(p, "var", "float", 0.5, 2.0, True, with_correction=True)
    yield from _reduction(p, "std", "float", 0.5, 2.0, True, with_correction=True)
    for op in ("min", "max", "argmin", "argmax"):
        yield from _reduction(p, op, "int float", 1.0, 9.0, True)
    for op in ("any", "all"):
        yield from _reduction(p, op, "bool int float", 0.5, 2.0, True, holes=True)
    yield from _cumulative(p, "cumulative_sum", "int float complex", 1.0, 3.0)
    yield from _cumulative(p, "cumulative_prod", "int float complex", 0.8, 1.25)
