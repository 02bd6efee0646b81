"""Mixed operands, ``ua.use`` and ``precision=`` inside ``torch.compile(fullgraph=True)``: a NumPy
array joins a traced torch tensor as the trace's own capture of it, ``with ua.use(...)`` holds for the
creation calls traced inside it, and each works in a cold process too (its first unarray call made
while tracing) as well as after eager calls."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import unarray as ua  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

_CALLS = textwrap.dedent(
    """
    import numpy as np, torch, unarray as ua
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    t = torch.linspace(-1, 1, 9).reshape(3, 3)

    def mixed(x):
        return ua.add(x, a), ua.matmul(a, x)

    def scoped(x):
        with ua.use("torch"):
            z = ua.full((3, 3), 2.0)
        return ua.multiply(x, z)

    def policy(x):
        return ua.matmul(x, x, precision="tf32")

    out = {}
    for fn in (mixed, scoped, policy):
        got = torch.compile(fn, fullgraph=True)(t)
        want = fn(t)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        ok = [type(g) is torch.Tensor and torch.allclose(g, torch.as_tensor(w)) for g, w in zip(got, want)]
        out[fn.__name__] = all(ok)
    print(out)
    """
)


def test_cold_process_compiles_mixed_operands_and_scopes() -> None:
    r = subprocess.run([sys.executable, "-c", _CALLS], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "{'mixed': True, 'scoped': True, 'policy': True}"


@pytest.fixture
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_numpy_joins_a_traced_tensor_with_the_eager_answer(fresh_dynamo: None) -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    t = torch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32))
    ua.add(t, a)  # warm: both types resolved eagerly first

    @torch.compile(fullgraph=True)
    def f(x: torch.Tensor) -> torch.Tensor:
        return ua.subtract(ua.multiply(x, a), a)

    got = f(t)
    assert isinstance(got, torch.Tensor)
    np.testing.assert_allclose(got.numpy(), t.numpy() * a - a, rtol=1e-6)
    assert a.flags.writeable  # the caller's array is untouched


def test_use_inside_compile_is_scoped_to_its_block(fresh_dynamo: None) -> None:
    @torch.compile(fullgraph=True)
    def f(x: torch.Tensor) -> torch.Tensor:
        with ua.use("torch"):
            z = ua.ones((2, 2))
        return x + z

    assert torch.equal(f(torch.zeros(2, 2)), torch.ones(2, 2))
    from unarray._dispatch import default_backend

    assert default_backend()[0] == "numpy"  # the scope did not leak out of the trace
    assert type(ua.zeros(2)).__name__ == "ndarray"


def test_another_librarys_array_inside_compile_names_unarrays_reason(fresh_dynamo: None) -> None:
    from unarray._backends.torch import backend as torch_backend
    from unarray._errors import TracerHandoffError

    class Foreign:  # any array that is not NumPy's: the trace cannot capture it
        pass

    backend = torch_backend.BACKEND
    assert backend.traced_constant(np.ones(2)) is None  # not tracing: the usual handoff runs

    def f(x: torch.Tensor) -> torch.Tensor:
        backend.traced_constant(Foreign())
        return x + 1

    with pytest.raises(Exception, match="unarray: inside torch.compile only NumPy arrays join"):
        torch.compile(f, fullgraph=True)(torch.zeros(1))
    torch._dynamo.reset()
    with pytest.raises(TracerHandoffError, match="ua.to\\(x, 'torch'\\)"):  # graph break: raised eagerly
        torch.compile(f)(torch.zeros(1))


def test_compiled_tensordot_where_the_policy_matters(fresh_dynamo: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # On CUDA (or a CPU with a reduced-precision matmul) tensordot runs as one unarray::matmul under
    # compile; forced here so that path runs on any machine (it failed to trace a generator before).
    from unarray import _precision

    monkeypatch.setattr(_precision, "FORCE_ARBITRATION", True)
    rng = np.random.default_rng(5)
    a = torch.from_numpy(rng.standard_normal((3, 4, 5)).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((4, 5, 2)).astype(np.float32))
    got = torch.compile(lambda x, y: ua.tensordot(x, y, axes=2), fullgraph=True)(a, b)
    ref = np.tensordot(a.double().numpy(), b.double().numpy(), axes=2)
    np.testing.assert_allclose(got.numpy(), ref, rtol=2e-5, atol=2e-5)


# Guards on the module table: unarray code that reads sys.modules while torch.compile traces makes dynamo wrap
# the whole dict (iterating it, and guarding on it); a module imported meanwhile failed a compile on the H100
# ("dictionary changed size during iteration", ua.jit's fallback). The block of benchmarks/jit_block.py, plus
# ua.nn's building blocks and a scope, traced in a cold process (the backend loads inside the trace) and warm.
_GUARDS = textwrap.dedent(
    """
    import sys, numpy as np, torch
    sys.path.insert(0, "benchmarks")
    import unarray as ua
    import jit_block as jb

    x, p = jb.host_inputs({"batch": 2, "seq": 16, "dim": 32, "heads": 4})
    tx, tp = torch.from_numpy(x), {k: torch.from_numpy(v) for k, v in p.items()}

    def nn(a):
        with ua.precision("tf32"):
            m = ua.matmul(a, ua.matrix_transpose(a))
        return (ua.nn.softmax(a), ua.nn.log_softmax(a), ua.nn.logsumexp(a, axis=-1), ua.nn.rms_norm(a),
                ua.nn.gelu(a), ua.nn.silu(a), m)

    def guards(fn, *args):
        out = torch._dynamo.explain(fn)(*args)
        return sorted({str(g.name) for g in out.out_guards if "modules" in str(g.name)}), out.graph_break_count

    found = [guards(nn, tx[0, :, :8]), guards(lambda a, q: jb.ua_block(a, q, 4), tx, tp)]
    torch._dynamo.reset()
    found.append(guards(nn, tx[0, :, :8]))  # warm: the backend loaded before the trace
    print(found)
    """
)


def test_traced_unarray_code_guards_on_no_module_table() -> None:
    r = subprocess.run([sys.executable, "-c", _GUARDS], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "[([], 0), ([], 0), ([], 0)]"
