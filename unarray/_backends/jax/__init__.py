"""JAX: jax.Array on CPU, CUDA, ROCm and TPU, single-device or sharded, and tracers under jax.jit.

backend (the class and its hot ops), attention (jax.nn.dot_product_attention and cuDNN where it
applies) and attention_ring (sequence-sharded attention over a mesh)."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="jax", shown="JAX",
    roots=("jax", "jaxlib"),
    install_cpu="pip install jax",
    install_gpu="with an NVIDIA GPU: pip install 'jax[cuda13]'",
    compiles=True,
    check_seconds=114,
)
