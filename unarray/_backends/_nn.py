"""The building blocks around attention (``ua.softmax`` ... ``ua.silu``): one definition in the array
API (the ``*_formula`` functions below, run on ``b.xp``), which is each function's semantics; the fused
kernels of the libraries that have them live in their packages and compute the same thing (checked against
a float64 reference in tests/attention/test_nn.py and tests/attention/test_nn_trust.py).

Each ``nn_<op>`` method of :class:`NNOps` (the backend's base) returns a :class:`Plan`: the kernel the call
enters, a real callable, and the call that enters it. The front end runs the plan; ``ua.explain`` prints the
same plan's kernel, named from the callable, so what is reported is what was chosen and runs. A backend with a
fused kernel overrides the op in its own package (``_backends/<lib>/nn.py``).

Semantics (the formulas below, in IEEE arithmetic, as torch and JAX compute them):

- ``softmax``: ``exp(x - m) / sum(exp(x - m))`` with ``m`` the slice's maximum, so a slice holding a
  NaN or ``+inf``, or only ``-inf``, is NaN throughout; ``-inf`` elsewhere gives 0.
- ``log_softmax``: ``(x - m) - log(sum(exp(x - m)))``, NaN in the same slices.
- ``logsumexp``: ``m + log(sum(exp(x - m)))`` with a non-finite ``m`` taken as 0: ``-inf`` for a
  slice of ``-inf`` (or an empty one), ``+inf`` where a ``+inf`` is present, NaN where a NaN is.
- ``layer_norm``: ``(x - mean) / sqrt(var + eps) * weight + bias`` over ``axis`` (biased variance).
- ``rms_norm``: ``x / sqrt(mean(x**2) + eps) * weight``; ``eps=None`` is the ``finfo(x.dtype).eps``.
- ``gelu``: ``x * (1 + erf(x / sqrt(2))) / 2``, or with ``approximate=True`` the tanh form
  ``x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3))) / 2``. ``silu``: ``x * sigmoid(x)``.
- ``axis=()`` reduces over no axis: every element is a slice of its own.
- float16 and bfloat16 are computed in float32 (the statistics accumulate there, as torch's kernels do)
  and the result is rounded once to the result dtype; torch's own kernels do this themselves.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

HALF = ("float16", "bfloat16")
# finfo(dtype).eps by name: NumPy's finfo takes no bfloat16 and TensorFlow's dtypes are not NumPy's.
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


class Plan(NamedTuple):
    """What one ``ua.nn`` call (or attention) runs: ``kernel``, the function it enters, and ``call``, which enters it.

    The call runs ``call(kernel)`` and ``ua.explain`` prints :attr:`label`, the kernel's qualified name read from
    the callable itself, then ``note``: the route's facts (a cast around the kernel, a correction after it, the
    choice a library makes inside it). A callable ``note`` is read only when explained: facts that cost a query
    of the library on every call are asked of the plan's own operands, once, when ``ua.explain`` prints them."""

    kernel: Callable[..., Any]
    call: Callable[[Callable[..., Any]], Any]
    note: str | Callable[[], str] = ""
    # The same route run on other arrays of the call's signature, (q, k, v) -> the result, holding no arrays: the
    # front end keeps it per signature (attention), so a repeated call skips the checks, the choice and the plan.
    again: Callable[..., Any] | None = None

    def run(self) -> Any:
        return self.call(self.kernel)

    @property
    def detail(self) -> str:
        return self.note() if callable(self.note) else self.note

    @property
    def label(self) -> str:
        detail = self.detail
        return qualified_name(self.kernel) + (f" {detail}" if detail else "")


def around(inner: Plan, after: Callable[[Any], Any], more: str) -> Plan:
    """``inner`` entered as it is, its result passed through ``after``, ``more`` added to its facts (a route that
    hands its operands to another plan: another backend's, a shard's)."""
    return Plan(inner.kernel, lambda k: after(inner.call(k)), lambda: f"{inner.detail}{more}")


