# Ring attention for JAX arrays whose sequence axis is sharded over a mesh axis: q, k and v stay where they
# are; inside jax.shard_map each device holds S/N rows of q and passes its key/value block around the ring
# (jax.lax.ppermute, issued before the block's compute so XLA can overlap the transfer), merging the
# block results by their log-sum-exp (online softmax). With a causal mask the sequence is first laid out
# "zigzag" (device i holds chunks i and 2N-1-i of 2N), so every device computes the same number of
# unmasked blocks (the contiguous layout leaves device 0 one block and device N-1 N blocks); the result is
# put back in the caller's layout. Batch and head sharding ride along (the shard_map keeps q's whole
# partition spec). Gradients: a custom VJP that runs the ring again backwards (dK/dV accumulators travel
# with their blocks), from the saved per-row log-sum-exp: nothing of size S x S is kept.
# Local kernel per block: cuDNN's fused attention (jax._src.cudnn, which returns the softmax statistics
# when asked for its residuals) on NVIDIA GPUs for float16/bfloat16 with D == Dv <= 128, D % 8 == 0;
# elsewhere, and for the backward pass, jnp math over key sub-blocks of SUB_BLOCK (a lax.scan with an
# online softmax), so memory stays bounded by the block size, never by S. This module plans, compiles and
# runs the call; the ring's compute is ring_blocks.py, and a causal call on two devices may take the
# two-device split instead (attention_split.py).
from __future__ import annotations

import contextvars
import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from unarray._backends import ring_memory
from unarray._backends._nn import HALF
from unarray._backends.jax import attention_split
from unarray._backends.jax import ring_blocks as rb
from unarray._errors import ArgumentTypeError, DeviceMismatchError

_PRECISION = {"highest": jax.lax.Precision.HIGHEST, "tf32": jax.lax.Precision.HIGH,
              "bf16": jax.lax.Precision.DEFAULT, "fastest": jax.lax.Precision.DEFAULT}


@dataclass(frozen=True)
class Plan:
    """How a sequence-sharded attention call runs: the mesh, q's partition spec (one entry per dimension),
    the ring's mesh axis and size, whether the causal zigzag order applies, and the local kernel."""

    mesh: Any
    spec: tuple[Any, ...]
    axis: str
    n: int
    zigzag: bool
    kernel: str
    groups: int = 1  # head groups walked one after the other (ring_memory.head_groups)
    route: str = "ring"  # or "split": the two-device split (attention_split.py)
    rule: str = ""  # why that route
    band: Any = None  # a structured mask's (least, greatest) key - query position offset, or None: none
    segments: bool = False  # with segment ids (passed beside q, k, v, replicated)

    def describe(self) -> str:
        order = "zigzag causal" if self.zigzag else "non-causal"
        kernel = ("cuDNN fused attention with softmax statistics (jax._src.cudnn)" if self.kernel == "cudnn" else
                  f"jnp blocked online-softmax over {rb.SUB_BLOCK}-key sub-blocks (float32 accumulation)")
        heads = f", {self.groups} head groups in turn" if self.groups > 1 else ""
        if self.band is not None:
            return (f"ring attention over mesh axis {self.axis!r} ({self.n} devices, contiguous shards{heads}) under "
                    f"a structured mask at each block's global positions (ring steps whose block no query reaches "
                    f"are skipped), local kernel {kernel}; backward: the ring in reverse")
        if self.route == "split":
            return (f"two-device split over mesh axis {self.axis!r} (device 0's keys and values to device 1, half "
                    f"of device 1's rows to device 0 and their output back; two blocks per device{heads}), local "
                    f"kernel {kernel}; backward: the ring's, zigzag; route: {self.rule}")
        return (f"ring attention over mesh axis {self.axis!r} ({self.n} devices, {order}{heads}), local kernel "
                f"{kernel}; backward: the ring in reverse with jnp blocks" + (f"; route: {self.rule}" if self.rule
                                                                             else ""))


def _concrete_sharding(x: Any) -> Any:
    # Note: under eager jax.grad / jax.vjp the operands are JVP/linearize tracers around the concrete
    # array; its sharding decides the route. Under jit only a mesh of Explicit axes types the tracer (its
    # sharding names an AbstractMesh, which shard_map takes); Auto axes leave the spec empty: no ring.
    for _ in range(8):
        if not isinstance(x, jax.core.Tracer):
            return getattr(x, "sharding", None)
        primal = getattr(x, "primal", None)
        if primal is None:
            try:
                sh = jax.typeof(x).sharding
            except Exception:
                return None
            return sh if isinstance(sh, NamedSharding) else None
        x = primal
    return None


