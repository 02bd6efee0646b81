"""unarray code under jax.jit, jax.grad and torch.compile(fullgraph=True) gives the eager results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import unarray as ua


def _model(x: Any, w: Any) -> Any:
    """Library code written once against unarray: every hot op, plus element-wise ops."""
    h = ua.matmul(x, w)
    h = ua.permute_dims(ua.matrix_transpose(h), (1, 0))
    centred = h - ua.mean(h, axis=-1, keepdims=True)
    scaled = centred / (ua.std(h, axis=(-1,), keepdims=True, correction=1) + 1.0)
    total = ua.sum(scaled * scaled, axis=0) + ua.var(h, axis=0)
    peak = ua.max(h, axis=-1) - ua.min(h, axis=-1)
    return ua.sum(total) + ua.sum(peak) + ua.prod(ua.tanh(h[0]), axis=None) + ua.sum(
        ua.cumulative_sum(h, axis=1)) * 1e-3


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.uniform(-1, 1, (4, 5)).astype(np.float32), rng.uniform(-1, 1, (5, 3)).astype(np.float32)


def test_jax_jit_equals_eager() -> None:
    jax = pytest.importorskip("jax")
    x, w = (jax.numpy.asarray(a) for a in _data())
    eager = _model(x, w)
    jitted = jax.jit(_model)(x, w)
    assert isinstance(jitted, jax.Array)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-5, atol=1e-5)


def test_jax_jit_integer_and_arg_ops() -> None:
    jax = pytest.importorskip("jax")

    def f(x: Any) -> Any:
        return (ua.argmax(x, axis=1), ua.argmin(x), ua.any(x > 3, axis=0), ua.all(x > 0),
                ua.cumulative_prod(x, axis=0, include_initial=True), ua.sum(x, axis=()))

    x = jax.numpy.asarray(np.array([[1, 5, 5], [4, 2, 6]], dtype=np.int32))
    for e, j in zip(f(x), jax.jit(f)(x), strict=True):
        np.testing.assert_array_equal(np.asarray(j), np.asarray(e))
        assert j.dtype == e.dtype


def test_jax_grad_equals_numeric() -> None:
    jax = pytest.importorskip("jax")
    x, w = (jax.numpy.asarray(a) for a in _data())
    g = jax.grad(_model, argnums=1)(x, w)
    g_jit = jax.jit(jax.grad(_model, argnums=1))(x, w)
    np.testing.assert_allclose(np.asarray(g_jit), np.asarray(g), rtol=1e-4, atol=1e-5)
    # Central differences on one entry: the gradient is the real one.
    eps = 1e-2
    wp = w.at[1, 2].add(eps)
    wm = w.at[1, 2].add(-eps)
    model = jax.jit(_model)
    numeric = (float(model(x, wp)) - float(model(x, wm))) / (2 * eps)
    assert abs(float(g[1, 2]) - numeric) < 2e-2 * max(1.0, abs(numeric))


def test_jax_jit_precision_policy() -> None:
    jax = pytest.importorskip("jax")
    x, w = (jax.numpy.asarray(a) for a in _data())

    @jax.jit
    def f(x: Any, w: Any) -> Any:
        return ua.matmul(x, w, precision="tf32")

    np.testing.assert_allclose(np.asarray(f(x, w)), np.asarray(ua.matmul(x, w)), rtol=1e-2, atol=1e-2)


def test_jax_tracer_handoff_is_refused() -> None:
    jax = pytest.importorskip("jax")

    @jax.jit
    def f(x: Any) -> Any:
        return ua.to(x, "numpy")

    with pytest.raises(ua.TracerHandoffError) as info:
        f(jax.numpy.ones(2))
    assert isinstance(info.value, TypeError)


def test_torch_compile_fullgraph_equals_eager() -> None:
    torch = pytest.importorskip("torch")
    x, w = (torch.from_numpy(a) for a in _data())
    eager = _model(x, w)
    compiled = torch.compile(_model, fullgraph=True, backend="eager")(x, w)
    assert isinstance(compiled, torch.Tensor)
    torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-5)


def test_torch_compile_fullgraph_reductions() -> None:
    torch = pytest.importorskip("torch")

    def f(x: Any) -> Any:
        return (ua.argmax(x, axis=1), ua.any(x > 3, axis=0), ua.sum(x, axis=(), dtype=ua.int32),
                ua.prod(x, axis=(0, 1)), ua.cumulative_sum(x, axis=-1, include_initial=True),
                ua.min(x, axis=()), ua.all(x > 0, keepdims=True))

    x = torch.tensor([[1, 5, 5], [4, 2, 6]], dtype=torch.int32)
    for e, c in zip(f(x), torch.compile(f, fullgraph=True, backend="eager")(x), strict=True):
        torch.testing.assert_close(c, e)


def test_torch_compile_grad() -> None:
    torch = pytest.importorskip("torch")
    xn, wn = _data()
    x = torch.from_numpy(xn)
    w1 = torch.from_numpy(wn).requires_grad_()
    w2 = torch.from_numpy(wn.copy()).requires_grad_()
    _model(x, w1).backward()
    torch.compile(_model, fullgraph=True, backend="eager")(x, w2).backward()
    torch.testing.assert_close(w2.grad, w1.grad, rtol=1e-4, atol=1e-5)


def test_torch_compile_precision_leaves_global_state() -> None:
    torch = pytest.importorskip("torch")
    torch.set_float32_matmul_precision("highest")
    x, w = (torch.from_numpy(a) for a in _data())
    out = torch.compile(lambda a, b: ua.matmul(a, b), fullgraph=True, backend="eager")(x, w)
    torch.testing.assert_close(out, x @ w)
    assert torch.get_float32_matmul_precision() == "highest"


@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_torch_compile_handoff_runs_eagerly(target: str) -> None:
    # A handoff met in a torch.compile trace runs on the real tensor (a graph break): the same
    # result as eager, for an uncached (numpy) and a cached (jax) route.
    torch = pytest.importorskip("torch")
    pytest.importorskip(target)
    torch._dynamo.reset()  # dynamo caches compiled code per code object: this test's f is traced anew
    t = torch.from_numpy(_data()[0])
    ua.to(t, target)  # the torch backend is loaded outside the trace

    def f(t: Any) -> Any:
        return ua.to(t * 2.0, target)

    out = torch.compile(f, backend="eager")(t)
    assert type(out).__module__.split(".")[0] == ("numpy" if target == "numpy" else "jaxlib")
    np.testing.assert_array_equal(np.asarray(out), t.numpy() * 2.0)


def test_torch_compile_fullgraph_names_the_handoff_break() -> None:
    # fullgraph=True forbids graph breaks, and a handoff to another library is one: torch raises,
    # and its message carries unarray's reason and fix.
    torch = pytest.importorskip("torch")
    torch._dynamo.reset()
    t = torch.from_numpy(_data()[0])
    ua.to(t, "numpy")

    def f(t: Any) -> Any:
        return ua.to(t * 2.0, "numpy")

    with pytest.raises(torch._dynamo.exc.Unsupported, match="do the handoff outside the compiled function"):
        torch.compile(f, fullgraph=True, backend="eager")(t)
