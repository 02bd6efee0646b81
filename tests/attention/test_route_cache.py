"""The attention routes kept per call signature (unarray/_nn_args.py ROUTES, Plan.again): a repeated call (a decode
step) skips the checks and the route's choice, and must give what planning it afresh gives, refuse what the checks
refuse, keep none of the caller's arrays alive, and see a change of policy, of shapes and of tracing state."""

from __future__ import annotations

import gc
import re
import weakref
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close, make_backend
from tests.attention.test_attention import cast, dtypes_of, reference, rounded, to64
from tests.attention.test_masks import dense_mask
from unarray import _nn_args
from unarray._errors import ArgumentError, ArgumentTypeError
from unarray._explanation import PLANNERS

OP = "scaled_dot_product_attention"
KEPT = ("torch", "jax")  # the backends whose routes plan again


def _arrays(backend: Any, rng: Any, shapes: Any, name: str = "float32") -> list[Any]:
    return [cast(backend, rng.standard_normal(s), name) for s in shapes]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sq=st.integers(1, 5), extra=st.integers(0, 9), g=st.integers(1, 3), causal=st.booleans(),
       window=st.one_of(st.none(), st.integers(0, 4), st.tuples(st.none() | st.integers(0, 4), st.none() | st.integers(
           0, 4))), layout=st.sampled_from(["bhsd", "bshd"]), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_a_repeated_call_gives_the_fresh_plans_answer(backend: TestBackend, sq: int, extra: int, g: int, causal: bool,
                                                      window: Any, layout: str, seed: int, data: Any) -> None:
    # Two calls of one signature on fresh data: the second takes the kept route; it must be the dense reference's
    # answer and, bit for bit, the answer of the route planned afresh for the same arrays.
    name = data.draw(st.sampled_from(dtypes_of(backend)))
    rng, sk = np.random.default_rng(seed), sq + extra
    shape = (lambda h, s: (1, h, s, 8)) if layout == "bhsd" else (lambda h, s: (1, s, h, 8))
    kw = dict(is_causal=causal, window=window, layout=layout)
    for _ in range(2):
        q, k, v = (rng.standard_normal(shape(h, s)) for h, s in ((2 * g, sq), (2, sk), (2, sk)))
        args = [cast(backend, a, name) for a in (q, k, v)]
        out = ua.scaled_dot_product_attention(*args, **kw)
    key = _nn_args.route(*args, None, causal, window, None, None, layout, None)[0]
    assert (key in _nn_args.ROUTES) == (backend.name in KEPT), backend.name
    fresh = PLANNERS[OP](*args, **kw)[1].run()
    assert np.array_equal(to64(backend, out), to64(backend, fresh), equal_nan=True)
    qr, kr, vr = (rounded(backend, a, name) for a in (q, k, v))
    assert_close(to64(backend, out), reference(qr, kr, vr, dense_mask(sq, sk, causal, window, None), layout=layout),
                 name, n_terms=sk + 8, scale=float(np.abs(vr).max()))


@pytest.mark.parametrize(("kw", "error"), [
    ({"is_causal": 1}, ArgumentTypeError), ({"scale": True}, ArgumentTypeError),
    ({"window": (2.0, 0)}, ArgumentTypeError), ({"window": (True, 0)}, ArgumentTypeError),
    ({"window": 2.0}, ArgumentTypeError), ({"scale": float("nan")}, ArgumentError),
    ({"precision": "float32"}, ArgumentError), ({"layout": "sbhd"}, ArgumentError),
])
def test_a_kept_route_still_refuses_what_the_checks_refuse(backend: TestBackend, kw: dict[str, Any],
                                                           error: type) -> None:
    # Each bad argument equals (==, hash) a good one of a kept route (1 == True, 2.0 == 2): the key tells them apart.
    q, k, v = _arrays(backend, np.random.default_rng(1), ((1, 4, 1, 8), (1, 2, 6, 8), (1, 2, 6, 8)))
    good = {"is_causal": True, "window": (2, 0), "scale": 1, "layout": "bhsd"}
    for window in ((2, 0), (2, 0), 2):  # (the first call of a process loads the backend: not yet kept)
        ua.scaled_dot_product_attention(q, k, v, **{**good, "window": window})
    assert (_nn_args.route(q, k, v, None, True, 2, None, 1, "bhsd", None)[0] in _nn_args.ROUTES) == (
        backend.name in KEPT)
    with pytest.raises(error, match=re.escape(f"[{ua.backend_of(q)}]")):
        ua.scaled_dot_product_attention(q, k, v, **{**good, **kw})