def _devices_of(sh: Any) -> Any:
    # The devices of a concrete sharding; None for a sharding over an AbstractMesh (inside jit).
    return sh.device_set if isinstance(sh.mesh, jax.sharding.Mesh) else None


def _padded(spec: Any, ndim: int) -> tuple[Any, ...]:
    s = tuple(spec)
    return s + (None,) * (ndim - len(s))


def plan(q: Any, k: Any, v: Any, mask: Any, is_causal: bool, layout: str, masks: Any = None) -> Plan | None:
    """The ring plan for these inputs, or None where the call is not sequence-sharded (or the ring does not
    take it: a mask, bottom-right causal with Sq != Sk, lengths not divisible by the ring).

    Raises:
        DeviceMismatchError: q, k and v are sharded over different meshes.
    """
    sq_sh = _concrete_sharding(q)
    if not isinstance(sq_sh, NamedSharding) or sq_sh.mesh.size < 2:
        return None
    shardings = [_concrete_sharding(a) for a in (k, v)]
    for name, sh in zip("kv", shardings, strict=True):
        mesh = getattr(sh, "mesh", None)
        if mesh is not None and mesh != sq_sh.mesh or (mesh is None and sh is not None and
                                                       set(sh.device_set) != set(_devices_of(sq_sh) or ())):
            raise DeviceMismatchError(
                f"q is sharded over {_mesh_text(sq_sh.mesh)} but {name} over "
                f"{_mesh_text(mesh) if mesh is not None else sorted(d.id for d in sh.device_set)}; put them on "
                f"one mesh, e.g. {name} = jax.device_put({name}, q.sharding)",
                op="scaled_dot_product_attention", backend="jax")
    spec = _padded(sq_sh.spec, q.ndim)
    seq = q.ndim - 3 if layout == "bshd" else q.ndim - 2
    axis = spec[seq]
    if isinstance(axis, tuple):
        if len(axis) != 1:
            return None
        axis = axis[0]
    if axis is None or mask is not None or q.ndim < 3 or k.ndim != q.ndim or v.ndim != q.ndim:
        return None
    n = int(sq_sh.mesh.shape[axis])
    sq, sk = q.shape[seq], k.shape[seq]
    structured = masks is not None and masks.structured
    zigzag = bool(is_causal) and not structured
    if n < 2 or sq == 0 or (zigzag and sq != sk) or sq % (2 * n if zigzag else n) or sk % n:
        return None
    if not all(isinstance(sh, NamedSharding) and _padded(sh.spec, q.ndim) == spec for sh in shardings):
        return None  # k, v sharded differently: GSPMD reshards them in the general path
    if not jnp.issubdtype(q.dtype, jnp.floating):
        return None
    if structured:
        # A window or segment ids: the ring over contiguous shards, jnp blocks under the mask at global positions.
        if masks.q_segments is not None and any(spec[d] is not None for d in range(q.ndim - 3)):
            return None  # segment ids beside a sharded batch: the general path
        off = sk - sq
        band = (None if masks.left is None else off - masks.left, None if masks.right is None else off + masks.right)
        return Plan(sq_sh.mesh, spec, str(axis), n, False, "xla", 1, "ring", "", band, masks.q_segments is not None)
    kernel = _kernel(q, v, sq_sh)
    route, rule = _route(is_causal, n, sq // n)
    return Plan(sq_sh.mesh, spec, str(axis), n, bool(is_causal), kernel,
                _groups(q, k, v, seq, sq_sh, shardings[0], n, bool(is_causal), kernel, route), route, rule)


def segment_ids(spec: Any, q: Any, layout: str) -> tuple[Any, ...]:
    """A structured mask's segment ids as the ring takes them: (N|1, Sq) and (N|1, Sk), q's batch dims flattened
    (nothing where there are none)."""
    if spec.q_segments is None:
        return ()
    batch = tuple(q.shape[:-3])

    def flat(ids: Any) -> Any:
        ids = jnp.asarray(ids)
        full = ids.reshape((1,) * (len(batch) + 1 - ids.ndim) + tuple(ids.shape))
        if all(d == 1 for d in full.shape[:-1]):
            return full.reshape(1, full.shape[-1])
        return jnp.broadcast_to(full, (*batch, full.shape[-1])).reshape(math.prod(batch), full.shape[-1])

    return flat(spec.q_segments), flat(spec.kv_segments)


# Rows per device below which a causal call on two devices runs the two-device split rather than the ring, as
# fast with less memory (the timings: docs/scaling_jax.md). PREFER forces one ("ring" or "split").
SPLIT_ROWS = 524288
PREFER: contextvars.ContextVar[str] = contextvars.ContextVar("unarray_jax_sequence_route", default="auto")
_ROUTES = ("auto", "ring", "split")


def _route(causal: bool, n: int, rows: int) -> tuple[str, str]:
    if not causal or n != 2:
        return "ring", ""
    pref = PREFER.get()
    if pref not in _ROUTES:
        raise ArgumentTypeError(f"attention_ring.PREFER must be one of {_ROUTES}, got {pref!r}",
                                op="scaled_dot_product_attention", backend="jax")
    if pref != "auto":
        return pref, f"{pref} asked for (PREFER)"
    if rows < SPLIT_ROWS:
        return "split", f"{rows} rows per device, below {SPLIT_ROWS} (SPLIT_ROWS): the split is faster"
    return "ring", f"{rows} rows per device, from {SPLIT_ROWS} (SPLIT_ROWS) on: the ring is as fast"


def extra_bytes(b: int, hq: int, hk: int, lq: int, lk: int, d: int, dv: int, itemsize: int, acc: int,
                zigzag: bool, kernel: str) -> int:
    """Bytes the JAX ring holds on a device beyond its shards of q, k, v and its output, walking all heads at
    once (an upper bound of XLA's temporaries for the program).

    Counted: the key/value block in flight and the one in hand; the float32 accumulators, log-sum-exp and one
    block's result; with zigzag, the head-tail copies of q, k, v and the output before it goes back; with the
    jnp kernel, the float32 copy of q, its accumulators and one sub-block's scores, probabilities and their
    temporaries (four score-sized buffers).
    """
    q_b, kv_b, o_b = b * hq * lq * d * itemsize, b * hk * lk * (d + dv) * itemsize, b * hq * lq * dv * itemsize
    rows = b * hq * lq
    extra = 2 * kv_b + 3 * rows * (dv + 1) * acc
    if zigzag:
        extra += q_b + kv_b + o_b
    if kernel != "cudnn":
        extra += rows * (d + dv + 2) * acc + 4 * rows * min(rb.SUB_BLOCK, lk) * acc + kv_b
    return extra


def split_extra_bytes(b: int, hq: int, hk: int, lq: int, lk: int, d: int, dv: int, itemsize: int, acc: int,
                      kernel: str) -> tuple[int, int]:
    """Bytes the two-device split (attention_split.py) holds on a device beyond its shards of q, k, v, walking
    all heads at once: (while its blocks run, before its output exists; at the merge, beyond the output too).

    While the blocks run: the other device's keys and values (device 1) or half of its rows (device 0), the
    causal block's output and log-sum-exp, and the full block's (cuDNN's in q's dtype, the jnp kernel's in
    float32), with the jnp kernel's own temporaries as in the ring. At the merge, written into the output as
    one element-wise pass: the causal block's, the full block's and the one received. The larger of the two
    bounds XLA's temporaries for the program.
    """
    q_b, kv_b = b * hq * lq * d * itemsize, b * hk * lk * (d + dv) * itemsize
    rows = b * hq * lq
    block, lse = rows * dv * (itemsize if kernel == "cudnn" else acc), rows * acc
    held = kv_b + q_b // 2 + (block + lse) * 3 // 2
    if kernel != "cudnn":
        held += rows * (d + dv + 2) * acc + 4 * rows * min(rb.SUB_BLOCK, lk) * acc + kv_b
    return held, 2 * (block + lse)


# Rows per device below which the ring keeps one head group: there its extra memory is small in bytes, and
# smaller per-group kernels cost throughput (the torch ring's grouped timings, docs/scaling_torch.md).
GROUP_MIN_ROWS = 32768


def _groups(q: Any, k: Any, v: Any, seq: int, q_sh: NamedSharding, k_sh: NamedSharding, n: int, zigzag: bool,
            kernel: str, route: str) -> int:
    # The head groups that keep a device's peak under one device's for the whole sequence, by the route's count
    # (the split holds less than the zigzag ring: on cuDNN's blocks one group wherever the inputs fit).
    head = seq + 1 if seq == q.ndim - 3 else seq - 1
    ql, kl = q_sh.shard_shape(q.shape), k_sh.shard_shape(k.shape)
    b = math.prod(ql[:-3])
    hq, hk, lq, lk, d, dv = ql[head], kl[head], ql[seq], kl[seq], ql[-1], v.shape[-1]
    if lq < GROUP_MIN_ROWS:
        return 1
    item, acc = jnp.dtype(q.dtype).itemsize, jnp.dtype(rb.compute_dtype(q)).itemsize
    io = b * (hq * lq * (d + dv) + hk * lk * (d + dv)) * item
    if route != "split":
        return ring_memory.head_groups(hk, extra_bytes(b, hq, hk, lq, lk, d, dv, item, acc, zigzag, kernel), io, n)
    held, merge = split_extra_bytes(b, hq, hk, lq, lk, d, dv, item, acc, kernel)
    return split_groups(hk, held, merge, io, b * hq * lq * dv * item, n)


def split_groups(hk: int, held: int, merge: int, io: int, out: int, n: int) -> int:
    """The split's head groups from its two counts (split_extra_bytes), this device's inputs and output ``io``
    and output alone ``out``: one group where its peak stays under one device's for the whole sequence (its
    output is written only at its merge, so its blocks may use the output's bytes too), else the ring's rule
    on the larger count (a walk of several groups holds the output throughout, as the loop's carry)."""
    if held <= (n - 1) * io + out and merge <= (n - 1) * io:
        return 1
    return ring_memory.head_groups(hk, max(held, merge), io, n)


def _mesh_text(mesh: Any) -> str:
    text = "mesh(" + ", ".join(f"{a!r}: {int(s)}" for a, s in mesh.shape.items()) + ")"
    if isinstance(mesh, jax.sharding.Mesh):
        text += f" of devices {[int(d.id) for d in mesh.devices.flat]}"
    return text


def _kernel(q: Any, v: Any, sh: Any) -> str:
    if sh.mesh in _CUDNN_REFUSED:
        return "xla"
    devices = _devices_of(sh)
    platform = (next(iter(devices)) if devices else jax.devices()[0]).platform
    d, dv = q.shape[-1], v.shape[-1]
    takes = jnp.dtype(q.dtype).name in HALF and d == dv and d % 8 == 0 and d <= 128
    return "cudnn" if takes and platform in ("gpu", "cuda") else "xla"


def run(p: Plan, q: Any, k: Any, v: Any, is_causal: bool, scale: float, layout: str, policy: str,
        ids: tuple[Any, ...] = ()) -> Any:
    """Ring attention under plan ``p`` (one compiled program per plan and configuration); ``ids``: a structured
    mask's segment ids as (N|1, Sq) and (N|1, Sk) arrays, or nothing."""
    fn = _compiled(p, bool(is_causal), float(scale), layout, policy)
    # Note: under a transformation (eager jax.grad) the jit names its in/out shardings: without them the
    # linearized program's shardings were read against another ring's mesh (IndivisibleError) once two
    # meshes had been used in one process; and the bare shard_map, run eagerly, compiled op by op (3x slower).
    if isinstance(q, jax.core.Tracer):
        # Inside jit (an AbstractMesh) the shard_map is traced into the caller's program as it is.
        return fn[1](q, k, v, *ids) if isinstance(p.mesh, jax.sharding.Mesh) else fn[2](q, k, v, *ids)
    try:
        return fn[0](q, k, v, *ids)
    except Exception as e:
        text = str(e)
        if p.kernel != "cudnn" or "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower():
            raise
        # cuDNN refused the blocks when compiling (after tracing took them): the jnp blocks run this mesh.
        _CUDNN_REFUSED.add(p.mesh)
        return run(dataclasses.replace(p, kernel="xla"), q, k, v, is_causal, scale, layout, policy, ids)


_CUDNN_REFUSED: set[Any] = set()


_JITTED: dict[tuple[Any, ...], tuple[Any, Any, Any]] = {}


def _compiled(p: Plan, causal: bool, scale: float, layout: str, policy: str) -> tuple[Any, Any, Any]:
    key = (p, causal, scale, layout, policy)
    fn = _JITTED.get(key)
    if fn is None:
        local = functools.partial(_local_call, axis=p.axis, n=p.n, causal=causal, scale=scale, layout=layout,
                                  kernel=p.kernel, precision=_PRECISION[policy], groups=p.groups,
                                  split=p.route == "split", band=p.band)
        spec = P(*p.spec)  # type: ignore[no-untyped-call]
        ins = (spec, spec, spec) + ((P(), P()) if p.segments else ())  # type: ignore[no-untyped-call]
        mapped = _shard_map(local, p.mesh, ins, spec)
        if isinstance(p.mesh, jax.sharding.Mesh):
            sh = NamedSharding(p.mesh, spec)
            fn = (jax.jit(mapped), jax.jit(mapped, in_shardings=(sh, sh, sh), out_shardings=sh) if not p.segments
                  else jax.jit(mapped), mapped)
        else:
            fn = (mapped, mapped, mapped)
        _JITTED[key] = fn
    return fn


def _shard_map(f: Any, mesh: Any, in_specs: Any, out_specs: Any) -> Any:
    sm = getattr(jax, "shard_map", None)
    if sm is not None:
        return sm(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)
    from jax.experimental.shard_map import shard_map  # JAX < 0.7

    return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,  # type: ignore[no-untyped-call]
                     check_rep=False)


