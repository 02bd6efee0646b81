"""The subprocess side of tests/attention/test_jax_ring_groups.py: JAX on 2 fake CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=2`` and ``JAX_PLATFORMS=cpu`` in the child's environment,
set by the test before JAX is imported), run as ``python -c "from tests import _jax_ring_inside as t; t.main()"``;
prints one JSON line per check, ``{"check": name, "ok": bool, "examples": n, "error": text}``. Importing it
changes nothing (pytest's doctest collection imports it in the suite's own process).
"""

from __future__ import annotations

import dataclasses
import json  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402
from unittest import mock  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import unarray as ua  # noqa: E402
from unarray._backends import ring_memory  # noqa: E402
from unarray._backends.jax import attention_ring as ring  # noqa: E402

_CHECKS: list[tuple[str, Callable[[Any], int]]] = []
# The memory check's shape: causal float32, B=1, S=1024, H=Hk=4, D=512, sequence over 2 devices; the jnp
# block's scores (rows x 512 keys) are small next to the rows' q, k, v and output at D=512, as cuDNN's are.
MEMORY_SHAPE = (1, 1024, 4, 4, 512)


def _check(fn: Callable[[Any], int]) -> Callable[[Any], int]:
    _CHECKS.append((fn.__name__.lstrip("_"), fn))
    return fn


def _mesh() -> Any:
    return jax.sharding.Mesh(np.array(jax.devices()), ("s",))


def _reference(q: Any, k: Any, v: Any, causal: bool) -> Any:
    # float64 NumPy attention in (B, S, H, D), grouped-query heads widened (head h reads kv head h // g).
    g = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, g, axis=2), np.repeat(v, g, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhqk,bkhd->bqhd", p / p.sum(-1, keepdims=True), v)


def _sharded(arrs: list[Any], dtype: str, layout: str) -> list[Any]:
    spec = P(None, "s", None, None) if layout == "bshd" else P(None, None, "s", None)  # type: ignore[no-untyped-call]
    sh = NamedSharding(_mesh(), spec)
    return [jax.device_put(jnp.asarray(a if layout == "bshd" else np.swapaxes(a, 1, 2), dtype), sh) for a in arrs]


def _draw_inputs(data: Any) -> tuple[list[Any], int, str, str]:
    # q, k, v in (B, S, H, D) float64 (grouped-query heads drawn), Hk, the layout and the dtype of a check's call.
    hk = data.draw(st.sampled_from([1, 2, 4]), label="Hk")
    rep = data.draw(st.sampled_from([1, 2]), label="Hq/Hk")
    b = data.draw(st.sampled_from([1, 2]), label="B")
    d = data.draw(st.sampled_from([8, 16]), label="D")
    s = 4 * data.draw(st.integers(1, 6), label="S/4")
    layout = data.draw(st.sampled_from(["bshd", "bhsd"]), label="layout")
    dtype = data.draw(st.sampled_from(["float32", "float64"]), label="dtype")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**20), label="seed"))
    return [rng.standard_normal((b, s, h, d)) for h in (hk * rep, hk, hk)], hk, layout, dtype


@_check
def _groups_equal_one_group(data: Any) -> int:
    # The ring walked in 1, 2 or Hk head groups: the same output and gradients as in one group, and the
    # float64 reference's.
    causal = data.draw(st.booleans(), label="is_causal")
    arrs, hk, layout, dtype = _draw_inputs(data)
    groups = data.draw(st.sampled_from([x for x in (2, 4) if hk % x == 0] or [1]), label="groups")
    q, k, v = _sharded(arrs, dtype, layout)
    outs, grads = [], []
    for n in (1, groups):
        with mock.patch.object(ring_memory, "head_groups", return_value=n):
            text = ua.explain("scaled_dot_product_attention", q, k, v, is_causal=causal, layout=layout).kernel
            outs.append(np.asarray(ua.scaled_dot_product_attention(q, k, v, is_causal=causal, layout=layout),
                                   np.float64))
            grads.append(jax.grad(lambda q, k, v: jnp.sum(ua.scaled_dot_product_attention(
                q, k, v, is_causal=causal, layout=layout) ** 2), argnums=(0, 1, 2))(q, k, v))
        if "ring attention" not in text or (f"{n} head groups in turn" in text) != (n > 1):
            raise AssertionError(f"{n} head groups, explain says {text!r}")
    _agree((outs[1], grads[1]), (outs[0], grads[0]), arrs, causal, layout, dtype, f"{groups} head groups", "one")
    return 1


