"""One case or one handoff check, run on one backend and device and compared with its reference.

``run_case`` runs every example of a case against NumPy's float64 result (``compare``);
``handoff_case`` checks that ``ua.to`` between two backends is zero-copy or a counted copy. A
failure that is a listed deviation comes back as ``known``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from typing import Any, cast

import numpy as np

import unarray as ua
from unarray import _backends
from unarray._backends import _handoff
from unarray._backends._host import aligned_copy
from unarray._dtypes import canonical_name
from unarray.conformance.cases import Case, arr, tolerance, upcast
from unarray.conformance.cases_common import SHAPES_PER_CASE, shapes_of
from unarray.conformance.cases_hot import DT
from unarray.conformance.deviations import lookup
from unarray.conformance.results import Env, Result

__all__ = ["compare", "handoff_case", "handoff_form", "owned_pair", "run_case", "short", "to_numpy"]

_UP = {"float16": "float64", "float32": "float64", "complex64": "complex128"}


# -- conversions ----------------------------------------------------------------------------
def to_numpy(x: Any) -> Any:
    """A NumPy array (or a tuple of them) with the values of ``x``, from any backend and device."""
    if isinstance(x, (tuple, list)):
        return tuple(to_numpy(i) for i in x)
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex, str)):
        return np.asarray(x)
    root = type(x).__module__.partition(".")[0]
    if root == "torch":
        x = x.detach().cpu().resolve_conj().resolve_neg()
        return (x.float() if str(x.dtype) == "torch.bfloat16" else x).numpy()
    if root == "cupy":
        return x.get()
    if hasattr(x, "copy_to_host"):  # Numba CUDA device arrays
        return x.copy_to_host()
    if root in ("tensorflow", "tf_keras") or hasattr(x, "numpy") and root != "jax":
        return np.asarray(x.numpy())
    return np.asarray(x)


def _to_backend(ua: Any, a: Any, env: Env) -> Any:
    if isinstance(a, DT):
        return getattr(ua, str(a))
    if isinstance(a, np.ndarray):
        return ua.asarray(a, backend=env.backend, device=env.device)
    if isinstance(a, list) and a and all(isinstance(i, np.ndarray) for i in a):
        return [_to_backend(ua, i, env) for i in a]
    return a


def _to_ref(a: Any, up: bool) -> Any:
    if isinstance(a, DT):
        return np.dtype(_UP.get(str(a), str(a)) if up else str(a))
    return upcast(a) if up else a


def _function(root: Any, op: str) -> Callable[..., Any]:
    # The op ("add", "linalg.inv") in NumPy (the reference) or in unarray (the call).
    ns, _, name = op.rpartition(".")
    return cast(Callable[..., Any], getattr(getattr(root, ns) if ns else root, name))


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [leaf for i in x for leaf in _leaves(i)]
    return [x]


# -- comparison -------------------------------------------------------------------------------
def compare(case: Case, actual: Any, expected: Any, args64: tuple[Any, ...], kw64: dict[str, Any],
            n_terms: int) -> tuple[float, float, str]:
    """(largest relative error, tolerance, message); the message is empty when they agree."""
    if callable(case.compare):
        err = float(case.compare(actual, expected, args64))
        tol = tolerance(case.dtype, n_terms, case.precision) * case.tol_factor
        return err, tol, "" if err <= tol else "values differ from the reference"
    a_leaves, e_leaves = _leaves(actual), _leaves(expected)
    if len(a_leaves) != len(e_leaves):
        return math.inf, 0.0, f"returned {len(a_leaves)} arrays, expected {len(e_leaves)}"
    worst, tol = 0.0, 0.0
    for a, e in zip(a_leaves, e_leaves, strict=False):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape:
            return math.inf, 0.0, f"shape {a.shape}, expected {e.shape}"
        if case.compare == "shape":
            continue
        exact = case.compare == "exact" or e.dtype.kind in "biuUSO" or a.dtype.kind in "bUSO"
        if exact:
            same = np.array_equal(a, e, equal_nan=e.dtype.kind in "fc" and a.dtype.kind in "fc")
            if not same:
                return math.inf, 0.0, "values differ from the reference (exact comparison)"
            continue
        a64 = a.astype(np.complex128 if a.dtype.kind == "c" or e.dtype.kind == "c" else np.float64)
        finite = np.isfinite(e)
        if not np.array_equal(np.isfinite(a64), finite) or not np.array_equal(np.isnan(a64), np.isnan(e)):
            return math.inf, 0.0, "NaN/inf positions differ from the reference"
        if np.any(~finite & ~np.isnan(e)) and not np.array_equal(a64[~finite], e[~finite], equal_nan=True):
            return math.inf, 0.0, "infinities differ from the reference"
        if not finite.any():
            continue
        scale = case.scale(args64, kw64) if case.scale else float(np.max(np.abs(e[finite])))
        diff = float(np.max(np.abs(a64[finite] - e[finite])))
        worst = max(worst, diff / scale if scale > 0 else diff)
        tol = tolerance(case.dtype if case.dtype in ("float32", "float64", "complex64", "complex128")
                        else str(e.dtype), n_terms, case.precision) * case.tol_factor
    if worst > tol:
        return worst, tol, f"largest relative error {worst:.3g} exceeds the tolerance {tol:.3g}"
    return worst, tol, ""


def _dtype_of(x: Any) -> str:
    d = getattr(x, "dtype", None)
    return (canonical_name(d) or str(d)) if d is not None else type(x).__name__


def _native_problem(ua: Any, pairs: list[tuple[Any, Any]], env: Env) -> str:
    for a, _ in pairs:
        try:
            ok = ua.backend_of(a) == env.backend and (env.backend == "numpy" or ua.device(a) == env.device)
        except Exception:
            ok = False
        if not ok:
            return f"returned {type(a).__module__}.{type(a).__name__}, not a {env.backend} array on {env.device}"
    return ""


# -- one case -----------------------------------------------------------------------------------
def run_case(case: Case, env: Env, seed: int = 0) -> Result:
    """Run every example of ``case`` on ``env``; the first failing example decides the result."""
    t0 = time.perf_counter()
    worst = 0.0
    status, message = "pass", ""
    for example in range(case.examples):
        try:
            with shapes_of(case, seed, example, SHAPES_PER_CASE):
                args, kw = case.draw(case.rng(seed, example), case.dtype)
            ref = case.ref or _function(np, case.op)
            args64 = tuple(_to_ref(a, case.ref_upcast) for a in args)
            kw64 = {k: _to_ref(v, case.ref_upcast) for k, v in kw.items()}
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                expected = ref(*args64, **kw64)
                orig = ref(*(_to_ref(a, False) for a in args), **{k: _to_ref(v, False) for k, v in kw.items()}) \
                    if case.check_dtype else None
            want_dtypes = [_dtype_of(e) for e in _leaves(orig) if isinstance(e, (np.ndarray, np.generic))] \
                if case.check_dtype else None
            n_terms = case.n_terms((args, kw)) if callable(case.n_terms) else case.n_terms
        except Exception as e:  # a bug in the suite itself, not in the backend
            status, message = "error", f"suite could not build example {example}: {type(e).__name__}: {e}"
            break
        try:
            bargs = tuple(_to_backend(ua, a, env) for a in args)
            bkw = {k: _to_backend(ua, v, env) for k, v in kw.items()}
            if case.creation:
                bkw.update(backend=env.backend, device=env.device)
            if case.call is not None:
                out = case.call(ua, bargs, bkw, env) if case.with_env else case.call(ua, bargs, bkw)
            else:
                out = _function(ua, case.op)(*bargs, **bkw)
            pairs = [(a, e) for a, e in zip(_leaves(out), _leaves(expected), strict=False)
                     if isinstance(e, (np.ndarray, np.generic))]
            problem = _native_problem(ua, pairs, env)
            if want_dtypes is not None and not problem:
                got = [_dtype_of(a) for a, _ in pairs]
                if got != want_dtypes:
                    problem = f"result dtype {', '.join(got)}, expected {', '.join(want_dtypes)}"
            err, _tol, msg = compare(case, to_numpy(out), to_numpy(expected), args64, kw64, n_terms)
            worst = max(worst, err)
            if problem or msg:
                status, message = "fail", f"example {example}: {problem or msg}"
                break
        except Exception as e:
            status, message = "error", f"example {example}: {type(e).__name__}: {short(str(e))}"
            break
    result = Result(case.op, case.form, case.dtype, env.backend, str(env.device), env.platform, status,
                    None if status == "error" else worst, message, seconds=time.perf_counter() - t0)
    return _apply_deviation(result)


def short(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _apply_deviation(r: Result) -> Result:
    if r.status in ("fail", "error"):
        dev = lookup(r.op, r.backend, r.platform, r.dtype)
        if dev is not None:
            r.status, r.reason = "known", dev.reason
    return r


# -- handoff --------------------------------------------------------------------------------------
def owned_pair(src: str, dst: str) -> bool:
    return _handoff.owned(_backends.handoff(src), _backends.handoff(dst))


def handoff_form(strided: bool, owned: bool = False) -> str:
    if owned:  # an immutable source (JAX, TF) and a target without read-only arrays (torch, CuPy, Numba)
        return "immutable source, one counted copy"
    return "strided view, copy only if counted" if strided else "contiguous, zero-copy"


def handoff_case(src: str, dst: str, device: Any, dtype: str, strided: bool, seed: int = 0) -> Result:
    """``ua.to`` from ``src`` to ``dst`` on one device: zero-copy by data pointer, or a counted copy."""
    owned = owned_pair(src, dst)
    form = handoff_form(strided, owned)
    env = Env(src, device)
    t0 = time.perf_counter()
    status, message = "pass", ""
    counted_copy = False
    try:
        # On a 64-byte boundary: whether an importer with XLA's alignment rule aliases it is then the same every run.
        base = aligned_copy(arr(np.random.default_rng([seed, len(src), len(dst)]), (64, 34), dtype))
        x = ua.asarray(base, backend=src, device=device)
        if strided:
            x = x[:, ::2]
            base = base[:, ::2]
        ua.stats(reset=True)
        y = ua.to(x, dst)
        st = ua.stats()
        if ua.backend_of(y) != dst or ua.device(y) != device:
            status, message = "fail", f"returned {type(y).__name__} on {ua.device(y)}, not {dst} on {device}"
        elif not np.array_equal(to_numpy(y), base):
            status, message = "fail", "values changed in the handoff"
        else:
            same = _backends.handoff(src).data_ptr(x) == _backends.handoff(dst).data_ptr(y)
            if owned:
                if same or st.get("copies", 0) != 1:
                    status, message = "fail", (f"a writable alias of an immutable {src} array" if same else
                                               f"{st.get('copies', 0)} copies counted where one is due")
            elif not same and not st.get("copies", 0):
                status, message = "fail", "copied (data pointers differ) but ua.stats() counted no copy"
            elif not same and not strided:
                status, message = "fail", f"copied (data pointers differ; {st.get('copies', 0)} copies counted)"
                counted_copy = True
    except Exception as e:
        status, message = "error", f"{type(e).__name__}: {short(str(e))}"
    r = Result(f"handoff->{dst}", form, dtype, src, str(device), env.platform, status, None, message,
               seconds=time.perf_counter() - t0)
    # Note: a listed handoff deviation excuses a counted copy only; a silent copy or an error is a bug.
    return _apply_deviation(r) if counted_copy else r