def _local_call(q: Any, k: Any, v: Any, *ids: Any, axis: str, n: int, causal: bool, scale: float, layout: str,
                kernel: str, precision: Any, groups: int = 1, split: bool = False, band: Any = None) -> Any:
    # The per-device body: q, k, v are this device's shards; (batch..., S/N, H, D) after the layout swap; ids, the
    # whole (N|1, S) segment ids of q and k (replicated), cut here to this device's rows.
    if layout == "bhsd":
        q, k, v = (jnp.swapaxes(a, -2, -3) for a in (q, k, v))
    batch = q.shape[:-3]
    q, k, v = (a.reshape(math.prod(batch), *a.shape[-3:]) for a in (q, k, v))
    one = functools.partial(_one_group, axis=axis, n=n, causal=causal, scale=scale, kernel=kernel,
                            precision=precision, split=split)
    if band is not None:
        i = jax.lax.axis_index(axis)
        qi, ki = ((jax.lax.dynamic_slice_in_dim(ids[0], i * q.shape[1], q.shape[1], axis=1),
                   jax.lax.dynamic_slice_in_dim(ids[1], i * k.shape[1], k.shape[1], axis=1)) if ids else (None, None))
        out = rb.ring(q, k, v, qi, ki, axis, n, False, scale, kernel, precision, band)
    elif groups == 1:
        out = one(q, k, v)
    else:
        gq, gk = q.shape[2] // groups, k.shape[2] // groups

        def body(j: Any, out: Any) -> Any:
            qj = jax.lax.dynamic_slice_in_dim(q, j * gq, gq, axis=2)
            kj, vj = (jax.lax.dynamic_slice_in_dim(a, j * gk, gk, axis=2) for a in (k, v))
            return jax.lax.dynamic_update_slice_in_dim(out, one(qj, kj, vj), j * gq, axis=2)

        # Note: a loop, not unrolled groups: XLA runs its iterations in turn and reuses one group's buffers.
        out = jax.lax.fori_loop(0, groups, body, jnp.zeros((*q.shape[:-1], v.shape[-1]), q.dtype))
    out = out.reshape(*batch, *out.shape[1:])
    return jnp.swapaxes(out, -2, -3) if layout == "bhsd" else out


def _one_group(q: Any, k: Any, v: Any, *, axis: str, n: int, causal: bool, scale: float, kernel: str,
               precision: Any, split: bool = False) -> Any:
    # One head group's ring (or the two-device split), (B, S/N, H, D) in the caller's row order.
    if split:
        return attention_split.split(q, k, v, axis, scale, kernel, precision)
    if causal:
        q, k, v = (rb.zigzag(a, axis, n) for a in (q, k, v))
    out = rb.ring(q, k, v, None, None, axis, n, causal, scale, kernel, precision, None)
    return rb.unzigzag(out, axis, n) if causal else out
