"""The choices behind the native routes of structured masks, held without a GPU: what the positions still ask once
K/V is sliced to the reachable keys (MaskSpec.rest), the flex_attention block mask built from block bounds
(torch, checked block by block against the dense mask), cuDNN's band bounds in CuPy's refusals and graph keys, and
the sliced routes torch and JAX take on the CPU (decode steps, a band over a few rows) against the dense reference.
Their GPU kernels are held in tests/attention/test_mask_routes.py (``--devices gpu``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests.attention.test_mask_routes import allowed, reference
from unarray._backends.attention_masks import MaskSpec

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
_SIDE = st.one_of(st.none(), st.integers(0, 40))


def _spec(left: Any, right: Any, causal: bool) -> MaskSpec:
    if causal:
        right = 0 if right is None else min(right, 0)
    return MaskSpec(causal, left, right)


@SETTINGS
@given(st.integers(1, 40), st.integers(1, 60), _SIDE, _SIDE, st.booleans())
def test_rest_says_what_the_slice_still_masks(sq: int, sk: int, left: Any, right: Any, causal: bool) -> None:
    spec = _spec(left, right, causal)
    lo, hi = spec.key_range(sq, sk)
    dense = allowed(sq, sk, (left, right), causal)
    assert not dense[:, :lo].any() and not dense[:, hi:].any()  # nothing reachable is sliced off
    if hi <= lo:
        return
    part, form = dense[:, lo:hi], spec.rest(sq, sk, lo, hi)
    n = hi - lo
    if form == "none":
        assert part.all()
    elif form == "causal":
        assert np.array_equal(part, np.tril(np.ones((sq, n), bool), n - sq))
    else:
        assert form == "band" and not part.all()


def _blocks_of(bm: Any, batch: int, nq: int, nk: int) -> tuple[np.ndarray, np.ndarray]:
    partial, full = np.zeros((batch, nq, nk), bool), np.zeros((batch, nq, nk), bool)
    for b in range(bm.kv_num_blocks.shape[0]):
        for r in range(nq):
            partial[b, r, bm.kv_indices[b, 0, r, :int(bm.kv_num_blocks[b, 0, r])].numpy()] = True
            full[b, r, bm.full_kv_indices[b, 0, r, :int(bm.full_kv_num_blocks[b, 0, r])].numpy()] = True
    return partial, full


@SETTINGS
@given(st.sampled_from([1, 100, 128, 200, 300]), st.sampled_from([1, 128, 129, 333, 400]),
       st.one_of(st.none(), st.integers(0, 300)), st.one_of(st.none(), st.integers(0, 300)), st.booleans(),
       st.sampled_from(["none", "packed", "arbitrary"]), st.integers(0, 2**16))
def test_flex_block_mask_skips_exactly_the_masked_blocks(sq: int, sk: int, left: Any, right: Any, causal: bool,
                                                        seg: str, seed: int) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch.nn.attention.flex_attention")
    from unarray._backends.torch import attention_masks as tm

    rng = np.random.default_rng(seed)
    spec = _spec(left, right, causal)
    qi = ki = None
    if seg != "none":
        draw = (lambda s: np.sort(rng.integers(0, 4, (2, s)), axis=1)) if seg == "packed" else \
            (lambda s: rng.integers(0, 3, (2, s)))
        qi, ki = draw(sq), draw(sk)
    bm = tm._build(spec, None if qi is None else torch.as_tensor(qi), None if ki is None else torch.as_tensor(ki),
                   sq, sk, "cpu")
    dense = np.broadcast_to(allowed(sq, sk, (left, right), causal, qi, ki).reshape(-1, sq, sk), (2, sq, sk))
    nq, nk = -(-sq // tm.BLOCK), -(-sk // tm.BLOCK)
    partial, full = _blocks_of(bm, 2, nq, nk)
    partial, full = np.broadcast_to(partial[:bm.kv_num_blocks.shape[0]], (2, nq, nk)), \
        np.broadcast_to(full[:bm.kv_num_blocks.shape[0]], (2, nq, nk))
    for b in range(2):
        for r in range(nq):
            for c in range(nk):
                blk = dense[b, r * tm.BLOCK:(r + 1) * tm.BLOCK, c * tm.BLOCK:(c + 1) * tm.BLOCK]
                assert not (partial[b, r, c] and full[b, r, c])
                assert blk.any() <= (partial[b, r, c] or full[b, r, c])  # an allowed pair is never skipped
                assert full[b, r, c] <= blk.all()  # a block taken whole is wholly allowed
                if seg == "none" or (seg == "packed" and spec.left is None and spec.right is None):
                    # positions alone, or sorted ids alone: the bounds are exact
                    assert (partial[b, r, c] or full[b, r, c]) == blk.any()
                    assert full[b, r, c] == blk.all()
    mod = bm.mask_mod
    for i, j in ((0, 0), (sq - 1, sk - 1), (sq // 2, sk // 3)):
        got = bool(mod(torch.tensor(1), torch.tensor(0), torch.tensor(i), torch.tensor(j)))
        assert got == bool(dense[1, i, j])


@pytest.mark.parametrize(("sq", "kw", "route"), [
    (1, {"is_causal": True}, "every key reachable"),
    (1, {"window": (37, 0)}, "reachable keys [262, 300)"),
    (3, {"window": (20, 0), "is_causal": True}, "a (3, 23) boolean mask over them"),
])
@pytest.mark.parametrize("lib", ["torch", "jax"])
def test_cpu_decode_steps_slice_the_keys(lib: str, sq: int, kw: dict[str, Any], route: str) -> None:
    mod = pytest.importorskip("jax.numpy" if lib == "jax" else lib)
    rng = np.random.default_rng(sq)
    q, k, v = rng.standard_normal((2, 4, sq, 16)), rng.standard_normal((2, 2, 300, 16)), \
        rng.standard_normal((2, 2, 300, 16))
    args = [mod.asarray(a, dtype=mod.float32) if lib == "jax" else mod.tensor(a, dtype=mod.float32) for a in (q, k, v)]
    text = ua.explain("scaled_dot_product_attention", *args, **kw).kernel
    assert route in text, text
    out = np.asarray(ua.scaled_dot_product_attention(*args, **kw), dtype=np.float64)
    rounded = [np.asarray(a, dtype=np.float64) for a in args]
    np.testing.assert_allclose(out, reference(*rounded, allowed(sq, 300, kw.get("window"), kw.get("is_causal", False))),
                               rtol=2e-5, atol=2e-5)


def test_cudnn_band_bounds_enter_the_refusals_and_the_graph_key() -> None:
    from unarray._backends.cupy import attention_cudnn as ac

    op = ac.Operand((1, 2, 8, 64), (1024, 512, 64, 1))
    longer = ac.Operand((1, 2, 9, 64), (1152, 576, 64, 1))
    assert ac.refusal("float16", op, op, op, False, "cuda", (4, 0)) is None
    assert "rows with no key" in str(ac.refusal("float16", longer, op, op, False, "cuda", (4, 0)))
    o = ac.out_operand(1, 2, 8, 64, "bhsd")
    keys = {ac.cache_key("float16", op, op, op, o, None, False, 0.125, 0, w) for w in ((None, None), (4, 0), (4, 2))}
    assert len(keys) == 3  # one graph per band


@pytest.mark.filterwarnings("ignore:.*flex_attention.*:UserWarning")  # (its eager form warns it is not compiled)
@pytest.mark.parametrize(("sq", "sk", "left", "right", "seg"), [
    (200, 300, 50, 0, False), (300, 200, 10, None, False), (256, 256, None, None, True), (130, 260, 40, 0, True)])
def test_flex_under_the_built_block_mask_matches_the_dense_mask(sq: int, sk: int, left: Any, right: Any,
                                                                seg: bool) -> None:
    # The GPU route's block mask and element rule, run by flex_attention's eager (CPU) implementation: rows with
    # no key come out zeros, grouped-query heads are taken as enable_gqa.
    torch = pytest.importorskip("torch")
    flex = pytest.importorskip("torch.nn.attention.flex_attention")
    from unarray._backends.torch import attention_masks as tm

    rng = np.random.default_rng(sq)
    qi = ki = None
    if seg:
        qi, ki = (np.sort(rng.integers(0, 4, (2, s)), axis=1) for s in (sq, sk))
    spec = _spec(left, right, False)
    bm = tm._build(spec, None if qi is None else torch.as_tensor(qi), None if ki is None else torch.as_tensor(ki),
                   sq, sk, "cpu")
    q, k, v = rng.standard_normal((2, 4, sq, 16)), rng.standard_normal((2, 2, sk, 16)), \
        rng.standard_normal((2, 2, sk, 16))
    out = flex.flex_attention(*(torch.tensor(a) for a in (q, k, v)), block_mask=bm, enable_gqa=True)
    want = reference(q, k, v, allowed(sq, sk, (left, right), False, qi, ki))
    np.testing.assert_allclose(out.double().numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sq", [1, 7, 40])
def test_the_native_masks_the_gpu_routes_call_mean_the_definition(sq: int) -> None:
    # What the GPU routes rely on, read from the libraries' own CPU implementations: torch's causal_lower_right is
    # causal aligned bottom-right, and JAX's local_window_size=(left, 0) with is_causal is the window aligned
    # top-left, which is bottom-right where Sq == Sk (the only case routed to it).
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    from torch.nn.attention.bias import causal_lower_right

    rng = np.random.default_rng(sq)
    sk = 64
    q, k, v = rng.standard_normal((1, 2, sq, 8)), rng.standard_normal((1, 2, sk, 8)), rng.standard_normal((1, 2, sk, 8))
    got = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), attn_mask=causal_lower_right(sq, sk))
    np.testing.assert_allclose(got.numpy(), reference(q, k, v, allowed(sq, sk, None, True)), rtol=1e-10, atol=1e-10)
    k, v = k[:, :, :sq], v[:, :, :sq]  # Sq == Sk for JAX's window
    got_j = jax.nn.dot_product_attention(*(jax.numpy.asarray(np.swapaxes(a, 1, 2), jax.numpy.float32)
                                           for a in (q, k, v)), is_causal=True, local_window_size=(3, 0))
    want = reference(q, k, v, allowed(sq, sq, (3, 0), True))
    np.testing.assert_allclose(np.swapaxes(np.asarray(got_j), 1, 2), want, rtol=2e-5, atol=2e-5)