def _agree(got: tuple[Any, Any], base: tuple[Any, Any], arrs: list[Any], causal: bool, layout: str, dtype: str,
           what: str, base_what: str) -> None:
    # got's output equals the float64 reference's, and got's output and gradients equal base's to a few ulps.
    eps = float(np.finfo(dtype).eps)
    scale = 1 + float(np.max(np.abs(base[0])))
    if not np.max(np.abs(got[0] - base[0])) <= 16 * eps * scale:
        raise AssertionError(f"{what} differ from {base_what} by {np.max(np.abs(got[0] - base[0])):.3g}")
    want = _reference(arrs[0], arrs[1], arrs[2], causal)
    out = got[0] if layout == "bshd" else np.swapaxes(got[0], 1, 2)
    tol = 1e-10 if dtype == "float64" else 2e-5
    if not np.max(np.abs(out - want)) <= tol * scale:
        raise AssertionError(f"{what}: max abs error {np.max(np.abs(out - want)):.3g} against the float64 reference")
    for name, g, gb in zip("qkv", got[1], base[1], strict=True):
        a, c = np.asarray(g, np.float64), np.asarray(gb, np.float64)
        if not np.max(np.abs(a - c)) <= 64 * eps * (1 + float(np.max(np.abs(c)))):
            raise AssertionError(f"d{name}: {what} differ from {base_what} by {np.max(np.abs(a - c)):.3g}")


@_check
def _split_equals_the_ring(data: Any) -> int:
    # The two-device split (causal, two devices) gives the float64 reference's output and the ring's values and
    # gradients (its backward is the ring's, on the zigzagged rows), chosen below SPLIT_ROWS and named by explain;
    # its compiled program's per-device peak stays under one device's for the whole sequence.
    arrs, _, layout, dtype = _draw_inputs(data)
    q, k, v = _sharded(arrs, dtype, layout)
    outs, grads, texts = [], [], []
    for route in ("auto", "ring"):
        token = ring.PREFER.set(route)
        try:
            texts.append(ua.explain("scaled_dot_product_attention", q, k, v, is_causal=True, layout=layout).kernel)
            outs.append(np.asarray(ua.scaled_dot_product_attention(q, k, v, is_causal=True, layout=layout),
                                   np.float64))
            grads.append(jax.grad(lambda q, k, v: jnp.sum(ua.scaled_dot_product_attention(
                q, k, v, is_causal=True, layout=layout) ** 2), argnums=(0, 1, 2))(q, k, v))
        finally:
            ring.PREFER.reset(token)
    if "two-device split" not in texts[0] or f"below {ring.SPLIT_ROWS} (SPLIT_ROWS)" not in texts[0]:
        raise AssertionError(f"a causal call on two devices, explain says {texts[0]!r}")
    if "ring attention" not in texts[1]:
        raise AssertionError(f"the ring asked for, explain says {texts[1]!r}")
    _agree((outs[0], grads[0]), (outs[1], grads[1]), arrs, True, layout, dtype, "the split's", "the ring's")
    return 1


@_check
def _split_peak_under_one_device(data: Any) -> int:
    # The split's compiled program holds no more per device than one device's program for the whole sequence.
    b, s, h, hk, d = MEMORY_SHAPE
    arrs = [np.random.default_rng(0).standard_normal((b, s, n, d)).astype(np.float32) for n in (h, hk, hk)]
    q, k, v = _sharded(arrs, "float32", "bshd")
    token = ring.PREFER.set("split")
    try:
        p = ring.plan(q, k, v, None, True, "bshd")
    finally:
        ring.PREFER.reset(token)
    if p is None or p.route != "split":
        raise AssertionError(f"the split was asked for, the plan is {p}")
    m = ring._compiled(p, True, 1 / np.sqrt(d), "bshd", "highest")[0].lower(q, k, v).compile().memory_analysis()
    one = [jax.device_put(a, jax.devices()[0]) for a in arrs]
    m1 = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True)).lower(
        *one).compile().memory_analysis()
    assert m is not None and m1 is not None
    peak = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
    whole = m1.argument_size_in_bytes + m1.output_size_in_bytes
    if not peak <= whole:
        raise AssertionError(f"the split's per-device peak {peak / 2**20:.2f} MiB above one device's "
                             f"{whole / 2**20:.2f} MiB")
    return 1