@pytest.mark.parametrize("lib", KEPT)
def test_kept_routes_hold_no_array(lib: str) -> None:
    pytest.importorskip(lib)
    backend = make_backend(lib)
    rng = np.random.default_rng(2)
    for window in (None, (3, 0)):  # every key reachable, and K/V sliced to the window
        q, k, v = _arrays(backend, rng, ((1, 4, 1, 8), (1, 2, 9, 8), (1, 2, 9, 8)))
        out = ua.scaled_dot_product_attention(q, k, v, is_causal=True, window=window)
        refs = [weakref.ref(a) for a in (q, k, v, out)]
        assert _nn_args.route(q, k, v, None, True, window, None, None, "bhsd", None)[0] in _nn_args.ROUTES
        del q, k, v, out
        gc.collect()
        assert all(r() is None for r in refs), f"a kept {lib} route holds the caller's arrays"


@pytest.mark.parametrize("lib", KEPT)
def test_a_change_of_policy_or_shape_plans_again(lib: str) -> None:
    pytest.importorskip(lib)
    backend = make_backend(lib)
    rng = np.random.default_rng(3)
    for s in (6, 7):
        q, k, v = _arrays(backend, rng, ((1, 4, 1, 8), (1, 2, s, 8), (1, 2, s, 8)))
        for policy in ("highest", "bf16"):
            with ua.precision(policy):
                out = ua.scaled_dot_product_attention(q, k, v, is_causal=True, window=(4, 0))
                fresh = PLANNERS[OP](q, k, v, is_causal=True, window=(4, 0))[1].run()
                key = _nn_args.route(q, k, v, None, True, (4, 0), None, None, "bhsd", None)[0]
            assert key[-1] == policy and key in _nn_args.ROUTES
            assert np.array_equal(to64(backend, out), to64(backend, fresh))
    kernel = ua.explain(OP, q, k, v, is_causal=True, window=(4, 0)).kernel
    assert "K/V sliced to the reachable keys [2, 7)" in kernel and "mask: sliding window (4, 0)" in kernel, kernel


def test_a_jax_trace_after_a_kept_route_is_planned_in_full() -> None:
    jax = pytest.importorskip("jax")
    backend = make_backend("jax")
    q, k, v = _arrays(backend, np.random.default_rng(4), ((1, 4, 1, 8), (1, 2, 9, 8), (1, 2, 9, 8)))
    eager = ua.scaled_dot_product_attention(q, k, v, is_causal=True, window=(3, 0))
    before = dict(_nn_args.ROUTES)
    traced = jax.jit(lambda q, k, v: ua.scaled_dot_product_attention(q, k, v, is_causal=True, window=(3, 0)))(q, k, v)
    assert_close(np.asarray(traced, np.float64), np.asarray(eager, np.float64), "float32", n_terms=9)
    assert _nn_args.ROUTES == before  # a tracer's signature is never kept


def test_a_torch_compile_trace_after_a_kept_route_is_planned_in_full() -> None:
    torch = pytest.importorskip("torch")
    backend = make_backend("torch")
    q, k, v = _arrays(backend, np.random.default_rng(5), ((1, 4, 1, 8), (1, 2, 9, 8), (1, 2, 9, 8)))
    eager = ua.scaled_dot_product_attention(q, k, v, is_causal=True, window=(3, 0))
    seen: list[Any] = []
    real = _nn_args.remember

    def remember(key: Any, b: Any, plan: Any) -> None:
        seen.append(key)
        real(key, b, plan)

    f = torch.compile(lambda q, k, v: ua.scaled_dot_product_attention(q, k, v, is_causal=True, window=(3, 0)),
                      backend="eager", fullgraph=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_nn_args, "remember", remember)
        traced = f(q, k, v)
    assert seen == [None]  # traced: planned in full, nothing kept
    assert_close(traced.double().numpy(), eager.double().numpy(), "float32", n_terms=9)
