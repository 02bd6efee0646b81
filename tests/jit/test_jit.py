"""``ua.jit`` on every CPU backend: compiled == eager == a float64 NumPy reference for functions built from
ua ops and ``ua.nn``; static arguments and the cache (counted by a side effect in the traced Python); the
precision policy inside compiled code; fallback to eager with a warning, or ``CompileError`` under
``fullgraph=True``; compiler options passed through; inputs never mutated (issue 19 point 3).

torch.compile here runs dynamo with ``backend="eager"`` (what is tested is ua.jit's choice, key and
fallback, not inductor's code generation); one test compiles with inductor for real.
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close
from unarray import _precision
from unarray._backends import LIBRARIES

if importlib.util.find_spec("torch") is not None:
    # Note: torch.compile imports triton where it is installed; loading triton's LLVM after TensorFlow's
    # aborts the process (both register the same LLVM options), so dynamo is loaded before any test
    # here brings TensorFlow in.
    import torch._dynamo  # noqa: F401

EAGER_TORCH = {"torch": {"backend": "eager"}}  # torch.compile's options only: dynamo without inductor
_SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _np(backend: TestBackend, x: Any) -> np.ndarray:
    return backend.to_numpy(x).astype(np.float64)


# Backends ua.jit runs eagerly unless the caller names a compiler: those whose library declares no compiler.
EAGER = tuple(name for name, lib in LIBRARIES.items() if not lib.compiles)


def _compiler_of(backend: TestBackend) -> str:
    return "eager" if backend.name in EAGER else backend.name


# -- the block, in ua and in float64 NumPy ------------------------------------------------------------------------

def block(x: Any, w: Any, wo: Any) -> Any:
    # layer norm, a projection, single-head attention, softmax-weighted output and a gelu MLP step
    h = ua.nn.layer_norm(x)
    q = ua.matmul(h, w)
    a = ua.nn.scaled_dot_product_attention(q[:, None], q[:, None], q[:, None], is_causal=True)[:, 0]
    s = ua.nn.softmax(ua.matmul(a, wo), axis=-1)
    return ua.add(ua.nn.gelu(s), ua.sum(x, axis=-1, keepdims=True))


def _ref_softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _ref_block(x: np.ndarray, w: np.ndarray, wo: np.ndarray) -> np.ndarray:
    h = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    q = h @ w
    s = q @ np.swapaxes(q, -1, -2) / math.sqrt(q.shape[-1])
    s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    a = _ref_softmax(s) @ q
    p = _ref_softmax(a @ wo)
    erf = np.vectorize(math.erf)
    return p * (1 + erf(p / math.sqrt(2))) / 2 + x.sum(-1, keepdims=True)


def _inputs(backend: TestBackend, seed: int, b: int, s: int, d: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2.0, (b, s, d)) * rng.choice([-1.0, 1.0], (b, s, d))  # never zero
    w = rng.standard_normal((d, d)) / math.sqrt(d)
    wo = rng.standard_normal((d, d)) / math.sqrt(d)
    return tuple(a.astype(np.float32) for a in (x, w, wo))


JITTED_BLOCK = ua.jit(block, **EAGER_TORCH)


@_SETTINGS
@given(seed=st.integers(0, 2**31 - 1), shape=st.sampled_from([(1, 3, 8), (2, 8, 8)]))
def test_jitted_block_equals_eager_and_the_float64_reference(backend: TestBackend, seed: int,
                                                             shape: tuple[int, int, int]) -> None:
    # Two shapes only: eager JAX compiles every op per new shape (seconds each), and the data vary anyway.
    f = JITTED_BLOCK  # one for the whole run: later examples hit the cache (jax and torch retrace per shape)
    host = _inputs(backend, seed, *shape)
    d = shape[-1]
    args = [backend.asarray(a) for a in host]
    got, eager = f(*args), block(*args)
    assert backend.is_native(got)
    ref = _ref_block(*(a.astype(np.float64) for a in host))
    assert_close(_np(backend, got), ref, "float32", n_terms=4 * d, scale=float(np.abs(ref).max()))
    np.testing.assert_allclose(_np(backend, got), _np(backend, eager), rtol=1e-5, atol=1e-5)
    assert ua.explain(f, *args).compiler == _compiler_of(backend)


# -- static arguments and the cache --------------------------------------------------------------------------------

def test_static_arguments_key_the_cache_and_a_hit_does_not_trace(backend: TestBackend) -> None:
    traces: list[int] = []

    def counting(gm: Any, example_inputs: Any) -> Any:
        traces.append(-1)  # torch: one per graph dynamo compiles (it replays a traced list.append per call)
        return gm.forward

    @ua.jit(static_argnames="axis", torch={"backend": counting})
    def norm(x: Any, axis: int) -> Any:
        if backend.name != "torch":
            traces.append(axis)  # runs while the compiler traces (and on every eager call)
        return ua.nn.softmax(ua.multiply(x, 2.0), axis=axis)

    host = _inputs(backend, 3, 2, 5, 4)[0][0]
    x = backend.asarray(host)
    for axis in (0, 0, 1, 0, 1):
        np.testing.assert_allclose(_np(backend, norm(x, axis=axis)), _ref_softmax(2.0 * host.astype(np.float64),
                                                                                  axis), rtol=1e-5, atol=1e-6)
    info = norm.cache_info()
    assert (info["misses"], info["hits"], info["entries"]) == (2, 3, 2)
    if backend.name in EAGER:
        assert traces == [0, 0, 1, 0, 1]  # eager: the Python runs on every call
    elif backend.name == "torch":
        assert traces == [-1, -1]  # one graph per static value
    else:
        assert set(traces) == {0, 1} and len(traces) <= 4, traces  # traced once per static value, hits run none
    assert ua.explain(norm, x, axis=1).cache == "hit" and ua.explain(norm, x, axis=2).cache == "miss"


def test_static_argnums_are_read_positionally_and_by_name(backend: TestBackend) -> None:
    f = ua.jit(lambda x, n: ua.sum(ua.pow(x, n)), static_argnums=1, **EAGER_TORCH)
    host = _inputs(backend, 4, 1, 2, 3)[0][0]
    x = backend.asarray(host)
    assert math.isclose(float(_np(backend, f(x, 3))), float((host.astype(np.float64) ** 3).sum()), rel_tol=1e-5)
    assert ua.explain(f, x, 3).static == (("n", 3),)
    assert ua.explain(f, x, 3).cache == "hit" and ua.explain(f, x, 2).cache == "miss"


def test_the_policy_is_part_of_the_key(backend: TestBackend) -> None:
    seen: list[str] = []

    @ua.jit(compiler="jax" if backend.name in EAGER else None, **EAGER_TORCH)
    def f(x: Any) -> Any:
        seen.append(ua.get_precision())  # the policy in force while tracing (what JAX and TF bake in)
        # (torch reads it again when the graph runs: test_the_policy_holds_inside_compiled_torch_code)
        return ua.matmul(x, x)

    host = _inputs(backend, 5, 1, 4, 4)[0][0]
    x = backend.asarray(host)
    f(x)
    with ua.precision("bf16"):
        low = f(x)
        f(x)
    f(x)
    info = f.cache_info()
    assert (info["misses"], info["hits"]) == (2, 2)
    assert seen[0] == "highest" and seen[-1] in ("bf16", "highest") and "bf16" in seen
    h = host.astype(np.float64)
    assert_close(_np(backend, low), h @ h, "float32", n_terms=4, precision="bf16", scale=float(np.abs(h).max()) ** 2)


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> Any:
    # Arbitrate even on a CPU whose matmul has no reduced-precision path, so the swap runs here.
    monkeypatch.setattr(_precision, "FORCE_ARBITRATION", True)
    from unarray._backends.torch import precision as tp

    return tp


def test_the_policy_holds_inside_compiled_torch_code(forced: Any) -> None:
    torch = pytest.importorskip("torch")
    from tests._torch_state import _read

    rng = np.random.default_rng(11)
    h = rng.standard_normal((16, 16))
    x = torch.from_numpy(h.astype(np.float32))
    f = ua.jit(lambda a: ua.matmul(a, a), **EAGER_TORCH)
    before, saved = _read(torch), forced.snapshot()
    torch.set_float32_matmul_precision("medium")  # the user's own setting: bf16 passes
    try:
        n0 = forced.SWITCH.swaps
        assert_close(f(x).numpy(), h @ h, "float32", n_terms=16, scale=16.0)  # "highest" inside the graph
        assert forced.SWITCH.swaps == n0 + 1
        with ua.precision("bf16"):  # the user's setting already gives bf16: no swap
            f(x)
        assert forced.SWITCH.swaps == n0 + 1
        with ua.precision("tf32"):
            f(x)
        assert forced.SWITCH.swaps == n0 + 2
        assert f.cache_info()["misses"] == 3
        assert torch.get_float32_matmul_precision() == "medium"  # left as the user set it
    finally:
        forced.restore(saved)
    assert _read(torch) == before


# -- ua.jit holds the policy around the compiled torch call (plain ops inside) -----------------------------------

class _Graphs:
    """A torch.compile backend that keeps the targets of every FX graph it is given."""

    def __init__(self) -> None:
        self.targets: list[list[Any]] = []

    def __call__(self, gm: Any, example_inputs: Any) -> Any:
        self.targets.append([n.target for n in gm.graph.nodes if n.op == "call_function"])
        return gm.forward

    def custom_ops(self) -> int:
        import torch

        op = torch.ops.unarray.matmul.default
        return sum(t in (op, torch.ops.unarray.matmul) for g in self.targets for t in g)


def _mm_attn(a: Any, q: Any) -> Any:
    return ua.matmul(a, a) + ua.nn.scaled_dot_product_attention(q, q, q, is_causal=True)[0, 0].sum()


def test_under_ua_jit_the_graph_holds_plain_ops_and_a_users_compile_keeps_the_custom_op(forced: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(21)
    a = torch.from_numpy(rng.standard_normal((16, 16), dtype=np.float32))
    q = torch.from_numpy(rng.standard_normal((1, 2, 8, 4), dtype=np.float32))
    mine, users = _Graphs(), _Graphs()
    got = ua.jit(_mm_attn, torch={"backend": mine})(a, q)
    theirs = torch.compile(_mm_attn, backend=users)(a, q)  # the same function: dynamo's cache is per code object
    again = ua.jit(_mm_attn, torch={"backend": mine})(a, q)
    assert mine.targets and mine.custom_ops() == 0
    assert users.custom_ops() == 3  # matmul, and attention's two products
    sdpa = torch.nn.functional.scaled_dot_product_attention
    assert all(sdpa in g for g in mine.targets)
    for out in (theirs, again):
        torch.testing.assert_close(got, out, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got, _mm_attn(a, q), rtol=1e-5, atol=1e-5)


def test_ops_that_record_a_gradient_keep_the_custom_op_under_ua_jit(forced: Any) -> None:
    # Their backward runs at .backward(), after the call has let the switch go: the custom op's backward
    # carries the policy there. Inference (no_grad) gets the plain ops.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(26)
    a = torch.from_numpy(rng.standard_normal((16, 16), dtype=np.float32)).requires_grad_()
    q = torch.from_numpy(rng.standard_normal((1, 2, 8, 4), dtype=np.float32)).requires_grad_()
    graphs = _Graphs()
    f = ua.jit(_mm_attn, torch={"backend": graphs})
    f(a, q).sum().backward()
    assert graphs.custom_ops() == 3
    got = [t.grad.clone() for t in (a, q)]
    for t in (a, q):
        t.grad = None
    _mm_attn(a, q).sum().backward()
    for g, t in zip(got, (a, q), strict=True):
        torch.testing.assert_close(g, t.grad, rtol=1e-4, atol=1e-5)
    graphs.targets.clear()
    with torch.no_grad():
        f(a, q)
    assert graphs.targets and graphs.custom_ops() == 0


def test_a_nested_policy_keeps_its_custom_op_and_runs_under_its_own_setting(forced: Any,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    from tests._torch_state import _read

    seen: list[tuple[str, str]] = []
    real = forced.arbitrate

    def recording(x: Any, policy: str, fn: Any, *args: Any) -> Any:
        return real(x, policy, lambda *a: (seen.append((policy, torch.get_float32_matmul_precision())), fn(*a))[1],
                    *args)

    monkeypatch.setattr(forced, "arbitrate", recording)  # what unarray::matmul runs when the graph runs
    graphs = _Graphs()

    @ua.jit(torch={"backend": graphs})
    def f(a: Any) -> Any:
        b = ua.matmul(a, a)
        with ua.precision("tf32"):
            c = ua.matmul(b, a)
        return ua.matmul(c, a, precision="bf16") + b

    a = torch.from_numpy(np.random.default_rng(22).standard_normal((16, 16), dtype=np.float32))
    before, n0 = _read(torch), forced.SWITCH.swaps
    out = f(a)
    assert graphs.custom_ops() == 2  # the tf32 and bf16 products; the "highest" one is plain
    assert seen == [("tf32", "high"), ("bf16", "medium")]  # each under its own setting, inside the held call
    assert forced.SWITCH.swaps == n0 + 2 and _read(torch) == before  # the user's setting is back
    b = a @ a
    torch.testing.assert_close(out, (b @ a) @ a + b, rtol=1e-4, atol=1e-4)


def test_a_thread_needing_another_setting_waits_for_the_whole_jitted_call(forced: Any) -> None:
    torch = pytest.importorskip("torch")
    import threading

    from tests._torch_state import _read

    inside, done = threading.Event(), threading.Event()
    log: list[tuple[str, str]] = []

    @torch.compiler.disable
    def probe(tag: str) -> None:
        log.append((tag, torch.get_float32_matmul_precision()))

    @ua.jit(torch={"backend": "eager"})
    def f(a: Any) -> Any:
        b = ua.matmul(a, a)
        probe("jit, before")
        inside.set()
        done.wait(0.5)  # the other thread gets its chance to run here (it must not)
        probe("jit, after")
        return ua.matmul(b, a)

    def other() -> None:
        inside.wait(10)
        forced.arbitrate(a, "bf16", lambda: log.append(("other", torch.get_float32_matmul_precision())))
        done.set()

    a = torch.from_numpy(np.random.default_rng(23).standard_normal((16, 16), dtype=np.float32))
    before, saved = _read(torch), forced.snapshot()
    torch.set_float32_matmul_precision("medium")  # the user's: what the other thread's bf16 needs
    try:
        t = threading.Thread(target=other)
        t.start()
        f(a)
        t.join(10)
        assert log == [("jit, before", "highest"), ("jit, after", "highest"), ("other", "medium")]
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        forced.restore(saved)
    assert _read(torch) == before


def test_a_graph_break_never_publishes_the_marker(forced: Any) -> None:
    torch = pytest.importorskip("torch")
    marks: list[list[Any]] = []

    @torch.compiler.disable
    def peek() -> None:
        marks.append(list(forced.HELD))  # what another thread's trace would read now

    graphs = _Graphs()

    @ua.jit(torch={"backend": graphs})
    def f(a: Any) -> Any:
        b = ua.matmul(a, a)
        peek()
        torch._dynamo.graph_break()
        return ua.matmul(b, a)

    a = torch.from_numpy(np.random.default_rng(24).standard_normal((16, 16), dtype=np.float32))
    torch.testing.assert_close(f(a), a @ a @ a, rtol=1e-4, atol=1e-4)
    assert marks == [[]] and forced.HELD == [] and forced._HOLDS == {}
    assert graphs.custom_ops() == 2  # compiled without the marker: correct, with the custom ops


@pytest.mark.gpu
def test_the_jitted_call_holds_its_policy_on_cuda_whatever_the_user_set() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from tests._torch_state import _read
    from unarray._backends.torch import precision as tp

    rng = np.random.default_rng(25)
    a, b = (torch.from_numpy(rng.standard_normal(s, dtype=np.float32)).cuda() for s in ((256, 1024), (1024, 256)))
    q = torch.from_numpy(rng.standard_normal((2, 4, 256, 64), dtype=np.float32)).cuda()
    ref = a.double() @ b.double()
    att = torch.nn.functional.scaled_dot_product_attention(q.double(), q.double(), q.double(), is_causal=True)
    err = lambda x, r: float(((x.double() - r).abs().max() / r.abs().max()).cpu())  # noqa: E731

    def f(a: Any, b: Any, q: Any) -> Any:
        return ua.matmul(a, b), ua.nn.scaled_dot_product_attention(q, q, q, is_causal=True)

    graphs = _Graphs()
    jitted, seen = ua.jit(f), ua.jit(f, torch={"backend": graphs})
    before, saved = _read(torch), tp.snapshot()
    torch.set_float32_matmul_precision("medium")  # the user's own: TF32 passes
    try:
        seen(a, b, q)
        high = jitted(a, b, q)
        with ua.precision("tf32"):
            low = jitted(a, b, q)
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        tp.restore(saved)
    assert _read(torch) == before
    assert graphs.custom_ops() == 0
    assert err(high[0], ref) < 1e-5 and err(high[1], att) < 1e-5  # float32 accuracy under the user's TF32
    if torch.cuda.get_device_capability()[0] >= 8:
        assert err(low[0], ref) > 1e-5  # TF32 passes where the policy asks for them


# -- failures -----------------------------------------------------------------------------------------------------

def _failing_backend(gm: Any, example_inputs: Any) -> Any:
    raise RuntimeError("this backend cannot compile anything")


def _untraceable(backend: TestBackend) -> tuple[Any, dict[str, Any]]:
    # A function the leading backend's compiler cannot build, with the options that make it so.
    def concrete(x: Any) -> Any:
        # Note: a NumPy copy, since AutoGraph would turn float(tensor) > 0 into a tf.cond.
        return ua.multiply(x, 2.0) if float(backend.to_numpy(ua.sum(x))) > 0 else ua.multiply(x, -2.0)

    if backend.name == "torch":  # dynamo breaks the graph at float(); a backend that raises fails for real
        return concrete, {"torch": {"backend": _failing_backend}}
    if backend.name in EAGER:
        return concrete, {"compiler": "jax"}
    return concrete, {}


def test_a_compile_failure_falls_back_to_eager_with_a_warning(backend: TestBackend) -> None:
    if backend.name in EAGER:
        pytest.importorskip("jax")
    fn, opts = _untraceable(backend)
    f = ua.jit(fn, **opts)
    host = _inputs(backend, 6, 1, 3, 4)[0][0]
    x = backend.asarray(host)
    with pytest.warns(ua.JitFallbackWarning, match=r"could not compile .*fullgraph=True"):
        got = f(x)
    want = 2.0 * host if host.sum() > 0 else -2.0 * host
    np.testing.assert_allclose(_np(backend, got), want, rtol=1e-6)
    assert backend.is_native(got)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fallback is remembered: no second warning, no second try
        np.testing.assert_allclose(_np(backend, f(x)), want, rtol=1e-6)
    e = ua.explain(f, x)
    assert len(e.fallbacks) == 1 and "failed" in e.fallbacks[0]
    assert f.cache_info()["fallbacks"] == 1


def test_fullgraph_raises_a_typed_error_wrapping_the_cause(backend: TestBackend) -> None:
    if backend.name in EAGER:
        pytest.importorskip("jax")
    fn, opts = _untraceable(backend)
    f = ua.jit(fn, fullgraph=True, **opts)
    x = backend.asarray(_inputs(backend, 7, 1, 3, 4)[0][0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ua.JitFallbackWarning)
        with pytest.raises(ua.CompileError, match=r"ua\.jit \[\w+\]: .* could not compile") as info:
            f(x)
    assert isinstance(info.value, RuntimeError) and info.value.__cause__ is not None
    assert info.value.backend == backend.name


def test_fullgraph_refuses_a_torch_graph_break() -> None:
    torch = pytest.importorskip("torch")
    def broken(x: Any) -> Any:
        y = ua.multiply(x, ua.sum(x))
        torch._dynamo.graph_break()
        return ua.add(y, 1.0)

    f = ua.jit(broken, fullgraph=True, **EAGER_TORCH)
    with pytest.raises(ua.CompileError, match=r"ua\.jit \[torch\]: torch\.compile\(fullgraph=True"):
        f(torch.ones(3))
    g = ua.jit(broken, **EAGER_TORCH)  # without fullgraph: two graphs, no fallback, the break reported once
    with warnings.catch_warnings():
        warnings.simplefilter("error", ua.JitFallbackWarning)
        with pytest.warns(ua.JitGraphBreakWarning, match=r"split .*broken at a graph break \(.*graph_break"):
            assert torch.equal(g(torch.ones(3)), torch.full((3,), 4.0))
        warnings.simplefilter("error", ua.JitGraphBreakWarning)
        assert torch.equal(g(torch.ones(3)), torch.full((3,), 4.0))


def test_the_functions_own_errors_stay_typed(backend: TestBackend) -> None:
    f = ua.jit(lambda a, b: ua.matmul(a, b), **EAGER_TORCH)
    a = backend.asarray(np.ones((2, 3), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ua.JitFallbackWarning)
        with pytest.raises(ua.ShapeError):
            f(a, a)


# -- options, inputs, explain, arguments -----------------------------------------------------------------------

def test_torch_compile_options_reach_torch_compile() -> None:
    torch = pytest.importorskip("torch")
    graphs: list[Any] = []

    def recording(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    f = ua.jit(lambda x: ua.nn.gelu(ua.matmul(x, x)), backend=recording)
    x = torch.from_numpy(np.random.default_rng(8).standard_normal((4, 4)).astype(np.float32))
    torch.testing.assert_close(f(x), torch.nn.functional.gelu(x @ x))
    assert len(graphs) == 1
    assert ua.explain(f, x).kernel == "torch.compile(fullgraph=False, backend=recording)".replace(
        "recording", repr(recording))
    g = ua.jit(lambda x: ua.exp(x), torch={"backend": "eager", "mode": None})
    assert ua.explain(g, x).kernel == "torch.compile(fullgraph=False, backend='eager', mode=None)"


def test_options_the_compiler_refuses_are_a_typed_error(backend: TestBackend) -> None:
    compiler = "jax" if backend.name in EAGER else None
    if compiler is not None:
        pytest.importorskip("jax")
    f = ua.jit(lambda x: ua.exp(x), compiler=compiler, no_such_option=1)
    refused = r"ua\.jit \[\w+\]: .*refused the option no_such_option=1 .*leave it out"
    with pytest.raises(ua.ArgumentTypeError, match=refused):
        f(backend.asarray(np.ones(2, np.float32)))


def test_inputs_are_not_mutated(backend: TestBackend) -> None:
    host = _inputs(backend, 9, 2, 4, 4)
    args = [backend.asarray(a) for a in host]
    before = [_np(backend, a).copy() for a in args]
    ua.jit(block, **EAGER_TORCH)(*args)
    for b, a in zip(before, args, strict=True):
        np.testing.assert_array_equal(_np(backend, a), b)


def test_a_read_only_numpy_input_through_a_named_compiler() -> None:
    pytest.importorskip("jax")
    host = _inputs(TestBackend("numpy", "numpy", "cpu", np), 10, 1, 4, 4)
    args = [a.copy() for a in host]
    for a in args:
        a.flags.writeable = False
    got = ua.jit(block, compiler="jax")(*args)
    assert type(got) is np.ndarray
    ref = _ref_block(*(a.astype(np.float64) for a in host))
    assert_close(got, ref, "float32", n_terms=16, scale=float(np.abs(ref).max()))
    for a, h in zip(args, host, strict=True):
        np.testing.assert_array_equal(a, h)


def test_pytree_arguments_and_the_leader(backend: TestBackend) -> None:
    f = ua.jit(lambda p, x: {"y": ua.add(ua.matmul(x, p["w"]), p["b"][0])}, **EAGER_TORCH)
    rng = np.random.default_rng(12)
    w, b, x = (rng.uniform(0.5, 1.5, s).astype(np.float32) for s in ((3, 2), (2,), (4, 3)))
    out = f({"w": backend.asarray(w), "b": [backend.asarray(b)]}, backend.asarray(x))
    assert list(out) == ["y"] and backend.is_native(out["y"])
    assert_close(_np(backend, out["y"]), x.astype(np.float64) @ w + b, "float32", n_terms=3, scale=4.0)
    e = ua.explain(f, {"w": backend.asarray(w), "b": [backend.asarray(b)]}, backend.asarray(x))
    assert e.backend == backend.name and backend.name in e.reason


def test_numpy_through_torch_compile_comes_back_as_numpy() -> None:
    pytest.importorskip("torch")
    host = _inputs(TestBackend("numpy", "numpy", "cpu", np), 13, 2, 3, 4)
    f = ua.jit(block, compiler="torch", **EAGER_TORCH)
    got = f(*host)
    assert type(got) is np.ndarray
    ref = _ref_block(*(a.astype(np.float64) for a in host))
    assert_close(got, ref, "float32", n_terms=16, scale=float(np.abs(ref).max()))
    e = ua.explain(f, *host)
    assert e.compiler == "torch" and e.handoffs == ("numpy -> torch for torch.compile(fullgraph=False, "
                                                    "backend='eager'), results back to numpy",)


def test_inside_an_outer_trace_the_function_is_traced_as_written() -> None:
    jax = pytest.importorskip("jax")
    f = ua.jit(lambda x: ua.nn.softmax(x))
    x = jax.numpy.asarray(np.array([0.0, math.log(3.0)], np.float32))
    np.testing.assert_allclose(np.asarray(jax.jit(lambda x: f(x) * 2)(x)), [0.5, 1.5], rtol=1e-6)
    assert f.cache_info()["misses"] == 0  # the outer jax.jit traced it: no compile of its own


def test_no_array_argument_uses_the_default_backend() -> None:
    f = ua.jit(lambda n: ua.sum(ua.arange(n)), static_argnums=0)
    assert int(f(5)) == 10
    assert ua.explain(f, 5).backend == "numpy" and ua.explain(f, 5).compiler == "eager"


def test_a_library_compiles_where_its_backend_declares_a_compiler(backend: TestBackend) -> None:
    # The registry's fact (read before the framework is imported: the compilers ua.jit takes by name) and the
    # backend's compiler are one declaration each; they must agree.
    from unarray import _backends
    from unarray._backends._compiler import EAGER

    b = _backends.get(backend.name)
    assert _backends.LIBRARIES[b.name].compiles == (b.compiler is not EAGER)
    f = ua.jit(lambda x: x + 1)
    x = backend.asarray([1.0, 2.0])
    e = ua.explain(f, x)
    assert e.compiler == (b.name if b.compiler is not EAGER else "eager")
    assert e.kernel.startswith(b.compiler.label)


def test_bad_arguments_are_typed_errors() -> None:
    with pytest.raises(ua.ArgumentError, match=r"ua\.jit: unknown compiler 'numbaa'; .*callable"):
        ua.jit(lambda x: x, compiler="numbaa")
    with pytest.raises(ua.ArgumentError, match=r"unknown compiler 'numba' \(numba cannot compile"):
        ua.jit(lambda x: x, compiler="numba")
    with pytest.raises(ua.ArgumentError, match=r"static_argnames names 'axs'.*\['axis', 'x'\]"):
        ua.jit(lambda x, axis: x, static_argnames="axs")
    f = ua.jit(lambda x, axis: ua.sum(x, axis=axis), static_argnames="axis")
    with pytest.raises(ua.ArgumentTypeError, match=r"static argument 'axis' must be hashable"):
        f(np.ones((2, 2)), axis=[0])
    with pytest.raises(ua.ArgumentTypeError, match="is a decorator"):
        ua.jit(static_argnames="axis")(np.ones(2), 3)


def test_a_real_inductor_compile_of_the_block() -> None:
    torch = pytest.importorskip("torch")
    host = _inputs(TestBackend("torch", "torch", "cpu", torch), 14, 2, 8, 16)
    f = ua.jit(block)
    got = f(*(torch.from_numpy(a) for a in host))
    assert ua.explain(f, *(torch.from_numpy(a) for a in host)).kernel == "torch.compile(fullgraph=False)"
    ref = _ref_block(*(a.astype(np.float64) for a in host))
    assert_close(got.numpy(), ref, "float32", n_terms=64, scale=float(np.abs(ref).max()))


def test_a_lazy_operand_leads_as_in_the_ops() -> None:
    # ua.jit finds its leader with the ops' rule: a dask operand leads a NumPy one wherever it stands.
    da = pytest.importorskip("dask.array")
    f = ua.jit(lambda a, b: ua.add(a, b))
    x, d = np.ones(4), da.ones(4, chunks=2)
    assert ua.explain(f, x, d).backend == "dask"
    out = f(x, d)
    assert type(out).__module__.partition(".")[0] == "dask"
    np.testing.assert_array_equal(out.compute(), np.full(4, 2.0))
