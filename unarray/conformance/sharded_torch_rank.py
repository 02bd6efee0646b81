"""What each rank of ``python -m unarray.conformance.sharded_torch`` runs (that module's docstring lists the
properties): the gloo process group and its 1-D mesh, the harness that agrees each example's verdict across
ranks, and the properties. Imported only in a rank's process, after the launcher found torch.distributed with gloo.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor

import unarray as ua
from unarray._backends.torch import attention_ring as ring
from unarray.conformance.cases_attention import sdpa_reference

__all__ = ["PROPERTIES", "run_property", "worker"]

PROPERTIES: list[tuple[str, Callable[..., None]]] = []


def worker(examples: int, only: str) -> int:
    """Join the process group and run the properties whose name contains ``only``; 0 when all held."""
    wait = float(os.environ.get("UA_GLOO_TIMEOUT", "60"))  # a rank that died leaves the others this long
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=wait))
    torch.set_num_threads(1)
    mesh = init_device_mesh("cpu", (dist.get_world_size(),), mesh_dim_names=("cp",))
    ok = True
    try:
        for name, prop in PROPERTIES:
            if only and only not in name:
                continue
            t0 = time.perf_counter()
            err, n = run_property(prop, mesh, examples)
            ok = ok and err is None
            if dist.get_rank() == 0:
                print(json.dumps({"property": name, "ok": err is None, "examples": n, "error": err,
                                  "seconds": round(time.perf_counter() - t0, 2)}), flush=True)
    finally:
        dist.barrier()
        dist.destroy_process_group()
    return 0 if ok else 1


def run_property(prop: Callable[..., None], mesh: Any, examples: int) -> tuple[str | None, int]:
    """Run ``prop(mesh, data)`` on ``examples`` derandomized draws, each verdict agreed across ranks: (the
    failure or None, the examples run)."""
    count = [0]

    def agreed(data: Any, seed: int) -> None:
        count[0] += 1
        err = None
        data.seed, data.count = seed, 0
        try:
            prop(mesh, data)
        except Exception as e:  # the verdict is shared below, then raised on every rank alike
            err = f"{type(e).__name__}: {e}"
            tb = traceback.format_exc()
        bad = torch.tensor([0 if err is None else 1], dtype=torch.int64)
        dist.all_reduce(bad, op=dist.ReduceOp.MAX)
        if err is not None:
            raise AssertionError(f"rank {dist.get_rank()}: {err}\n{tb}")
        if int(bad.item()):
            raise AssertionError("failed on another rank")

    test = settings(max_examples=examples, derandomize=True, database=None, deadline=None,
                    phases=[Phase.explicit, Phase.generate], print_blob=False,
                    suppress_health_check=list(HealthCheck))(given(st.data(), st.integers(0, 2**31 - 1))(agreed))
    try:
        test()
    except Exception as e:
        return f"{e}".strip()[:4000], count[0]
    return None, count[0]


def _property(fn: Callable[..., None]) -> Callable[..., None]:
    PROPERTIES.append((fn.__name__.lstrip("_"), fn))
    return fn


# -- helpers -------------------------------------------------------------------------------------

# (atol, rtol) against float64; bfloat16: the output's own rounding (8 bits) on values of order 1
_TOL = {"float32": (2e-5, 2e-4), "float64": (1e-12, 1e-10), "bfloat16": (1.6e-2, 1.6e-2)}


def _values(data: Any, shape: tuple[int, ...], dtype: str) -> Any:
    # Fresh values from the example's seed and a counter: no draw here, so every draw of a property is
    # made before any computation and every rank draws alike whatever fails.
    data.count += 1
    x = np.random.default_rng((data.seed, data.count)).standard_normal(shape)
    x[np.abs(x) < 1e-3] = 0.5  # never zeros: every element carries information
    return x.astype(dtype)


def _dist(x: Any, mesh: Any, placement: Any) -> Any:
    return distribute_tensor(torch.from_numpy(x.copy()), mesh, [placement])


def _placement(data: Any, ndim: int) -> Any:
    d = data.draw(st.integers(-1, ndim - 1), label="shard dim (-1: replicate)")
    return Replicate() if d < 0 else Shard(d)


def _close(got: Any, want: Any, dtype: str, what: str, native: Any = None) -> None:
    # With ``native`` (torch's own op on the same DTensors), the result's placements are also that one's.
    if not ring.is_dtensor(got):
        raise AssertionError(f"{what}: expected a DTensor, got {type(got).__name__}")
    g = got.full_tensor().to(torch.float64).numpy()
    atol, rtol = _TOL[dtype]
    if g.shape != np.shape(want):
        raise AssertionError(f"{what}: shape {g.shape} != {np.shape(want)}")
    if not np.allclose(g, want, atol=atol, rtol=rtol, equal_nan=True):
        err = float(np.max(np.abs(g - want)))
        raise AssertionError(f"{what}: max abs error {err:.3g} over atol={atol} rtol={rtol}")
    if native is not None:
        _same_placements(got, native, what)


def _same_placements(got: Any, native: Any, what: str) -> None:
    if tuple(got.placements) != tuple(native.placements):
        raise AssertionError(f"{what}: placements {tuple(got.placements)} != torch's {tuple(native.placements)}")


def _refused(call: Callable[[], Any], error: Any, fix: str, what: str) -> None:
    # ``call`` raises ``error``, whose message names ``fix``.
    try:
        call()
    except error as e:
        if fix not in str(e):
            raise AssertionError(f"the refusal of {what} names no fix ({fix}): {e}") from e
    else:
        raise AssertionError(f"{what} was not refused")


def _shape(data: Any, ndim: int, lo: int = 1, hi: int = 6) -> tuple[int, ...]:
    return tuple(data.draw(st.lists(st.integers(lo, hi), min_size=ndim, max_size=ndim), label="shape"))


# -- properties ------------------------------------------------------------------------------------

@_property
def _matmul(mesh: Any, data: Any) -> None:
    m, k, n = _shape(data, 3, 1, 9)
    dtype = data.draw(st.sampled_from(["float32", "float64"]), label="dtype")
    a, b = _values(data, (m, k), dtype), _values(data, (k, n), dtype)
    kind = data.draw(st.sampled_from(["rows", "cols", "contraction"]), label="sharding")
    pa, pb = {"rows": (Shard(0), Replicate()), "cols": (Replicate(), Shard(1)),
              "contraction": (Shard(1), Shard(0))}[kind]
    da, db = _dist(a, mesh, pa), _dist(b, mesh, pb)
    got = ua.matmul(da, db)
    _close(got, a.astype(np.float64) @ b.astype(np.float64), dtype, f"matmul {kind}", torch.matmul(da, db))


@_property
def _reductions(mesh: Any, data: Any) -> None:
    shape = _shape(data, 3, 1, 5)
    dtype = data.draw(st.sampled_from(["float32", "float64"]), label="dtype")
    pl = _placement(data, 3)
    axis = data.draw(st.sampled_from([None, 0, 1, 2, -1, (0, 2), (1, 2), (0, 1, 2)]), label="axis")
    keep = data.draw(st.booleans(), label="keepdims")
    ax = data.draw(st.sampled_from([0, 1, 2]), label="argmax axis")
    x = _values(data, shape, dtype)
    dx = _dist(x, mesh, pl)
    ref = x.astype(np.float64)
    for name, got, want, native in [
        ("sum", ua.sum(dx, axis=axis, keepdims=keep), np.sum(ref, axis=axis, keepdims=keep),
         torch.sum(dx, dim=axis, keepdim=keep)),
        ("mean", ua.mean(dx, axis=axis, keepdims=keep), np.mean(ref, axis=axis, keepdims=keep),
         torch.mean(dx, dim=axis, keepdim=keep)),
    ]:
        _close(got, want, dtype, f"{name} axis={axis}", native)
    n = int(np.prod([shape[a] for a in (range(3) if axis is None else np.atleast_1d(axis))]))
    if n > 1:
        for name, f, t in [("var", ua.var, torch.var), ("std", ua.std, torch.std)]:
            got = f(dx, axis=axis, correction=1, keepdims=keep)
            _close(got, getattr(np, name)(ref, axis=axis, ddof=1, keepdims=keep), dtype, f"{name} axis={axis}",
                   t(dx, dim=axis, correction=1, keepdim=keep))
    reduced = range(3) if axis is None else [a % 3 for a in np.atleast_1d(axis)]
    # Some rank holds none of the sharded dimension: reducing over it is refused alike on every rank.
    empty = pl.is_shard() and -(-shape[pl.dim] // mesh.size()) * (mesh.size() - 1) >= shape[pl.dim]
    if empty and pl.dim in reduced:
        _refused(lambda: ua.max(dx, axis=axis), ua.ShapeError, "", f"max over axis={axis} with an empty shard")
    else:
        got = ua.max(dx, axis=axis, keepdims=keep)
        _close(got, np.max(ref, axis=axis, keepdims=keep), dtype, f"max axis={axis}",
               torch.amax(dx, dim=tuple(reduced), keepdim=keep))
    if empty and pl.dim == ax:
        _refused(lambda: ua.argmax(dx, axis=ax), ua.ShapeError, "", f"argmax over dimension {ax} with an empty shard")
        return
    got = ua.argmax(dx, axis=ax)
    want = np.argmax(ref, axis=ax)
    if not np.array_equal(got.full_tensor().numpy(), want):
        raise AssertionError(f"argmax axis={ax}: {got.full_tensor().numpy()} != {want}")
    _same_placements(got, torch.argmax(dx, dim=ax), f"argmax axis={ax}")


@_property
def _elementwise_and_permute(mesh: Any, data: Any) -> None:
    shape = _shape(data, 3, 1, 5)
    dtype = data.draw(st.sampled_from(["float32", "float64"]), label="dtype")
    px, py, pm = _placement(data, 3), _placement(data, 3), _placement(data, 3)
    perm = tuple(data.draw(st.permutations(range(3)), label="axes"))
    x, y = _values(data, shape, dtype), _values(data, shape, dtype)
    dx, dy = _dist(x, mesh, px), _dist(y, mesh, py)
    rx, ry = x.astype(np.float64), y.astype(np.float64)
    for name, got, want, native in [
        ("add", ua.add(dx, dy), rx + ry, torch.add(dx, dy)),
        ("multiply scalar", ua.multiply(dx, 2.5), rx * 2.5, torch.mul(dx, 2.5)),
        ("exp", ua.exp(dx), np.exp(rx), torch.exp(dx)),
        ("tanh", ua.tanh(dy), np.tanh(ry), torch.tanh(dy)),
    ]:
        _close(got, want, dtype, name, native)
    got = ua.permute_dims(dx, perm)
    _close(got, np.transpose(rx, perm), dtype, f"permute_dims {perm}", torch.permute(dx, perm))
    # Promotion follows the standard: float32 with float64 is float64.
    mixed = ua.add(_dist(x.astype("float32"), mesh, pm), dy.to(torch.float64))
    if mixed.dtype != torch.float64:
        raise AssertionError(f"float32 + float64 DTensors gave {mixed.dtype}")


@_property
def _device_handoff_mixing(mesh: Any, data: Any) -> None:
    shape, pl = _shape(data, 2, 2, 6), _placement(data, 2)
    x = _values(data, shape, "float32")
    dx = _dist(x, mesh, pl)
    d = ua.device(dx)
    if not isinstance(d, ua.MeshDevice) or d.placements != (repr(pl),) or d.mesh_shape != tuple(mesh.shape):
        raise AssertionError(f"ua.device gave {d!r} for placements {pl}")
    if d.local != ua.device(dx.to_local()):
        raise AssertionError(f"ua.device(x).local {d.local} != the local shard's {ua.device(dx.to_local())}")
    # Note: NumPy only: importing another framework here would cost more than the check (every target
    # goes through the same refusal, unarray/interop/_routes.check_source).
    _refused(lambda: ua.to(dx, "numpy"), ua.HandoffError, "full_tensor", "ua.to(DTensor, 'numpy')")
    for other in (torch.from_numpy(x.copy()), x):
        for args in ((dx, other), (other, dx)):  # the DTensor leads wherever it is
            _refused(functools.partial(ua.add, *args), (ua.ArgumentTypeError, ua.DeviceMismatchError), "mesh",
                     f"a DTensor mixed with a plain {type(other).__name__}")
    if not np.array_equal(dx.full_tensor().numpy(), x):
        raise AssertionError("the input changed")


@_property
def _attention(mesh: Any, data: Any) -> None:
    w = mesh.size()
    layout = data.draw(st.sampled_from(["bhsd", "bshd"]), label="layout")
    causal = data.draw(st.booleans(), label="is_causal")
    hk = data.draw(st.sampled_from([1, 2]), label="Hk")
    hq = hk * data.draw(st.sampled_from([1, 2]), label="group")
    d = data.draw(st.sampled_from([4, 8]), label="D")
    dv = data.draw(st.sampled_from([d, d, 6]), label="Dv")
    sq = data.draw(st.sampled_from([2 * w, 4 * w, 3 * w + 1]), label="Sq")
    sk = data.draw(st.sampled_from([sq, sq, 2 * w + 3]), label="Sk")
    with_mask = data.draw(st.booleans(), label="mask")
    dtype = data.draw(st.sampled_from(["float32", "float64", "bfloat16"]), label="dtype")
    route = data.draw(st.sampled_from(["auto", "ring"]), label="route")
    b = 2
    store = "float32" if dtype == "bfloat16" else dtype
    q, k, v = (_values(data, (b, h, s, e), store) for h, s, e in ((hq, sq, d), (hk, sk, d), (hk, sk, dv)))
    if dtype == "bfloat16":  # the reference takes the bf16-rounded values
        q, k, v = (torch.from_numpy(a).to(torch.bfloat16).to(torch.float64).numpy() for a in (q, k, v))
    mask = (np.random.default_rng(sq * 7 + sk).random((hq, sq, sk)) > 0.3) if with_mask else None
    want = sdpa_reference(q.astype("float64"), k.astype("float64"), v.astype("float64"), mask, causal)
    seq = 2 if layout == "bhsd" else 1
    dq, dk, dv_ = (_dist(a if layout == "bhsd" else a.swapaxes(1, 2), mesh, Shard(seq)) for a in (q, k, v))
    if dtype == "bfloat16":
        dq, dk, dv_ = (a.to(torch.bfloat16) for a in (dq, dk, dv_))
    dm = None if mask is None else _dist(mask, mesh, Replicate())
    with ring.prefer(route):
        got = ua.scaled_dot_product_attention(dq, dk, dv_, mask=dm, is_causal=causal, layout=layout)
        how = ua.explain("scaled_dot_product_attention", dq, dk, dv_, mask=dm, is_causal=causal, layout=layout)
    if tuple(got.placements) != (Shard(seq),):
        raise AssertionError(f"attention output placements {tuple(got.placements)}, want Shard({seq})")
    if layout == "bshd":
        want = want.transpose(0, 2, 1, 3)
    _close(got, want, dtype, f"attention ({route})")
    text = str(how)
    if "ring attention" not in text and "context parallel" not in text:
        raise AssertionError(f"ua.explain does not name the DTensor route: {text}")
    if route == "ring" and "unarray ring attention" not in text:
        raise AssertionError(f"route 'ring' was asked for, explain says: {text}")
    cp = route == "auto" and causal and mask is None and sq == sk and sq % (2 * w) == 0 and hq == hk and dv == d
    if cp != ("torch context parallel" in text):
        raise AssertionError(f"torch's context parallel {'applies' if cp else 'does not apply'}; explain says: {text}")


@_property
def _attention_heads_sharded(mesh: Any, data: Any) -> None:
    w = mesh.size()
    causal = data.draw(st.booleans(), label="is_causal")
    s = data.draw(st.integers(1, 7), label="S")
    q, k, v = (_values(data, (1, 2 * w, s, 8), "float64") for _ in range(3))
    dq, dk, dv = (_dist(a, mesh, Shard(1)) for a in (q, k, v))
    got = ua.scaled_dot_product_attention(dq, dk, dv, is_causal=causal)
    _close(got, sdpa_reference(q, k, v, is_causal=causal), "float64", "attention, heads sharded")
    if tuple(got.placements) != (Shard(1),):
        raise AssertionError(f"placements {tuple(got.placements)}")
    if "per-shard" not in str(ua.explain("scaled_dot_product_attention", dq, dk, dv, is_causal=causal)):
        raise AssertionError("explain does not say per-shard")
    # Gradients: the per-shard route is differentiable; its gradients equal the unsharded call's.
    gq, gk, gv = (a.detach().requires_grad_() for a in (dq, dk, dv))
    (ua.scaled_dot_product_attention(gq, gk, gv, is_causal=causal) ** 2).sum().backward()
    fq, fk, fv = (torch.from_numpy(a.copy()).requires_grad_() for a in (q, k, v))
    loss = (torch.nn.functional.scaled_dot_product_attention(fq, fk, fv, is_causal=causal) ** 2).sum()
    torch.autograd.backward([loss])
    for name, mine, ref in (("q", gq, fq), ("k", gk, fk), ("v", gv, fv)):
        g = mine.grad.full_tensor() if mine.grad is not None else None
        if g is None or ref.grad is None or not torch.allclose(g, ref.grad, atol=1e-10, rtol=1e-8):
            raise AssertionError(f"gradient of {name} through per-shard DTensor attention differs")


@_property
def _attention_refuses_gradients_through_the_ring(mesh: Any, data: Any) -> None:
    w = mesh.size()
    causal = data.draw(st.booleans(), label="is_causal")
    q, k, v = (_values(data, (1, 2, 2 * w, 4), "float64") for _ in range(3))
    dq, dk, dv = (_dist(a, mesh, Shard(2)).requires_grad_() for a in (q, k, v))
    _refused(lambda: ua.scaled_dot_product_attention(dq, dk, dv, is_causal=causal), ua.UnsupportedError,
             "context_parallel", "sequence-sharded attention with requires_grad inputs")

