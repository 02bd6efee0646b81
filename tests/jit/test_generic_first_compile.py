"""Generic code (``xp = ua.array_namespace(x)``) compiles on the first compile of a fresh process.

As a library's user meets it: one fresh process per compiler (torch.compile with ``fullgraph=True``, ``jax.jit``,
``tf.function``, ``ua.jit``), whose first compile is the first use of the namespace, running the same functions:
the docs' softmax and k-means step, the bound creation functions, ``result_type``, ``finfo``, ``fft``,
``linalg`` and ``nn``, the element-wise functions and reductions by name, and the manipulation functions. Each
must trace whole (no graph break), warn nothing and agree with the eager call. Under ``fullgraph=True`` a handoff
to another library (``ua.to``) is refused with unarray's reason, cold (the target library not yet loaded) or warm.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests._support import child_pythonpath

ROOT = Path(__file__).resolve().parents[2]

# The functions every compiler runs, written only against xp.
_FUNCTIONS = textwrap.dedent(
    """
    import json, sys, warnings
    import numpy as np
    import unarray as ua

    def softmax(x):
        xp = ua.array_namespace(x)
        y = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        return y / xp.sum(y, axis=-1, keepdims=True)

    def kmeans_step(x, centers):
        xp = ua.array_namespace(x, centers)
        d2 = xp.sum((x[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
        labels = xp.argmin(d2, axis=1)
        k = centers.shape[0]
        onehot = xp.astype(labels[:, None] == xp.arange(k, device=xp.device)[None, :], x.dtype)
        counts = xp.sum(onehot, axis=0)
        sums = xp.matmul(xp.matrix_transpose(onehot), x)
        return xp.where(counts[:, None] > 0, sums / xp.maximum(counts, 1.0)[:, None], centers)

    def creation(x):
        xp = ua.array_namespace(x)
        dt = xp.result_type(x.dtype, xp.float32)
        z = xp.zeros(x.shape, dtype=dt) + xp.ones_like(x) + xp.full(x.shape, 2.0, dtype=dt)
        a = xp.asarray(1.5, dtype=dt) * xp.finfo(dt).eps
        f = xp.fft.fftfreq(x.shape[-1], dtype=dt) + xp.linspace(0.0, 1.0, x.shape[-1], dtype=dt)
        return xp.matmul(z, xp.eye(x.shape[-1], dtype=dt)) * a + f

    def extras(x):
        xp = ua.array_namespace(x)
        h = xp.nn.layer_norm(x, axis=-1) + xp.nn.gelu(x)
        g = xp.linalg.vector_norm(h, axis=-1, keepdims=True) + xp.linalg.matrix_norm(h[None, :, :])
        r = xp.real(xp.fft.ifft(xp.fft.fft(h, axis=-1), axis=-1))
        return xp.concat([g * r, xp.sort(h, axis=-1)], axis=0) + xp.mean(h) + xp.std(h, correction=1)

    UNARY = ["abs", "acos", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "exp", "expm1", "floor", "log",
             "log1p", "log2", "log10", "negative", "positive", "reciprocal", "round", "sign", "sin", "sinh", "sqrt",
             "square", "tan", "tanh", "trunc", "conj", "real"]
    BINARY = ["add", "atan2", "copysign", "divide", "floor_divide", "hypot", "logaddexp", "maximum", "minimum",
              "multiply", "nextafter", "pow", "remainder", "subtract"]
    PREDICATES = ["isfinite", "isinf", "isnan", "signbit"]
    COMPARISONS = ["equal", "greater", "greater_equal", "less", "less_equal", "not_equal"]
    REDUCTIONS = ["sum", "prod", "min", "max", "mean", "var", "std", "cumulative_sum", "cumulative_prod"]

    def elementwise(x):
        # The element-wise functions and reductions by name, on values inside every function's domain.
        xp = ua.array_namespace(x)
        u = xp.clip(xp.abs(x), 0.1, 0.9)
        out = xp.acosh(1.0 + u)
        for name in UNARY:
            out = out + getattr(xp, name)(u)
        for name in BINARY:
            out = out + getattr(xp, name)(u, 1.0 - u)
        for name in PREDICATES:
            out = out + xp.astype(getattr(xp, name)(u), u.dtype)
        for name in COMPARISONS:
            out = out + xp.astype(getattr(xp, name)(u, 0.5), u.dtype)
        for name in REDUCTIONS:
            r = getattr(xp, name)(u, axis=-1)
            out = out + (r if name.startswith("cumulative") else r[..., None])
        return out

    def shapes(x):
        xp = ua.array_namespace(x)
        y = xp.reshape(xp.permute_dims(xp.stack([x, xp.flip(x, axis=0)]), (1, 0, 2)), (x.shape[0], -1))
        y = xp.squeeze(xp.expand_dims(xp.roll(y, 1, axis=-1), axis=0), axis=0)
        z = xp.take(x, xp.argsort(x[0]), axis=1) + xp.tril(x[:, :6]) @ xp.triu(x[:6, :])
        z = xp.where(z > 0, z, xp.zeros_like(z)) + xp.full_like(z, 0.5) + xp.broadcast_to(x[:1], x.shape)
        return xp.concat([y[:, : x.shape[1]], z, xp.tile(x[:1], (2, 1)), xp.repeat(x[:1], 2, axis=0)], axis=0)

    FUNCTIONS = [("softmax", softmax, 1), ("kmeans_step", kmeans_step, 2), ("creation", creation, 1),
                 ("extras", extras, 1), ("elementwise", elementwise, 1), ("shapes", shapes, 1)]
    A = np.random.default_rng(0).normal(size=(6, 8)).astype(np.float32) + 0.25

    def args(x, n):
        return (x,) if n == 1 else (x, x[:3])

    def unarrays(caught):
        # The warnings unarray raised (a compiler's own deprecations are the compiler's business).
        return [f"{m.category.__name__}: {m.message}" for m in caught
                if m.category.__module__.startswith("unarray") or "unarray" in str(m.message)]

    def agree(out, ref):
        return type(out) is type(ref) and bool(np.allclose(np.asarray(out), np.asarray(ref), rtol=1e-4, atol=1e-5))
    """
)

_TORCH = _FUNCTIONS + textwrap.dedent(
    """
    import torch
    import torch._dynamo as dyn

    def to_jax(x):
        return ua.to(x * 2, "jax")  # jax not loaded: the first lookup of the target would import it

    def to_numpy(x):
        xp = ua.array_namespace(x)
        return xp.to(x + 1, "numpy")

    def to_numpy_warm(x):
        return ua.to(x - 1, "numpy")

    def refusal(f, x):
        try:
            torch.compile(f, fullgraph=True, backend="eager")(x)
        except Exception as e:  # noqa: BLE001 - the refusal is what is checked
            return str(e)
        return "compiled"

    x = torch.from_numpy(A)
    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, f, n in FUNCTIONS:
            # Inductor for the docs' functions (what a user gets), graph capture alone for the others.
            kw = {} if name in ("softmax", "kmeans_step") else {"backend": "eager"}
            c = torch.compile(f, fullgraph=True, **kw)
            got = c(*args(x, n))
            graphs = dyn.utils.counters["stats"]["unique_graphs"]
            ua.array_namespace(np.ones(2)), ua.array_namespace(torch.ones(2, dtype=torch.float64))
            again = c(*args(x, n))  # the namespaces made eagerly since do not recompile it
            out[name] = {"agree": agree(got, f(*args(x, n))) and agree(again, got),
                         "recompiled": dyn.utils.counters["stats"]["unique_graphs"] != graphs}
        out["jax loaded"] = "jax" in sys.modules
        out["cold to jax"] = refusal(to_jax, x)
        out["cold to numpy"] = refusal(to_numpy, x)
        ua.to(x, "numpy"), ua.to(x, "jax")
        out["warm to numpy"] = refusal(to_numpy_warm, x)
    out["graph breaks"] = sum(dyn.utils.counters["graph_break"].values())
    out["warnings"] = unarrays(caught)
    print(json.dumps(out))
    """
)

_OTHER = _FUNCTIONS + textwrap.dedent(
    """
    which = sys.argv[1]
    if which == "jax.jit":
        import jax
        x, compile_ = jax.numpy.asarray(A), jax.jit
    elif which == "tf.function":
        import tensorflow as tf
        x, compile_ = tf.constant(A), tf.function
    else:
        import torch
        x, compile_ = torch.from_numpy(A), ua.jit
    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, f, n in FUNCTIONS:
            out[name] = {"agree": agree(compile_(f)(*args(x, n)), f(*args(x, n)))}
    out["warnings"] = unarrays(caught)
    print(json.dumps(out))
    """
)

_NAMES = ["softmax", "kmeans_step", "creation", "extras", "elementwise", "shapes"]


def _run(script: str, *argv: str) -> dict[str, Any]:
    import os

    env = {**os.environ, "PYTHONPATH": child_pythonpath(ROOT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    # A fresh process; generous time: it compiles several functions on a possibly loaded machine.
    proc = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


_REASON = "unarray: ua.to hands the tensor to another library"


def test_torch_compile_fullgraph_traces_generic_code_on_the_first_compile() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    out = _run(_TORCH)
    for name in _NAMES:
        assert out[name] == {"agree": True, "recompiled": False}, (name, out)
    assert out["graph breaks"] == 0 and out["warnings"] == [], out
    # ua.to under fullgraph: refused with unarray's reason, whether the target library was loaded or not.
    assert out["jax loaded"] is False, out
    for case in ("cold to jax", "cold to numpy", "warm to numpy"):
        assert _REASON in out[case], (case, out[case][:2000])


@pytest.mark.parametrize("compiler", ["jax.jit", "tf.function", "ua.jit"])
def test_a_compiler_traces_generic_code_on_the_first_compile(compiler: str) -> None:
    pytest.importorskip({"jax.jit": "jax", "tf.function": "tensorflow", "ua.jit": "torch"}[compiler])
    out = _run(_OTHER, compiler)
    for name in _NAMES:
        assert out[name] == {"agree": True}, (compiler, name, out)
    # ua.jit warns at a graph break (JitGraphBreakWarning) or a fallback to eager: none.
    assert out["warnings"] == [], (compiler, out)