def _count_case(data: Any, causal: bool, route: str) -> tuple[int, tuple[int, ...], str]:
    # A drawn shape's one-group program on the route: XLA's temporaries, the counts' arguments, the kernel.
    b = data.draw(st.sampled_from([1, 2]), label="B")
    hk = data.draw(st.sampled_from([1, 2, 4]), label="Hk")
    rep = data.draw(st.sampled_from([1, 2]), label="Hq/Hk")
    d = data.draw(st.sampled_from([32, 64, 128]), label="D")
    s = data.draw(st.sampled_from([256, 1024, 2048]), label="S")
    q, k, v = _sharded([np.ones((b, s, h, d), np.float32) for h in (hk * rep, hk, hk)], "float32", "bshd")
    token = ring.PREFER.set(route)
    try:
        p = ring.plan(q, k, v, None, causal, "bshd")
    finally:
        ring.PREFER.reset(token)
    assert p is not None and p.route == route
    fn = ring._compiled(dataclasses.replace(p, groups=1), causal, 1 / np.sqrt(d), "bshd", "highest")[0]
    temp = fn.lower(q, k, v).compile().memory_analysis().temp_size_in_bytes
    return temp, (b, hk * rep, hk, s // 2, s // 2, d, d, 4, 4), p.kernel


@_check
def _split_count_bounds_the_temporaries(data: Any) -> int:
    # The split's counted extra bytes (what its group rule divides) bound XLA's temporaries for its program, and
    # are below the zigzag ring's count (so the split walks no more head groups than the ring).
    temp, args, kernel = _count_case(data, True, "split")
    counted, zigzag = max(ring.split_extra_bytes(*args, kernel)), ring.extra_bytes(*args, True, kernel)
    if not temp <= counted < zigzag:
        raise AssertionError(f"temporaries {temp / 2**20:.2f} MiB, the split's count {counted / 2**20:.2f} MiB, "
                             f"the ring's {zigzag / 2**20:.2f} MiB")
    return 1


def _peaks(shape: tuple[int, ...], causal: bool) -> tuple[int, dict[int, int], int]:
    # (chosen groups, {groups: the ring program's per-device peak}, one device's program's inputs + output).
    b, s, h, hk, d = shape
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal((b, s, n, d)).astype(np.float32) for n in (h, hk, hk)]
    q, k, v = _sharded(arrs, "float32", "bshd")
    p = ring.plan(q, k, v, None, causal, "bshd")
    if p is None:
        raise AssertionError(f"{shape}: the ring does not take it")
    peaks = {}
    for g in sorted({1, p.groups}):
        fn = ring._compiled(dataclasses.replace(p, groups=g), causal, 1 / np.sqrt(d), "bshd", "highest")[0]
        m = fn.lower(q, k, v).compile().memory_analysis()
        assert m is not None
        peaks[g] = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
    one = [jax.device_put(a, jax.devices()[0]) for a in arrs]
    m1 = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=causal)).lower(
        *one).compile().memory_analysis()
    assert m1 is not None
    # Note: a fused kernel's program holds its inputs and output (XLA's CPU attention also holds S x S scores).
    return p.groups, peaks, m1.argument_size_in_bytes + m1.output_size_in_bytes