def qualified_name(fn: Any) -> str:
    """The importable dotted name of ``fn`` (``torch.softmax``, ``jax._src.nn.functions.softmax``)."""
    module = getattr(fn, "__module__", None) or ""
    for name in (getattr(fn, "__qualname__", None), getattr(fn, "__name__", None)):
        if name and resolve(f"{module}.{name}") is fn:
            return f"{module}.{name}"
    return f"{module}.{getattr(fn, '__qualname__', fn)}"


def resolve(dotted: str) -> Any:
    """The object a dotted name names (the longest importable module, then attributes), or None."""
    import importlib
    import sys

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        mod = sys.modules.get(".".join(parts[:i]))
        if mod is None:
            try:
                mod = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
        obj: Any = mod
        for attr in parts[i:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


# -- the array-API definitions (the semantics; axes == () reduces over nothing) ---------------------------
def _over(reduce: Callable[..., Any], v: Any, axes: tuple[int, ...]) -> Any:
    # ``reduce`` (xp.max, xp.sum, xp.mean) over ``axes``, kept as size-1 dimensions; no axis: v itself.
    return reduce(v, axis=axes, keepdims=True) if axes else v


def softmax_formula(xp: Any, x: Any, axis: int, log: bool) -> Any:
    if x.shape[axis] == 0:
        return x
    s = x - xp.max(x, axis=axis, keepdims=True)
    if log:
        return s - xp.log(xp.sum(xp.exp(s), axis=axis, keepdims=True))
    e = xp.exp(s)
    return e / xp.sum(e, axis=axis, keepdims=True)


def logsumexp_formula(xp: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if any(x.shape[a] == 0 for a in axes):  # no maximum to shift by: the empty sum, log(0) = -inf
        return xp.log(xp.sum(xp.exp(x), axis=axes, keepdims=keepdims))
    m = _over(xp.max, x, axes)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    out = m + xp.log(_over(xp.sum, xp.exp(x - m), axes))
    return out if keepdims or not axes else xp.squeeze(out, axis=axes)


def layer_norm_formula(xp: Any, x: Any, axes: tuple[int, ...], weight: Any, bias: Any, eps: float) -> Any:
    d = x - _over(xp.mean, x, axes)
    out = d / xp.sqrt(_over(xp.mean, d * d, axes) + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def rms_norm_formula(xp: Any, x: Any, axes: tuple[int, ...], weight: Any, eps: float) -> Any:
    out = x / xp.sqrt(_over(xp.mean, x * x, axes) + eps)
    return out if weight is None else out * weight


def gelu_formula(xp: Any, x: Any, approximate: bool, erf: Callable[[Any], Any]) -> Any:
    if approximate:
        c = math.sqrt(2 / math.pi)
        return x * (1 + xp.tanh(c * (x + 0.044715 * x * x * x))) / 2
    return x * (1 + erf(x / math.sqrt(2))) / 2


def silu_formula(xp: Any, x: Any) -> Any:
    return x / (1 + xp.exp(-x))


# -- the plans: the generic definitions every backend starts from ----------------------------------------
def _dtype(b: Any, name: str, arrays: tuple[Any, ...]) -> Any:
    # The native dtype called ``name``: an operand's where one has it (NumPy's bfloat16 is ml_dtypes').
    for a in arrays:
        if a is not None and hasattr(a, "dtype") and b.dtype_name(a) == name:
            return a.dtype
    return b.xp.float32 if name == "float32" else b.dtype(name)


def cast(xp: Any, v: Any, dtype: Any) -> Any:
    return v if v is None or not hasattr(v, "dtype") or v.dtype == dtype else xp.astype(v, dtype)


def widened(b: Any, x: Any, kernel: Callable[..., Any], call: Callable[[Callable[..., Any], Any], Any],
            note: str = "") -> Plan:
    """``call(kernel, x)``; half precision runs it on float32 and rounds once (kernels that compute in their
    input's dtype); other dtypes run as they are."""
    name = b.dtype_name(x)
    if name not in HALF:
        return Plan(kernel, lambda k: call(k, x), note)
    xp, dt = b.xp, x.dtype
    return Plan(kernel, lambda k: xp.astype(call(k, xp.astype(x, xp.float32)), dt),
                f"(in float32, rounded to {name})" + (f" {note}" if note else ""))


def trailing_shape(x: Any, axes: tuple[int, ...], *params: Any) -> tuple[int, ...] | None:
    """The trailing shape ``axes`` cover, where they are the trailing ones and each param (weight, bias) is
    None or an array of ``x``'s type of exactly that shape (what fused norms take); else None."""
    if not axes or axes != tuple(range(x.ndim - len(axes), x.ndim)):
        return None
    shape = tuple(x.shape[x.ndim - len(axes):])
    fits = all(p is None or (type(p) is type(x) and tuple(p.shape) == shape) for p in params)
    return shape if fits else None


def precisions(b: Any, x: Any, out: str, ops: tuple[Any, ...]) -> tuple[Any, Any, str]:
    """The dtype the statistics run in (float32 for half dtypes), the result's, and how explain says so."""
    name = "float32" if out in HALF else out
    note = f"(in {name}, rounded to {out})" if name != out else "" if out == b.dtype_name(x) else f"(in {out})"
    return _dtype(b, name, ops), _dtype(b, out, ops), note


class NNOps:
    """``ua.nn``'s plans on the generic path: the array-API definitions above run on the backend's ``xp``.

    A backend with a fused kernel overrides the op in one line (``nn_softmax = <lib>.nn.softmax``, a function
    of its package taking the backend and the op's arguments and returning a :class:`Plan`)."""

    name: ClassVar[str]
    xp: Any

    def dtype_name(self, x: Any) -> str:
        raise NotImplementedError

    def nn_softmax(self, x: Any, axis: int) -> Plan:
        xp = self.xp
        return widened(self, x, softmax_formula, lambda k, v: k(xp, v, axis, False))

    def nn_log_softmax(self, x: Any, axis: int) -> Plan:
        xp = self.xp
        return widened(self, x, softmax_formula, lambda k, v: k(xp, v, axis, True))

    def nn_logsumexp(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Plan:
        xp = self.xp
        return widened(self, x, logsumexp_formula, lambda k, v: k(xp, v, axes, keepdims))

    def nn_layer_norm(self, x: Any, axes: tuple[int, ...], weight: Any, bias: Any, eps: float, out: str) -> Plan:
        # ``out``: the promoted dtype of x, weight and bias.
        xp = self.xp
        compute, result, note = precisions(self, x, out, (x, weight, bias))
        return Plan(layer_norm_formula, lambda k: cast(xp, k(
            xp, cast(xp, x, compute), axes, cast(xp, weight, compute), cast(xp, bias, compute), eps), result), note)

    def nn_rms_norm(self, x: Any, axes: tuple[int, ...], weight: Any, eps: float | None, out: str) -> Plan:
        xp = self.xp
        e = EPS[self.dtype_name(x)] if eps is None else eps
        compute, result, note = precisions(self, x, out, (x, weight))
        return Plan(rms_norm_formula, lambda k: cast(xp, k(xp, cast(xp, x, compute), axes, cast(xp, weight, compute),
                                                            e), result), note)

    def nn_gelu(self, x: Any, approximate: bool) -> Plan:
        xp, erf = self.xp, self.nn_erf()
        return widened(self, x, gelu_formula, lambda k, v: k(xp, v, approximate, erf))

    def nn_silu(self, x: Any) -> Plan:
        xp = self.xp
        return widened(self, x, silu_formula, lambda k, v: k(xp, v))

    def nn_erf(self) -> Callable[[Any], Any]:
        """The error function on this backend's arrays (the array API has none): SciPy's by default."""
        try:
            from scipy.special import erf as scipy_erf
        except ImportError:  # NumPy without SciPy: math.erf per element (exact, slower)
            import numpy as np

            return lambda v: np.vectorize(math.erf, otypes=[v.dtype])(v)
        return lambda v: scipy_erf(v).astype(v.dtype, copy=False)
