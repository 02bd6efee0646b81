"""Structured attention masks (window, bottom-right causal, segment ids) against a float64 reference whose dense
mask is built from the definition, on every backend; the blocks they skip, their errors and their memory."""

from __future__ import annotations

import re
import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend, assert_close
from tests.attention.test_attention import cast, dtypes_of, reference, rounded, to64
from unarray._backends import attention_blocked
from unarray._errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError

OP = "scaled_dot_product_attention"
_SIDE = st.one_of(st.none(), st.integers(0, 5))


def dense_mask(sq: int, sk: int, causal: bool, window: Any, ids: Any) -> np.ndarray:
    """The definition: query i at p = i + Sk - Sq attends key j iff p - left <= j <= p + right (right <= 0 when
    causal) and the ids are equal; (*B, 1, Sq, Sk) with the segment ids' batch dims, else (Sq, Sk)."""
    p, j = np.arange(sq)[:, None] + sk - sq, np.arange(sk)[None, :]
    left, right = window if isinstance(window, tuple) else (window, window)
    ok = (j <= p if causal else True) & (j >= p - left if left is not None else True) & (
        j <= p + right if right is not None else True) & np.ones((sq, sk), bool)
    if ids is None:
        return ok
    qi, ki = ids if isinstance(ids, tuple) else (ids, ids)
    return (ok & (qi[..., :, None] == ki[..., None, :]))[..., None, :, :]