@_check
def _one_group_below_the_row_floor(data: Any) -> int:
    # Below GROUP_MIN_ROWS rows per device the ring keeps one group (smaller kernels would cost more than the
    # memory saves); the memory shape would otherwise take several.
    causal = data.draw(st.booleans(), label="is_causal")
    b, s, h, hk, d = MEMORY_SHAPE
    arrs = [np.ones((b, s, n, d), np.float32) for n in (h, hk, hk)]
    q, k, v = _sharded(arrs, "float32", "bshd")
    saved = ring.GROUP_MIN_ROWS
    try:
        ring.GROUP_MIN_ROWS = s  # the local rows (s / 2) are below it
        below = ring.plan(q, k, v, None, causal, "bshd")
        ring.GROUP_MIN_ROWS = 0
        above = ring.plan(q, k, v, None, causal, "bshd")
    finally:
        ring.GROUP_MIN_ROWS = saved
    if below is None or above is None or below.groups != 1 or above.groups < 2:
        raise AssertionError(f"groups {getattr(below, 'groups', None)} below the floor, "
                             f"{getattr(above, 'groups', None)} above it")
    return 1


@_check
def _peak_under_one_device(data: Any) -> int:
    # The compiled ring's per-device peak (XLA's memory_analysis: arguments + output + temporaries) is at most
    # what one device's fused-attention program holds for the whole sequence; one group would be above it.
    causal = data.draw(st.booleans(), label="is_causal")
    groups, peaks, one = _peaks(MEMORY_SHAPE, causal)
    if groups < 2 or peaks[groups] > one:
        raise AssertionError(f"{MEMORY_SHAPE} causal={causal}: {groups} head groups, peak per device "
                             f"{peaks[groups] / 2**20:.2f} MiB against one device's {one / 2**20:.2f} MiB")
    if peaks[1] <= one:
        raise AssertionError(f"one head group's peak {peaks[1] / 2**20:.2f} MiB is already under one device's "
                             f"{one / 2**20:.2f} MiB: the shape does not show the grouping")
    return 1


@_check
def _count_bounds_the_temporaries(data: Any) -> int:
    # The ring's counted extra bytes (what the group rule divides) bound XLA's temporaries for the program.
    causal = data.draw(st.booleans(), label="is_causal")
    temp, args, kernel = _count_case(data, causal, "ring")
    counted = ring.extra_bytes(*args, causal, kernel)
    if temp > counted:
        raise AssertionError(f"temporaries {temp / 2**20:.2f} MiB above the count {counted / 2**20:.2f} MiB")
    return 1


def _run(check: Callable[[Any], int], examples: int) -> tuple[str | None, int]:
    count = [0]

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(st.data())
    def prop(data: Any) -> None:
        count[0] += check(data)

    try:
        prop()
    except Exception as e:
        return f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}", count[0]
    return None, count[0]


