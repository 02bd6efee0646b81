"""Does JAX's sequence-sharded ring hold less memory per device than one device for the whole sequence?

For each S, XLA's compile-time accounting (``jax.jit(...).lower(...).compile().memory_analysis()``:
arguments + output + temporaries, per device) of

- the ring: ``unarray``'s ring program (``unarray._backends.jax.attention_ring``) for q, k, v sharded along S
  over a 2-device mesh, with the head groups its memory rule chooses, and with one group (all heads at once);
- one device: ``jax.nn.dot_product_attention`` on the whole sequence (cuDNN on GPU: its arguments and output
  are its peak; XLA's attention elsewhere, whose S x S scores are printed apart as its temporaries).

Nothing runs: the programs are only compiled. Default: 2 fake CPU devices
(``--xla_force_host_platform_device_count=2``), float32, causal, B=1, H=8, D=512, where the ring's local kernel
is jnp blocks; ``--device gpu`` compiles for two GPUs (cuDNN blocks for bf16/fp16), e.g.

    python benchmarks/jax_ring_memory.py                                  # CPU, fake devices
    python benchmarks/jax_ring_memory.py --device gpu --dtype bfloat16 --heads 16 --dim 128 \\
        --sizes 32k,64k,128k,1M
"""

# ruff: noqa: T201
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this tree's unarray, not an installed one
sys.path.insert(1, str(Path(__file__).resolve().parent / "gpu"))  # the GPU benchmarks' --sizes parser

import sizes  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--sizes", default="1k,2k,4k", help="sequence lengths, e.g. 32k,64k,1M")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=0, help="key/value heads (0: as many as --heads)")
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--non-causal", action="store_true")
    args = ap.parse_args(argv)
    if args.device == "cpu":
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_force_host_platform_device_count=2").strip()
        os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    from unarray._backends.jax import attention_ring as ring

    devices = jax.devices()
    if len(devices) < 2:
        print(f"needs 2 devices, found {devices}", file=sys.stderr)
        return 2
    mesh = Mesh(devices[:2], ("s",))
    sh = NamedSharding(mesh, P(None, "s", None, None))  # type: ignore[no-untyped-call]
    causal, dt = not args.non_causal, jnp.dtype(args.dtype)
    b, h, d = args.batch, args.heads, args.dim
    hk = args.kv_heads or h
    mib = 2.0**20
    print(f"{devices[0].platform} x2, {dt.name}, {'causal' if causal else 'non-causal'}, B={b} H={h} Hk={hk} D={d}; "
          "peak per device = arguments + output + temporaries (MiB)")
    print("| S | one device: args+out (temp) | ring, 1 group | ring, chosen groups | groups |")
    print("|---|---|---|---|---|")
    for s in sizes.parse(args.sizes):
        def arrays(shard: object, s: int = s) -> list[object]:
            mk = jax.jit(lambda n: jnp.zeros((b, s, n, d), dt), static_argnums=0, out_shardings=shard)
            return [mk(n) for n in (h, hk, hk)]

        q, k, v = arrays(sh)
        p = ring.plan(q, k, v, None, causal, "bshd")
        if p is None:
            print(f"| {s} | the ring does not take this shape | | | |")
            continue
        peaks = {}
        for g in sorted({1, p.groups}):
            fn = ring._compiled(dataclasses.replace(p, groups=g), causal, d**-0.5, "bshd", "highest")[0]
            m = fn.lower(q, k, v).compile().memory_analysis()
            assert m is not None
            peaks[g] = (m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes) / mib
        del q, k, v
        spec = [jax.ShapeDtypeStruct((b, s, n, d), dt, sharding=jax.sharding.SingleDeviceSharding(devices[0]))  # type: ignore[no-untyped-call]
                for n in (h, hk, hk)]
        m1 = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=causal)).lower(
            *spec).compile().memory_analysis()
        assert m1 is not None
        one = (m1.argument_size_in_bytes + m1.output_size_in_bytes) / mib
        print(f"| {s} | {one:.2f} ({m1.temp_size_in_bytes / mib:.2f}) | {peaks[1]:.2f} | {peaks[p.groups]:.2f} | "
              f"{p.groups} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
