"""The rank side of tests/attention/test_dtensor_ring.py: two gloo processes, each running
``python -c "from tests import _ring_inside as t; t.main()"`` with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set.

Each check runs on both ranks with the same draws (Hypothesis derandomized), shares its verdict (an all-reduce)
and rank 0 prints one JSON line ``{"check": name, "ok": bool, "examples": n, "error": text}``.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np
import torch
import torch.distributed as dist
from hypothesis import strategies as st
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor

import unarray as ua
from unarray._backends.torch import attention_ring, attention_ring_own, ring_rules
from unarray.conformance import local_group, sharded_torch_rank

_CHECKS: list[tuple[str, Callable[[Any, Any], int]]] = []


def _check(fn: Callable[[Any, Any], int]) -> Callable[[Any, Any], int]:
    _CHECKS.append((fn.__name__.lstrip("_"), fn))
    return fn


def _reference(q: Any, k: Any, v: Any, mask: Any, causal: bool) -> Any:
    # float64 NumPy attention in (B, H, S, D), grouped-query heads widened, causal top-left (Sq == Sk here).
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    keep = np.ones(s.shape[-2:], bool) if mask is None else mask
    if causal:
        keep = keep & np.tril(np.ones(s.shape[-2:], bool))
    s = np.where(keep, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(m), m, 0.0))
    tot = p.sum(-1, keepdims=True)
    return (p / np.where(tot == 0, 1.0, tot)) @ v


def _shard(mesh: Any, a: Any, dtype: Any) -> Any:
    t = torch.from_numpy(a).to(dtype)
    return DTensor.from_local(t.chunk(mesh.size(), dim=2)[mesh.get_local_rank()].contiguous(), mesh, [Shard(2)],
                              run_check=False)


def _inputs(seed: int, b: int, hq: int, hk: int, s: int, d: int) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((b, hq, s, d)), rng.standard_normal((b, hk, s, d)),
            rng.standard_normal((b, hk, s, d)))


def _close(got: Any, want: Any, dtype: Any, what: str) -> None:
    tol = 1e-10 if dtype is torch.float64 else 2e-5
    err = float(np.max(np.abs(got.full_tensor().to(torch.float64).numpy() - want), initial=0.0))
    if not err <= tol * (1 + float(np.max(np.abs(want)))):
        raise AssertionError(f"{what}: max abs error {err:.3g} against the float64 reference")


@_check
def _route_follows_crossover(mesh: Any, data: Any) -> int:
    # A window [8, 16) of local rows for this CPU ring: ring below, torch's context parallel inside, ring above;
    # every result equals the reference whichever ring ran.
    w = mesh.size()
    table = {("cpu", w): ring_rules.Crossover(8, 16, "test table")}
    for local, route in ((4, "unarray ring"), (8, "torch context parallel"), (12, "torch context parallel"),
                         (16, "unarray ring")):
        q, k, v = _inputs(local, 1, 2, 2, local * w, 8)
        dq, dk, dv = (_shard(mesh, a, torch.float32) for a in (q, k, v))
        with ring_rules.crossovers(table):
            got = ua.scaled_dot_product_attention(dq, dk, dv, is_causal=True)
            text = str(ua.explain("scaled_dot_product_attention", dq, dk, dv, is_causal=True))
        if route not in text or "crossover window [8, 16) for cpu" not in text:
            raise AssertionError(f"local rows {local}: want {route} by the crossover, explain says {text}")
        side = "below" if local < 8 else "inside" if local < 16 else "above"
        if f"{side}, " not in text:
            raise AssertionError(f"local rows {local}: explain does not say {side!r}: {text}")
        _close(got, _reference(q, k, v, None, True), torch.float32, f"{route} at {local} rows per rank")
    text = str(ua.explain("scaled_dot_product_attention", dq, dk, dv, is_causal=True))
    if "torch context parallel" not in text or "no crossover known for cpu" not in text:
        raise AssertionError(f"with no crossover for the CPU ring, explain says {text}")
    return 4


@_check
def _head_groups_equal_one_group(mesh: Any, data: Any) -> int:
    # unarray's ring walked in 1, 2 or Hk head groups gives the same output as in one, and the reference's,
    # with the head-tail exchange in either form.
    w = mesh.size()
    hk = data.draw(st.sampled_from([1, 2, 4]), label="Hk")
    g = data.draw(st.sampled_from([1, 2]), label="Hq/Hk")
    b = data.draw(st.sampled_from([1, 2]), label="B")
    d = data.draw(st.sampled_from([4, 8]), label="D")
    s = 2 * w * data.draw(st.integers(1, 4), label="S/2W")
    causal = data.draw(st.booleans(), label="is_causal")
    masked = data.draw(st.booleans(), label="mask")
    dtype = data.draw(st.sampled_from([torch.float32, torch.float64]), label="dtype")
    groups = data.draw(st.sampled_from(sorted({1, 2, hk} & {x for x in range(1, hk + 1) if hk % x == 0})),
                       label="groups")
    # the head-tail exchange per (batch, head) row, in place, or per half through a copy
    rows = data.draw(st.sampled_from([0, attention_ring_own.ROW_MESSAGES]), label="ROW_MESSAGES")
    q, k, v = _inputs(data.draw(st.integers(0, 2**20), label="seed"), b, hk * g, hk, s, d)
    mask = np.random.default_rng(s).random((hk * g, s, s)) > 0.3 if masked else None
    dq, dk, dv = (_shard(mesh, a, dtype) for a in (q, k, v))
    dm = None if mask is None else distribute_tensor(torch.from_numpy(mask), mesh, [Replicate()])
    outs = []
    for n in (1, groups):
        with attention_ring.prefer("ring"), mock.patch.object(ring_rules, "head_groups", return_value=n), \
                mock.patch.object(attention_ring_own, "ROW_MESSAGES", rows):
            outs.append(ua.scaled_dot_product_attention(dq, dk, dv, mask=dm, is_causal=causal))
            text = str(ua.explain("scaled_dot_product_attention", dq, dk, dv, mask=dm, is_causal=causal))
        if (f"{n} head groups in turn" in text) != (n > 1):
            raise AssertionError(f"{n} head groups, explain says {text}")
    # Note: the same arithmetic per head; the CPU kernel's blocking over heads may move the last bits.
    one, many = (o.full_tensor().to(torch.float64).numpy() for o in outs)
    eps = float(torch.finfo(dtype).eps)
    if not np.max(np.abs(one - many), initial=0.0) <= 16 * eps * (1 + np.max(np.abs(one), initial=0.0)):
        raise AssertionError(f"{groups} head groups differ from one group by {np.max(np.abs(one - many)):.3g}")
    _close(outs[1], _reference(q, k, v, mask, causal), dtype, f"{groups} head groups")
    return 1


@_check
def _split_equals_reference(mesh: Any, data: Any) -> int:
    # The two-rank split gives the reference's output wherever it applies (causal, Sq == Sk, S divisible by 4),
    # grouped-query heads and either layout included; below the table's split length the rule picks it and
    # explain names it; a call it cannot take (non-causal) runs unarray's ring and explain says why.
    hk = data.draw(st.sampled_from([1, 2, 4]), label="Hk")
    g = data.draw(st.sampled_from([1, 2]), label="Hq/Hk")
    b = data.draw(st.sampled_from([1, 2]), label="B")
    d = data.draw(st.sampled_from([4, 8]), label="D")
    s = 4 * data.draw(st.integers(1, 6), label="S/4")
    dtype = data.draw(st.sampled_from([torch.float32, torch.float64]), label="dtype")
    layout = data.draw(st.sampled_from(["bhsd", "bshd"]), label="layout")
    q, k, v = _inputs(data.draw(st.integers(0, 2**20), label="seed"), b, hk * g, hk, s, d)
    if layout == "bhsd":
        dq, dk, dv = (_shard(mesh, a, dtype) for a in (q, k, v))
    else:  # (B, S, H, D) sharded along S: the ring's tensors are transposed views
        dq, dk, dv = (DTensor.from_local(torch.from_numpy(np.swapaxes(a, 1, 2)).to(dtype).chunk(
            mesh.size(), dim=1)[mesh.get_local_rank()].contiguous(), mesh, [Shard(1)], run_check=False)
            for a in (q, k, v))

    def want(causal: bool) -> Any:
        ref = _reference(q, k, v, None, causal)
        return ref if layout == "bhsd" else np.swapaxes(ref, 1, 2)

    def call(causal: bool) -> tuple[Any, str]:
        out = ua.scaled_dot_product_attention(dq, dk, dv, is_causal=causal, layout=layout)
        return out, str(ua.explain("scaled_dot_product_attention", dq, dk, dv, is_causal=causal, layout=layout))

    with attention_ring.prefer("split"):
        got, text = call(True)
        if "unarray two-rank split" not in text:
            raise AssertionError(f"prefer('split') on a causal call, explain says {text}")
        _close(got, want(True), dtype, f"the split, Hk={hk}, Hq/Hk={g}, S={s}, {layout}")
        plain, text = call(False)
        if "unarray ring" not in text or "does not take the call" not in text:
            raise AssertionError(f"prefer('split') on a non-causal call, explain says {text}")
        _close(plain, want(False), dtype, "non-causal under prefer('split')")
    table = {("cpu", mesh.size()): ring_rules.Crossover(0, 0, "test table", split=s // 2 + 1)}
    with ring_rules.crossovers(table):
        auto, text = call(True)
    if "unarray two-rank split" not in text or f"below {s // 2 + 1} for cpu" not in text:
        raise AssertionError(f"local rows {s // 2} under a split length {s // 2 + 1}: explain says {text}")
    if not torch.equal(auto.to_local(), got.to_local()):
        raise AssertionError("the split chosen by the rule differs from the split asked for")
    return 1


@_check
def _structured_masks_equal_reference(mesh: Any, data: Any) -> int:
    # A window (either side bounded or not, with or without causality) and segment ids (shared, or a pair) on a
    # sequence-sharded call: unarray's ring at each block's global positions gives the reference's output under
    # the dense mask, explain names the ring and why torch's does not take it, and with a causal window of one key
    # rank 0 computes only its own block (the step holding rank 1's keys is skipped).
    w = mesh.size()
    hk, g = data.draw(st.sampled_from([1, 2]), label="Hk"), data.draw(st.sampled_from([1, 2]), label="Hq/Hk")
    b, d = data.draw(st.sampled_from([1, 2]), label="B"), data.draw(st.sampled_from([4, 8]), label="D")
    s = w * data.draw(st.integers(2, 6), label="S/W")
    side = st.one_of(st.none(), st.integers(0, 6))
    window = data.draw(st.one_of(st.none(), st.tuples(side, side)), label="window")
    causal = data.draw(st.booleans(), label="is_causal")
    seg = data.draw(st.sampled_from(["none", "shared", "pair"]), label="segments")
    if seg == "none" and (window is None or window[0] is None):  # (a left bound: structured whatever else)
        window = (1, 0 if window is None else window[1])
    dtype = data.draw(st.sampled_from([torch.float32, torch.float64]), label="dtype")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**20), label="seed"))
    q, k, v = _inputs(int(rng.integers(2**20)), b, hk * g, hk, s, d)
    qi = np.sort(rng.integers(0, 3, (b, s)), axis=-1)
    ki = qi if seg != "pair" else np.sort(rng.integers(0, 3, (b, s)), axis=-1)
    keep = np.ones((s, s), bool)
    i, j = np.arange(s)[:, None], np.arange(s)[None, :]
    left, right = window if window is not None else (None, None)
    right = (0 if right is None else min(right, 0)) if causal else right
    keep &= (j >= i - left if left is not None else True) & (j <= i + right if right is not None else True)
    kw: dict[str, Any] = {"is_causal": causal, "window": window}
    if seg != "none":
        keep = keep & (qi[:, None, :, None] == ki[:, None, None, :])
        ids = [torch.from_numpy(a) for a in (qi, ki)]
        if data.draw(st.booleans(), label="ids as replicated DTensors"):
            ids = [distribute_tensor(a, mesh, [Replicate()]) for a in ids]
        kw["segment_ids"] = ids[0] if seg == "shared" else tuple(ids)
    dq, dk, dv = (_shard(mesh, a, dtype) for a in (q, k, v))
    got = ua.scaled_dot_product_attention(dq, dk, dv, **kw)
    text = str(ua.explain("scaled_dot_product_attention", dq, dk, dv, **kw))
    if "unarray ring" not in text or "a window or segment ids" not in text:
        raise AssertionError(f"a structured mask on a sharded sequence, explain says {text}")
    _close(got, _reference(q, k, v, keep, False), dtype, f"window {window}, causal {causal}, segments {seg}")
    q, k, v = _inputs(1, 1, 2, 2, 4 * w, 8)
    counted: list[int] = []
    real = attention_ring_own.blocks

    def spy(*args: Any) -> Any:
        out = real(*args)
        counted.append(len(out))
        return out

    with mock.patch.object(attention_ring_own, "blocks", spy):
        out = ua.scaled_dot_product_attention(*(_shard(mesh, a, torch.float32) for a in (q, k, v)), is_causal=True,
                                              window=(1, 0))
    band = np.tril(np.ones((4 * w, 4 * w), bool)) & ~np.tril(np.ones((4 * w, 4 * w), bool), -2)
    _close(out, _reference(q, k, v, band, False), torch.float32, "causal window of one key")
    # (after the last collective: a verdict of one rank alone is shared by the runner, not waited on)
    want = [1] + [0] * (w - 1) if mesh.get_local_rank() == 0 else None
    if want is not None and counted[:w] != want:
        raise AssertionError(f"rank 0 under a causal window of one key computed {counted[:w]} blocks per step")
    return 1


def main() -> None:
    from torch.distributed.device_mesh import init_device_mesh

    wait = float(os.environ.get("UA_GLOO_TIMEOUT", "120"))  # a rank that died leaves the other this long
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=wait))
    torch.set_num_threads(1)
    mesh = init_device_mesh("cpu", (dist.get_world_size(),), mesh_dim_names=("cp",))
    ok = True
    try:
        for name, check in _CHECKS:
            # (the conformance suite's runner: each example's verdict agreed across ranks before it is raised)
            err, n = sharded_torch_rank.run_property(check, mesh, 1 if name == "route_follows_crossover" else 10)
            ok = ok and err is None
            if dist.get_rank() == 0:
                print(json.dumps({"check": name, "ok": err is None, "examples": n, "error": err}), flush=True)
    finally:
        dist.barrier()
        dist.destroy_process_group()
    local_group.end_worker(0 if ok else 1)
