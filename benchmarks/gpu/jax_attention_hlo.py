"""Compare the optimized XLA programs of unarray's JAX attention and jax.nn.dot_product_attention.

Counts the ops of each compiled program (copies, transposes, fusions, custom calls) for the
benchmark's (4, 16, 4096, 128) bf16 shape in JAX's bshd layout.

    python benchmarks/gpu/jax_attention_hlo.py
"""

from __future__ import annotations

import re
from collections import Counter

import jax
import jax.numpy as jnp

from unarray._backends.jax import attention as attention_jax


def ops(text: str) -> Counter[str]:
    found = re.findall(r"= \S+ (\w[\w-]*)\(", text)
    calls = re.findall(r'custom_call_target="([^"]+)"', text)
    return Counter(found) + Counter(f"custom:{c}" for c in calls)


def main() -> None:
    for causal in (False, True):
        q, k, v = (jax.random.normal(jax.random.PRNGKey(i), (4, 4096, 16, 128), jnp.bfloat16) for i in range(3))
        native = jax.jit(lambda q, k, v, c=causal: jax.nn.dot_product_attention(q, k, v, is_causal=c,
                                                                                 implementation="cudnn"))
        mine = attention_jax._compiled(causal, 128**-0.5, "bshd")
        a = native.lower(q, k, v).compile().as_text()
        b = mine.lower(q, k, v, None).compile().as_text()
        print(f"causal={causal}\n native: {dict(ops(a))}\n unarray: {dict(ops(b))}")


if __name__ == "__main__":
    main()
