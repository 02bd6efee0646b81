"""A function written with unarray compiles once per input signature under ``ua.jit`` and ``torch.compile``.

Traced unarray code must leave module state alone: a cache filled while Dynamo traces (the dtype names once
were) is replayed after the graph, and the guard taken on the dict as it was fails on the next call, so every
function compiled twice and each new dtype once more (a recompile, seconds of compile time, and a step toward
Dynamo's recompile limit, after which the function runs eagerly). Each check runs in a fresh process, where
unarray's caches are as cold as in a user's first call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import unarray as ua

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent(
    """
    import json, sys
    if sys.argv[2] == "torch first":
        import torch, unarray as ua
    else:
        import unarray as ua, torch
    import torch._dynamo as dyn

    def many(x, w, m):
        # Ops from every front-end module: elementwise, reductions, linear algebra, manipulation, creation from
        # arrays, searching, sorting, dtype queries, ua.nn and attention.
        h = ua.nn.layer_norm(x, weight=w[0], bias=w[1])
        h = ua.add(ua.matmul(h, m), ua.exp(ua.multiply(h, 0.01)))
        q = ua.reshape(h, (2, 8, 2, 4))
        a = ua.nn.scaled_dot_product_attention(q, q, q, is_causal=True, layout="bshd")
        a = ua.reshape(a, (2, 8, 8))
        s = ua.nn.softmax(a, axis=-1) + ua.nn.log_softmax(a, axis=-1) + ua.nn.logsumexp(a, axis=-1, keepdims=True)
        s = ua.nn.gelu(s) + ua.nn.silu(s) + ua.nn.rms_norm(s, weight=w[0])
        t = ua.concat([ua.sum(s, axis=0), ua.mean(s, axis=0), ua.max(s, axis=0), ua.std(s, axis=0)], axis=0)
        t = ua.where(t > 0, t, ua.zeros_like(t)) + ua.astype(ua.argmax(t, axis=-1, keepdims=True), t.dtype)
        t = ua.sort(ua.permute_dims(ua.stack([t, t]), (1, 0, 2)), axis=-1)
        t = ua.tensordot(t, m, axes=1) + ua.vecdot(t, t)[..., None]
        return ua.expand_dims(ua.sum(t, axis=(0, 1)), axis=0) * ua.finfo(t.dtype).eps

    def graphs():
        return dyn.utils.counters["stats"]["unique_graphs"]

    how = sys.argv[1]
    f = ua.jit(many) if how == "ua.jit" else torch.compile(many)
    out = {}
    for dt in (torch.float32, torch.float64, torch.float32):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(2, 8, 8, generator=g, dtype=dt)
        w = torch.rand(2, 8, generator=g, dtype=dt) + 0.5
        m = torch.randn(8, 8, generator=g, dtype=dt) / 3
        for i in range(3):
            r = f(x, w, m)
            out.setdefault(str(dt), []).append(graphs())
        want = many(x, w, m)
        out[str(dt) + " close"] = bool(torch.allclose(r, want, rtol=1e-4, atol=1e-6))
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize(("how", "order"), [
    ("ua.jit", "torch first"),
    ("ua.jit", "unarray first"),
    ("torch.compile", "torch first"),
    ("torch.compile", "unarray first"),  # torch registered when torch.compile imports its tracer
])
def test_a_function_compiles_once_per_dtype_in_a_cold_process(how: str, order: str) -> None:
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, how, order], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    # float32's first call compiles (g graphs: 1, or more where a torch version splits the function), the next
    # two compile none; float64 compiles as many again; float32's return compiles none.
    g = seen["torch.float32"][0]
    assert g >= 1 and seen["torch.float32"] == [g, g, g, 2 * g, 2 * g, 2 * g], seen
    assert seen["torch.float64"] == [2 * g, 2 * g, 2 * g], seen
    assert seen["torch.float32 close"] and seen["torch.float64 close"], seen


# -- ua.jit's guards: unarray's own modules are not guarded, everything a result depends on is ------------------------

SCALE = 2.0


def _scaled(x: Any) -> Any:
    return ua.nn.softmax(ua.matmul(x, x), axis=-1) * SCALE


def test_ua_jit_keeps_the_guards_a_result_depends_on(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    f = ua.jit(_scaled)
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(1))
    want = torch.softmax(x @ x, dim=-1)
    assert torch.allclose(f(x), 2 * want, rtol=1e-5, atol=1e-6)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)  # the user's global: guarded, so traced anew
    assert torch.allclose(f(x), 3 * want, rtol=1e-5, atol=1e-6)
    x64 = x.double()  # the argument's dtype: guarded
    assert f(x64).dtype == torch.float64
    with ua.precision("tf32"):  # the policy: ua.jit's key
        assert f(x).dtype == torch.float32
    assert f.cache_info()["entries"] == 2


def test_ua_jit_drops_the_guards_on_unarray_modules_and_honours_the_callers_filter() -> None:
    torch = pytest.importorskip("torch")
    seen: list[tuple[str, bool]] = []

    def theirs(entries: Any) -> list[bool]:
        seen.extend((e.name, e.is_global) for e in entries)
        return [True] * len(entries)

    from unarray._backends.torch import compiled

    f = ua.jit(_scaled, torch={"options": {"guard_filter_fn": theirs}})
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(2))
    f(x)
    assert seen, "the caller's guard filter was not called"

    class Entry:
        def __init__(self, name: str) -> None:
            self.name, self.guard_type, self.orig_guard = name, "ID_MATCH", None

    internal = [n for n, _ in seen if compiled._root(n).startswith(compiled._INTERNAL)
                and not compiled._root(n).startswith(compiled._KEPT)]
    assert internal, "the trace read no unarray module: nothing to check"
    assert compiled._internal([Entry(n) for n in internal]) == [False] * len(internal)
    kept = [n for n, is_global in seen if n and not is_global]  # the arguments' guards stay
    assert kept and all(compiled._internal([Entry(n)]) == [True] for n in kept)


OFFSET = 1.0


def _shifted(x: Any) -> Any:
    return ua.add(ua.matmul(x, x), OFFSET)


def test_a_callers_filter_that_drops_everything_wins() -> None:
    # Note: a global of its own: one that changed between two compiles before (SCALE above) becomes an input of
    # later graphs (Dynamo's automatic dynamic), guarded or not.
    torch = pytest.importorskip("torch")
    f = ua.jit(_shifted, torch={"options": {"guard_filter_fn": lambda entries: [False] * len(entries)}})
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(3))
    first = f(x)
    global OFFSET
    saved, OFFSET = OFFSET, 5.0
    try:
        assert torch.equal(f(x), first)  # no guard on OFFSET left: the graph traced with 1.0 runs
    finally:
        OFFSET = saved
