"""Sharded JAX conformance: Hypothesis properties over JAX arrays with a ``NamedSharding`` on fake host devices.

JAX fixes its device count when it is first imported, so this runs in a process of its own
(``python -m unarray.conformance.sharded_jax``, or :func:`main` in a process that has not imported JAX):
it sets ``XLA_FLAGS=--xla_force_host_platform_device_count=4`` and JAX's x64 mode (float64 references), then
checks, each as a named property:

- ``hot_ops``: every hot op on a sharded array equals the float64 NumPy reference within the dtype's
  tolerance, and its result carries exactly the sharding of ``jax.numpy``'s own op, eagerly and under
  ``jax.jit``, with per-device buffers of the shard's shape (nothing gathered to one device);
- ``attention``: sequence-sharded attention (causal or not, grouped-query heads, both layouts, batch or head
  axes sharded too) runs the ring (``ua.explain`` says so), equals the float64 reference, keeps q's sharding;
- ``attention_grad``: ``jax.grad`` through the ring equals ``jax.grad`` of the unsharded call;
- ``attention_jit``: under ``jax.jit`` on a mesh of Explicit axes the ring is traced in (values, gradients);
- ``mixed``: an eager NumPy array joining a sharded one gives JAX's own result sharding (no gather);
- ``device``: ``ua.device`` describes the mesh, spec and devices, and ``ua.to(..., device=that)`` rebuilds it;
- ``mesh_mismatch``: operands on different meshes raise ``DeviceMismatchError`` naming the op and backend;
- ``nan_reductions``: a NaN at a random place (so in a random shard), every reduction, cumulative op and norm
  gives what the unsharded array gives and the float64 NumPy reference (NaN where NaN propagates, the first
  NaN's index for argmax/argmin), eagerly and under ``jax.jit``.

Prints one JSON object ``{"results": [{"property", "ok", "examples", "error"}...], "devices": n}`` and
returns 0 when every property held.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import numpy as np

import unarray as ua
from unarray.conformance.cases_attention import sdpa_reference

DEVICES = 4
EXAMPLES = 3
# Properties whose every example compiles a large program run fewer examples.
_FEWER = {"attention_grad": 2, "attention_jit": 1, "mesh_mismatch": 2}


def _setup() -> str | None:
    if "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_force_host_platform_device_count" not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={DEVICES}".strip()
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]
    if len(jax.devices()) < DEVICES:
        return (f"needs {DEVICES} JAX devices, found {len(jax.devices())}: JAX was imported before the flag was "
                "set; run `python -m unarray.conformance.sharded_jax` in a fresh process")
    return None


def _tol(dtype: Any, k: int = 1) -> float:
    # The dtype's rounding, grown with the reduction length k (sums of k terms round k times).
    eps = 2.0**-8 if str(dtype) == "bfloat16" else float(np.finfo(np.dtype(str(dtype))).eps)
    return 8 * eps * max(1.0, float(np.sqrt(k)))


def _close(got: Any, want: np.ndarray, dtype: Any, k: int, what: str) -> None:
    g = np.asarray(got, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    err = float(np.abs(g - want).max(initial=0.0))
    if not err <= _tol(dtype, k) * scale:
        raise AssertionError(f"{what}: max error {err:.3g} > {_tol(dtype, k) * scale:.3g} ({dtype})")


def _unsplit(x: Any, what: str, devices: int) -> None:
    # No gather: the result spans the input's devices, each holding a buffer of its shard's shape.
    sh = x.sharding
    if len(sh.device_set) != devices:
        raise AssertionError(f"{what}: result on {len(sh.device_set)} devices, the input on {devices}")
    want = sh.shard_shape(x.shape)
    for s in x.addressable_shards:
        if tuple(s.data.shape) != tuple(want):
            raise AssertionError(f"{what}: a device holds {s.data.shape}, its shard is {want}")


def _same_sharding(got: Any, native: Any, what: str) -> None:
    if got.sharding != native.sharding and not got.sharding.is_equivalent_to(native.sharding, native.ndim):
        raise AssertionError(f"{what}: sharding {got.sharding} where jax.numpy gives {native.sharding}")


def _meshes() -> dict[str, Any]:
    import jax
    from jax.sharding import Mesh

    d = np.array(jax.devices()[:DEVICES], dtype=object)
    return {"xy": Mesh(d.reshape(2, 2), ("x", "y")), "s": Mesh(d, ("s",)),
            "a": Mesh(d[:2], ("x",)), "b": Mesh(d[2:], ("x",))}


def _put(a: Any, mesh: str, spec: tuple[Any, ...]) -> Any:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    P: Any = PartitionSpec
    return jax.device_put(a, NamedSharding(_meshes()[mesh], P(*spec)))


# (name, unarray call, jax.numpy call, reduction length of a (8, 8) input)
def _ops() -> list[tuple[str, Callable[[Any], Any], Callable[[Any], Any], Callable[[np.ndarray], Any], int]]:
    import jax
    import jax.numpy as jnp

    return [
        ("matmul", lambda a: ua.matmul(a, a), lambda a: jnp.matmul(a, a), lambda a: a @ a, 8),
        ("sum", lambda a: ua.sum(a, axis=0), lambda a: jnp.sum(a, axis=0), lambda a: a.sum(0), 8),
        ("mean", lambda a: ua.mean(a), lambda a: jnp.mean(a), lambda a: a.mean(), 64),
        ("var", lambda a: ua.var(a, axis=1), lambda a: jnp.var(a, axis=1), lambda a: a.var(1), 8),
        ("std", lambda a: ua.std(a, axis=0), lambda a: jnp.std(a, axis=0), lambda a: a.std(0), 8),
        ("max", lambda a: ua.max(a, axis=1), lambda a: jnp.max(a, axis=1), lambda a: a.max(1), 1),
        ("argmax", lambda a: ua.argmax(a, axis=1), lambda a: jnp.argmax(a, axis=1), lambda a: a.argmax(1), 1),
        ("permute_dims", lambda a: ua.permute_dims(a, (1, 0)), lambda a: jnp.permute_dims(a, (1, 0)),
         lambda a: a.T, 1),
        ("exp", lambda a: ua.exp(a), lambda a: jnp.exp(a), np.exp, 1),
        ("add", lambda a: ua.add(a, a), lambda a: jnp.add(a, a), lambda a: a + a, 1),
        ("multiply", lambda a: ua.multiply(a, 2.5), lambda a: jnp.multiply(a, 2.5), lambda a: a * 2.5, 1),
        ("where", lambda a: ua.where(a > 0, a, 0.0), lambda a: jnp.where(a > 0, a, 0.0),
         lambda a: np.where(a > 0, a, 0.0), 1),
        ("softmax", lambda a: ua.nn.softmax(a, axis=-1), lambda a: jax.nn.softmax(a, axis=-1),
         lambda a: np.exp(a - a.max(-1, keepdims=True)) / np.exp(a - a.max(-1, keepdims=True)).sum(-1,
                                                                                                  keepdims=True), 8),
        ("zeros_like", lambda a: ua.zeros_like(a), lambda a: jnp.zeros_like(a), np.zeros_like, 1),
    ]


def hot_ops(seed: int, spec_i: int, dtype: str) -> None:
    import jax

    spec = [("x", "y"), ("x", None), (None, "y"), (("x", "y"), None)][spec_i]
    a64 = np.random.default_rng(seed).standard_normal((8, 8)) + 0.25
    x = _put(a64.astype(dtype), "xy", spec)
    ref_in = np.asarray(x, dtype=np.float64)
    for name, ua_f, jnp_f, np_f, k in _ops():
        what = f"{name} on P{spec} {dtype}"
        got, native = ua_f(x), jnp_f(x)
        want = np.asarray(np_f(ref_in), dtype=np.float64)
        if name == "argmax":
            if not np.array_equal(np.asarray(got), want):
                raise AssertionError(f"{what}: {np.asarray(got)} != {want}")
        else:
            _close(got, want, dtype, k, what)
        _same_sharding(got, native, what)
        _unsplit(got, what, len(native.sharding.device_set))
        _same_sharding(jax.jit(ua_f)(x), jax.jit(jnp_f)(x), what + " under jax.jit")


def _attention_inputs(seed: int, where: int, gqa: bool, layout: str, dtype: str) -> tuple[Any, ...]:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    P: Any = PartitionSpec

    meshes = _meshes()
    # (mesh, spec in bshd order): sequence only over 4; batch and sequence over 2 x 2; sequence and heads.
    options: list[tuple[Any, tuple[str | None, ...]]] = [
        (meshes["s"], (None, "s", None, None)), (meshes["xy"], ("x", "y", None, None)),
        (meshes["xy"], (None, "x", "y", None))]
    mesh, spec = options[where]
    b, s, h, d = 2, 16, 4, 8
    hk = 2 if gqa else 4
    rng = np.random.default_rng(seed)
    shapes = [(b, s, h, d), (b, s, hk, d), (b, s, hk, d)]
    arrs = [rng.standard_normal(sh).astype(dtype) for sh in shapes]
    if layout == "bhsd":
        arrs = [np.swapaxes(a, 1, 2) for a in arrs]
        spec = (spec[0], spec[2], spec[1], spec[3])
    sharding = NamedSharding(mesh, P(*spec))
    return tuple(jax.device_put(a, sharding) for a in arrs) + (sharding, spec[1 if layout == "bshd" else 2])


def attention(seed: int, where: int, causal: bool, gqa: bool, layout: str, dtype: str) -> None:
    q, k, v, sharding, axis = _attention_inputs(seed, where, gqa, layout, dtype)
    what = f"attention causal={causal} gqa={gqa} {layout} {sharding.spec} {dtype}"
    kernel = ua.explain("scaled_dot_product_attention", q, k, v, is_causal=causal, layout=layout).kernel
    # a causal call over two devices takes the two-device split (below its row count), any other the ring
    split = causal and sharding.mesh.shape[axis] == 2
    order = "two-device split" if split else "zigzag causal" if causal else "non-causal"
    route = f"two-device split over mesh axis {axis!r}" if split else f"ring attention over mesh axis {axis!r}"
    if route not in kernel or order not in kernel:
        raise AssertionError(f"{what}: explain names {kernel!r}, not the {route} ({order})")
    out = ua.scaled_dot_product_attention(q, k, v, is_causal=causal, layout=layout)
    q64, k64, v64 = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    want = sdpa_reference(q64, k64, v64, is_causal=causal, layout=layout)
    _close(out, want, dtype, 16, what)
    if out.sharding != sharding:
        raise AssertionError(f"{what}: output sharding {out.sharding}, q's is {sharding}")
    _unsplit(out, what, len(sharding.device_set))


def attention_grad(seed: int, where: int, causal: bool, gqa: bool, layout: str) -> None:
    import jax
    import jax.numpy as jnp

    q, k, v, sharding, _ = _attention_inputs(seed, where, gqa, layout, "float64")
    w = jnp.asarray(np.random.default_rng(seed + 1).standard_normal(q.shape[:-1] + (v.shape[-1],)))

    def loss(q: Any, k: Any, v: Any) -> Any:
        return jnp.sum(ua.scaled_dot_product_attention(q, k, v, is_causal=causal, layout=layout) * w)

    got = jax.grad(loss, argnums=(0, 1, 2))(q, k, v)
    plain = [jax.device_put(np.asarray(a), jax.devices()[0]) for a in (q, k, v)]
    want = jax.grad(loss, argnums=(0, 1, 2))(*plain)
    for name, g, r in zip("qkv", got, want, strict=True):
        what = f"d{name} causal={causal} gqa={gqa} {layout} {sharding.spec}"
        _close(g, np.asarray(r), "float64", 16, what)
        if len(g.sharding.device_set) != len(sharding.device_set):
            raise AssertionError(f"{what}: gradient on {len(g.sharding.device_set)} devices")


def attention_jit(seed: int, causal: bool, gqa: bool) -> None:
    # Under jax.jit a mesh of Explicit axes types the tracers: the ring is traced into the program
    # (its ppermutes are in the jaxpr), values and gradients equal the float64 reference / unsharded grad.
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec

    P: Any = PartitionSpec
    mesh = jax.make_mesh((2, 2), ("b", "s"), axis_types=(AxisType.Explicit,) * 2)
    sh = NamedSharding(mesh, P("b", "s"))
    rng = np.random.default_rng(seed)
    hk = 2 if gqa else 4
    arrs = [rng.standard_normal(shape) for shape in ((2, 16, 4, 8), (2, 16, hk, 8), (2, 16, hk, 8))]
    q, k, v = (jax.device_put(a, sh) for a in arrs)

    def f(q: Any, k: Any, v: Any) -> Any:
        return ua.scaled_dot_product_attention(q, k, v, is_causal=causal, layout="bshd")

    what = f"jit attention causal={causal} gqa={gqa} on an Explicit mesh"
    if "ppermute" not in str(jax.make_jaxpr(f)(q, k, v)):
        raise AssertionError(f"{what}: no ring (no ppermute) in the traced program")
    out = jax.jit(f)(q, k, v)
    _close(out, sdpa_reference(arrs[0], arrs[1], arrs[2], is_causal=causal, layout="bshd"), "float64", 16, what)
    if out.sharding.spec != P("b", "s", None, None) and out.sharding.spec != P("b", "s"):
        raise AssertionError(f"{what}: output spec {out.sharding.spec}")

    def loss(q: Any, k: Any, v: Any) -> Any:
        return jnp.sum(f(q, k, v) ** 2)

    got = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(q, k, v)
    want = jax.grad(loss, argnums=(0, 1, 2))(*(jax.device_put(a, jax.devices()[0]) for a in arrs))
    for name, g, r in zip("qkv", got, want, strict=True):
        _close(g, np.asarray(r), "float64", 16, f"d{name} of {what}")


def device(seed: int, spec_i: int) -> None:
    spec = [("x", "y"), (None, "y"), (("x", "y"),), ("y", "x")][spec_i]
    x = _put(np.random.default_rng(seed).standard_normal((4, 8)), "xy", spec)
    d = ua.device(x)
    entries = spec + (None,) * (2 - len(spec))
    want_spec = tuple(None if e is None else (e,) if isinstance(e, str) else tuple(e) for e in entries)
    if not isinstance(d, ua.ShardedDevice) or d.mesh != (("x", 2), ("y", 2)) or d.spec != want_spec \
            or d.device_ids != tuple(int(dv.id) for dv in _meshes()["xy"].devices.flat) or d.kind != "cpu":
        raise AssertionError(f"ua.device gave {d!r} for {x.sharding}")
    if "mesh('x': 2, 'y': 2)" not in str(d) or d == ua.Device("cpu"):
        raise AssertionError(f"ua.device prints {d} and equals a single device: {d == ua.Device('cpu')}")
    back = ua.to(np.asarray(x), "jax", device=d)
    if ua.device(back) != d or not np.array_equal(np.asarray(back), np.asarray(x)):
        raise AssertionError(f"ua.to(..., device={d}) placed it at {ua.device(back)}")


def mesh_mismatch(seed: int) -> None:
    a = np.random.default_rng(seed).standard_normal((4, 4, 2, 2))
    x, y = _put(a, "a", ("x",)), _put(a, "b", ("x",))
    calls: list[tuple[str, Callable[[], Any]]] = [
        ("add", lambda: ua.add(x, y)), ("matmul", lambda: ua.matmul(x, y)),
        ("scaled_dot_product_attention", lambda: ua.scaled_dot_product_attention(x, y, y, layout="bshd")),
    ]
    for op, call in calls:
        try:
            call()
        except ua.DeviceMismatchError as e:
            if e.op != op or e.backend != "jax" or "mesh" not in str(e):
                raise AssertionError(f"{op}: error names op={e.op} backend={e.backend}: {e}") from None
        else:
            raise AssertionError(f"{op} on two meshes raised nothing")


def mixed(seed: int, spec_i: int) -> None:
    import jax.numpy as jnp

    spec = [("x", "y"), (None, "y"), (("x", "y"),)][spec_i]
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((8, 4)), rng.standard_normal((8, 4))
    x = _put(a, "xy", spec)
    # An eager NumPy array joins the sharded one (either side): replicated on its mesh, as JAX places it.
    for what, got, native in [("add(sharded, numpy)", ua.add(x, b), jnp.add(x, b)),
                              ("multiply(numpy, sharded)", ua.multiply(b, x), jnp.multiply(b, x)),
                              ("matmul(sharded, numpy)", ua.matmul(x, b.T), jnp.matmul(x, b.T))]:
        want = {"add": a + b, "multiply": b * a, "matmul": a @ b.T}[what.partition("(")[0]]
        _close(got, want, "float64", 4, what)
        _same_sharding(got, native, what)
        _unsplit(got, what, len(native.sharding.device_set))


# (name, unarray call, NumPy reference) of the ops through which a NaN must propagate, per axis.
def _nan_ops(axis: int | None) -> list[tuple[str, Callable[[Any], Any], Callable[[np.ndarray], Any]]]:
    inf = float("inf")
    # (name, the op in both namespaces, its keywords)
    reductions = ("max", "min", "sum", "prod", "mean", "argmax", "argmin")
    calls: list[tuple[str, str, dict[str, Any]]] = [(name, name, {"axis": axis}) for name in reductions]
    calls += [(f"vector_norm {o:g}", "linalg.vector_norm", {"axis": axis, "ord": o}) for o in (inf, -inf)]
    if axis is not None:
        calls += [(name, name, {"axis": axis}) for name in ("cumulative_sum", "cumulative_prod")]
    else:
        calls += [(f"matrix_norm {o:g}", "linalg.matrix_norm", {"ord": o}) for o in (inf, 1)]
    return [(name, functools.partial(attrgetter(op)(ua), **kw), functools.partial(attrgetter(op)(np), **kw))
            for name, op, kw in calls]


def nan_reductions(seed: int, spec_i: int, axis: int | None, dtype: str, extra: int) -> None:
    import jax

    spec = [("x", "y"), (("x", "y"), None), (None, ("x", "y")), ("y", None)][spec_i]
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, (8, 8)) * rng.choice([-1.0, 1.0], (8, 8))
    a[tuple(rng.integers(0, 8, 2))] = np.nan
    for _ in range(extra):  # more NaN, or an infinity that must not win over a NaN
        a[tuple(rng.integers(0, 8, 2))] = rng.choice([np.nan, np.inf, -np.inf])
    x = _put(a.astype(dtype), "xy", spec)
    plain = jax.device_put(a.astype(dtype), jax.devices()[0])
    ref_in = np.asarray(plain, dtype=np.float64)
    for name, ua_f, np_f in _nan_ops(axis):
        _nan_matches(name, ua_f, np_f, x, plain, ref_in, f"{name} axis={axis} on P{spec} {dtype}", dtype)


def _nan_matches(name: str, ua_f: Callable[[Any], Any], np_f: Callable[[np.ndarray], Any], x: Any, plain: Any,
                 ref_in: np.ndarray, what: str, dtype: str) -> None:
    import jax

    with np.errstate(all="ignore"):  # inf - inf and the NaN themselves
        want = np.asarray(np_f(ref_in))
        for how, got in (("eager", ua_f(x)), ("jit", jax.jit(ua_f)(x)), ("unsharded", ua_f(plain))):
            g = np.asarray(got, dtype=np.float64)
            if name.startswith("arg"):
                if not np.array_equal(g, want):
                    raise AssertionError(f"{what} ({how}): {g} != {want}")
                continue
            if not np.array_equal(np.isnan(g), np.isnan(want)):
                raise AssertionError(f"{what} ({how}): NaN at {np.argwhere(np.isnan(g)).tolist()}, the reference "
                                     f"has it at {np.argwhere(np.isnan(want)).tolist()}")
            ok = ~np.isnan(want)
            # The rounding of a sum scales with the sum of magnitudes (cancellation leaves a small result).
            bound = np.maximum(np.abs(want), np.abs(np.asarray(np_f(np.abs(ref_in)))))[ok]
            if not np.all((g[ok] == want[ok]) | (np.abs(g[ok] - want[ok]) <= _tol(dtype, 8) * bound)):
                raise AssertionError(f"{what} ({how}): {g} != {want}")


def _properties() -> list[tuple[str, Callable[..., None], Any]]:
    from hypothesis import strategies as st

    seeds = st.integers(0, 2**31 - 1)
    return [
        ("hot_ops", hot_ops, (seeds, st.integers(0, 3), st.sampled_from(["float32", "float64"]))),
        ("attention", attention, (seeds, st.integers(0, 2), st.booleans(), st.booleans(),
                                  st.sampled_from(["bshd", "bhsd"]), st.sampled_from(["float32", "float64"]))),
        ("attention_grad", attention_grad, (seeds, st.integers(0, 2), st.booleans(), st.booleans(),
                                            st.sampled_from(["bshd", "bhsd"]))),
        ("attention_jit", attention_jit, (seeds, st.booleans(), st.booleans())),
        ("mixed", mixed, (seeds, st.integers(0, 2))),
        ("device", device, (seeds, st.integers(0, 3))),
        ("mesh_mismatch", mesh_mismatch, (seeds,)),
        ("nan_reductions", nan_reductions, (seeds, st.integers(0, 3), st.sampled_from([0, 1, None]),
                                            st.sampled_from(["float32", "float64"]), st.integers(0, 3))),
    ]


def _check(name: str, fn: Callable[..., None], strategies: Any, examples: int) -> dict[str, Any]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    count = [0]

    def prop(args: tuple[Any, ...]) -> None:
        count[0] += 1
        try:
            fn(*args)
        except Exception as e:
            raise AssertionError(f"{name}{args}: {type(e).__name__}: {e}") from e

    # Note: no shrinking: each new shape or configuration compiles (seconds); the failing example is named.
    test = settings(max_examples=examples, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=list(HealthCheck))(given(st.tuples(*strategies))(prop))
    start, error = time.perf_counter(), None
    try:
        test()
    except Exception as e:
        error = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"
    return {"property": name, "ok": error is None, "examples": count[0], "error": error,
            "seconds": round(time.perf_counter() - start, 2)}


def main(argv: list[str] | None = None) -> int:
    """Run every property; print the JSON report; 0 when all held.

    Parameters
    ----------
    argv : list of str, optional
        ``--examples N`` (Hypothesis examples per property, default 4) and ``--only NAME`` (repeatable).

    Returns
    -------
    int
        0 when every property held, 1 otherwise (2 when the process cannot make the fake devices).

    Raises
    ------
    ValueError
        ``--examples`` not followed by an integer. A failing property raises nothing: it is reported.

    Examples
    --------
    In a fresh process (JAX must not be imported yet), one property, one example:

    >>> import json, subprocess, sys
    >>> cmd = [sys.executable, "-m", "unarray.conformance.sharded_jax", "--only", "mesh_mismatch", "--examples", "1"]
    >>> env = {k: v for k, v in __import__("os").environ.items() if k != "XLA_FLAGS"}
    >>> proc = subprocess.run(cmd, capture_output=True, text=True, env={**env, "JAX_PLATFORMS": "cpu"})
    >>> report = json.loads(proc.stdout.splitlines()[-1])
    >>> [(r["property"], r["ok"]) for r in report["results"]], report["devices"], proc.returncode
    ([('mesh_mismatch', True)], 4, 0)
    """
    args = list(sys.argv[1:] if argv is None else argv)
    examples, only = EXAMPLES, []
    while args:
        flag = args.pop(0)
        if flag == "--examples":
            examples = int(args.pop(0))
        elif flag == "--only":
            only.append(args.pop(0))
    why = _setup()
    if why is not None:
        print(json.dumps({"results": [], "error": why}))
        return 2
    import jax

    results = [_check(n, f, s, min(examples, _FEWER.get(n, examples))) for n, f, s in _properties()
               if not only or n in only]
    print(json.dumps({"results": results, "devices": len(jax.devices())}))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