@_check
def _structured_masks_equal_the_reference(data: Any) -> int:
    # A window (aligned bottom-right, Sq <= Sk) and segment ids on a sequence-sharded call run the ring at global
    # positions: the float64 reference's output under the dense mask and its gradients (of a jnp attention under
    # that mask), and explain names the structured ring.
    arrs, hk, layout, dtype = _draw_inputs(data)
    b, s = arrs[0].shape[0], arrs[0].shape[1]
    sq = data.draw(st.sampled_from([s, s // 2 if s % 4 == 0 else s]), label="Sq")
    arrs[0] = arrs[0][:, :sq]
    side = st.one_of(st.none(), st.integers(0, 6))
    window = data.draw(st.one_of(st.none(), st.tuples(side, side)), label="window")
    causal = data.draw(st.booleans(), label="is_causal")
    seg = data.draw(st.sampled_from(["none", "pair"] if sq != s else ["none", "shared", "pair"]), label="segments")
    if seg == "none" and (window is None or window[0] is None):  # (a left bound: structured whatever else)
        window = (2, 0 if window is None else window[1])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**20), label="ids seed"))
    qi = np.sort(rng.integers(0, 3, (b, sq)), axis=-1).astype(np.int32)
    ki = qi if seg == "shared" else np.sort(rng.integers(0, 3, (b, s)), axis=-1).astype(np.int32)
    left, right = window if window is not None else (None, None)
    right = (0 if right is None else min(right, 0)) if causal else right
    i, j = np.arange(sq)[:, None] + s - sq, np.arange(s)[None, :]
    keep = ((j >= i - left) if left is not None else True) & ((j <= i + right) if right is not None else True)
    keep = np.broadcast_to(keep, (sq, s))[None, None]
    kw: dict[str, Any] = {"is_causal": causal, "window": window, "layout": layout}
    if seg != "none":
        keep = keep & (qi[:, None, :, None] == ki[:, None, None, :])
        kw["segment_ids"] = jnp.asarray(qi) if seg == "shared" else (jnp.asarray(qi), jnp.asarray(ki))
    q, k, v = _sharded(arrs, dtype, layout)
    text = ua.explain("scaled_dot_product_attention", q, k, v, **kw).kernel
    if "structured mask at each block's global positions" not in text:
        raise AssertionError(f"a structured mask on a sharded sequence, explain says {text!r}")
    out = np.asarray(ua.scaled_dot_product_attention(q, k, v, **kw), np.float64)
    grads = jax.grad(lambda q, k, v: jnp.sum(ua.scaled_dot_product_attention(q, k, v, **kw) ** 2),
                     argnums=(0, 1, 2))(q, k, v)

    def dense(q: Any, k: Any, v: Any) -> Any:  # (B, S, H, D) under the dense mask, rows with no key zeros
        g = q.shape[2] // k.shape[2]
        k, v = jnp.repeat(k, g, axis=2), jnp.repeat(v, g, axis=2)
        sc = jnp.where(keep, jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1]), -jnp.inf)
        top = jax.lax.stop_gradient(jnp.max(sc, -1, keepdims=True))
        p = jnp.exp(sc - jnp.where(jnp.isfinite(top), top, 0))
        tot = jnp.sum(p, -1, keepdims=True)
        return jnp.einsum("bhqk,bkhd->bqhd", p / jnp.where(tot == 0, 1, tot), v)

    base = [jnp.asarray(a, dtype) for a in arrs]
    if layout == "bhsd":
        base = [jnp.swapaxes(a, 1, 2) for a in base]

    def total(q: Any, k: Any, v: Any) -> Any:
        o = dense(*((q, k, v) if layout == "bshd" else (jnp.swapaxes(a, 1, 2) for a in (q, k, v))))
        return jnp.sum(o ** 2)

    want = np.asarray(dense(*(jnp.asarray(a, dtype) for a in arrs)), np.float64)
    want = want if layout == "bshd" else np.swapaxes(want, 1, 2)
    wgrads = jax.grad(total, argnums=(0, 1, 2))(*base)
    eps = float(np.finfo(dtype).eps)
    scale = 1 + float(np.max(np.abs(want)))
    if not np.max(np.abs(out - want)) <= 64 * eps * scale:
        raise AssertionError(f"window {window}, segments {seg}: error {np.max(np.abs(out - want)):.3g}")
    for name, g, w in zip("qkv", grads, wgrads, strict=True):
        a, c = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if not np.max(np.abs(a - c)) <= 256 * eps * (1 + float(np.max(np.abs(c)))):
            raise AssertionError(f"d{name} under window {window}, segments {seg}: off by "
                                 f"{np.max(np.abs(a - c)):.3g}")
    return 1


EXAMPLES = {"structured_masks_equal_the_reference": 8, "groups_equal_one_group": 10, "one_group_below_the_row_floor": 2,
            "peak_under_one_device": 2,
            "count_bounds_the_temporaries": 8, "split_equals_the_ring": 8, "split_peak_under_one_device": 1,
            "split_count_bounds_the_temporaries": 8}


def main() -> None:
    # float64 inputs stay float64 (the reference's dtype); set here, not on import (see the module's docstring).
    jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]
    # The checks' shapes are small: the row floor (kept by _one_group_below_the_row_floor) would keep one group.
    ring.GROUP_MIN_ROWS = 0
    # The ring's checks are the ring's: a causal call on two devices would otherwise take the split (its own checks
    # set PREFER back to "auto" or "split" around their calls).
    ring.PREFER.set("ring")
    if len(jax.devices()) != 2:
        print(json.dumps({"check": "devices", "ok": False, "examples": 0, "error": f"{jax.devices()}"}))
        return
    for name, fn in _CHECKS:
        err, n = _run(fn, EXAMPLES[name])
        print(json.dumps({"check": name, "ok": err is None, "examples": n, "error": err}), flush=True)