@st.composite
def problems(draw: Any) -> dict[str, Any]:
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    hk, g = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    sk = draw(st.integers(1, 13))
    sq = draw(st.one_of(st.just(sk), st.integers(1, 13)))
    window = draw(st.one_of(st.none(), st.integers(0, 5), st.tuples(_SIDE, _SIDE)))
    seg = draw(st.sampled_from(["none", "packed", "shared", "arbitrary", "pair"] if sq == sk else ["none", "pair"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    ids_batch = batch[len(batch) - draw(st.integers(0, len(batch))):]

    def ids(s: int, kind: str) -> np.ndarray:
        if kind in ("packed", "shared"):  # contiguous documents, as packing writes them; shared: one row for all
            return np.sort(rng.integers(0, 4, (*ids_batch, s) if kind == "packed" else s), axis=-1).astype(np.int32)
        return rng.integers(0, 3, (*ids_batch, s)).astype(np.int64)

    segments = None if seg == "none" else (ids(sq, "arbitrary"), ids(sk, "packed")) if seg == "pair" else ids(sq, seg)
    return dict(batch=batch, hq=hk * g, hk=hk, sq=sq, sk=sk, d=draw(st.integers(1, 6)), dv=draw(st.integers(1, 6)),
                layout=draw(st.sampled_from(["bhsd", "bshd"])), causal=draw(st.booleans()), window=window,
                segments=segments, with_mask=draw(st.booleans()), blocks=(draw(st.integers(1, 16)),
                                                                        draw(st.integers(1, 5))), rng=rng)


def build(p: dict[str, Any]) -> tuple[np.ndarray, ...]:
    rng = p["rng"]
    shape = (lambda h, s, d: (*p["batch"], h, s, d)) if p["layout"] == "bhsd" else (
        lambda h, s, d: (*p["batch"], s, h, d))
    q = rng.standard_normal(shape(p["hq"], p["sq"], p["d"]))
    k = rng.standard_normal(shape(p["hk"], p["sk"], p["d"]))
    v = rng.standard_normal(shape(p["hk"], p["sk"], p["dv"]))
    mask = rng.random((p["sq"], p["sk"])) < 0.8 if p["with_mask"] else None
    return q, k, v, mask


def native_ids(backend: TestBackend, segments: Any) -> Any:
    if segments is None:
        return None
    if isinstance(segments, tuple):
        return tuple(backend.asarray(a) for a in segments)
    return backend.asarray(segments)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(p=problems(), data=st.data())
def test_structured_masks_match_the_dense_reference(backend: TestBackend, p: dict[str, Any], data: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Small blocks, so that a few positions make many blocks and the skipping is exercised; torch's query blocks
    # that reach the same keys merge into calls of up to 24 cells.
    monkeypatch.setattr(attention_blocked, "BLOCK_Q", p["blocks"][0])
    monkeypatch.setattr(attention_blocked, "BLOCK_K", p["blocks"][1])
    monkeypatch.setattr(attention_blocked, "MASK_CELLS", 24)
    name = data.draw(st.sampled_from(dtypes_of(backend)))
    q, k, v, mask = build(p)
    qr, kr, vr = (rounded(backend, a, name) for a in (q, k, v))
    allowed = dense_mask(p["sq"], p["sk"], p["causal"], p["window"], p["segments"])
    if mask is not None:
        allowed = allowed & mask
    out = ua.scaled_dot_product_attention(
        cast(backend, q, name), cast(backend, k, name), cast(backend, v, name),
        mask=None if mask is None else backend.asarray(mask), is_causal=p["causal"], window=p["window"],
        segment_ids=native_ids(backend, p["segments"]), layout=p["layout"])
    expected = reference(qr, kr, vr, np.broadcast_to(allowed, allowed.shape), layout=p["layout"])
    assert_close(to64(backend, out), expected, name, n_terms=p["sk"] + p["d"], scale=float(np.abs(vr).max()))


def test_rows_with_nothing_to_attend_are_zeros(backend: TestBackend) -> None:
    rng = np.random.default_rng(3)
    q, k, v = (backend.asarray(rng.standard_normal((1, 2, 6, 4)).astype(np.float32)) for _ in range(3))
    q_ids = backend.asarray(np.array([[0, 0, 7, 1, 1, 7]], np.int32))  # 7 is no key's id
    kv_ids = backend.asarray(np.array([[0, 0, 0, 1, 1, 1]], np.int32))
    out = backend.to_numpy(ua.scaled_dot_product_attention(q, k, v, segment_ids=(q_ids, kv_ids), window=1))
    assert np.all(out[..., [2, 5], :] == 0) and np.all(np.abs(out[..., [0, 1, 3, 4], :]).sum(-1) > 0)
    # Sq > Sk under causal with a window: the first rows sit before every key.
    out = backend.to_numpy(ua.scaled_dot_product_attention(q, k[..., :3, :], v[..., :3, :], is_causal=True,
                                                           window=(1, None)))
    assert np.all(out[..., :3, :] == 0) and np.all(np.abs(out[..., 3:, :]).sum(-1) > 0)


@pytest.mark.parametrize(("kw", "error"), [
    ({"window": -1}, ArgumentError), ({"window": (2, -3)}, ArgumentError), ({"window": 1.5}, ArgumentTypeError),
    ({"window": (1, 2, 3)}, ArgumentTypeError), ({"window": True}, ArgumentTypeError),
    ({"window": "causal"}, ArgumentTypeError), ({"segment_ids": "float"}, DTypeError),
    ({"segment_ids": "short"}, ShapeError), ({"segment_ids": "single, Sq != Sk"}, ShapeError),
    ({"segment_ids": "head dim"}, ShapeError),
])
def test_bad_mask_arguments_are_typed_errors(backend: TestBackend, kw: dict[str, Any], error: type) -> None:
    rng = np.random.default_rng(4)
    q, k, v = (backend.asarray(rng.standard_normal((2, 2, s, 4)).astype(np.float32)) for s in (5, 6, 6))
    ids = {"float": np.zeros((2, 5), np.float32), "short": (np.zeros((2, 5), np.int32), np.zeros((2, 4), np.int32)),
           "single, Sq != Sk": np.zeros((2, 5), np.int32), "head dim": np.zeros((2, 2, 5), np.int32)}
    if "segment_ids" in kw:
        kw = {"segment_ids": native_ids(backend, ids[kw["segment_ids"]])}
    with pytest.raises(error, match=re.escape(f"ua.{OP} [{ua.backend_of(q)}]")):
        ua.scaled_dot_product_attention(q, k, v, **kw)


def _computed(kernel: str) -> tuple[int, int]:
    done, total = re.search(r"(\d+) of (\d+) computed", kernel).groups()  # type: ignore[union-attr]
    return int(done), int(total)


@pytest.mark.parametrize("form", ["window", "segments"])
def test_structured_masks_compute_fewer_blocks_than_the_dense_mask(backend: TestBackend, form: str) -> None:
    s, rng = 4096, np.random.default_rng(5)
    q = backend.asarray(rng.standard_normal((1, 1, s, 8)).astype(np.float32))
    ids = np.repeat(np.arange(8), s // 8)[None]
    kw = {"window": (256, 0), "is_causal": True} if form == "window" else {"segment_ids": backend.asarray(ids)}
    how = ua.explain(OP, q, q, q, **kw).kernel
    full = dense_mask(s, s, form == "window", kw.get("window"), None if form == "window" else ids)
    dense = ua.explain(OP, q, q, q, mask=backend.asarray(full)).kernel
    words = "sliding window (256, 0), causal bottom-right" if form == "window" else "segment ids"
    assert f"mask: {words}; never materialised" in how
    done, total = _computed(how)
    assert total == 64 and ("attention_blocked.blocked" not in dense or _computed(dense) == (64, 64)), dense
    # A lazy array's ids are not read to plan: its segment blocks are masked, not skipped.
    assert done == (total if form == "segments" and backend.name == "dask" else 8 if form == "segments" else 15), how


def test_a_window_holds_memory_linear_in_the_sequence_length() -> None:
    def peak(s: int) -> int:
        rng = np.random.default_rng(6)
        q, k, v = (rng.standard_normal((1, 2, s, 16)).astype(np.float32) for _ in range(3))
        tracemalloc.start()
        try:
            ua.scaled_dot_product_attention(q, k, v, window=(64, 0), is_causal=True)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(2048), peak(8192)
    # The dense mask alone would be S^2 bytes (64 MiB at 8192) and its scores 4 S^2 per head.
    assert large < 8192 * attention_blocked.BLOCK_K * 8 and large < 5 * small, (small, large)


def test_jax_jit_traces_structured_masks() -> None:
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((1, 4, 9, 8)).astype(np.float32) for _ in range(3))
    ids = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])

    @jax.jit
    def f(q: Any, k: Any, v: Any, ids: Any) -> Any:
        return ua.scaled_dot_product_attention(q, k, v, window=(2, 1), is_causal=True, segment_ids=ids)

    out = np.asarray(f(q, k, v, ids))
    assert_close(out, reference(q, k, v, dense_mask(9, 9, True, (2, 1), ids)), "float32", n_terms=17)
