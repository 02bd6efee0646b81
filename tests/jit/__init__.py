"""ua.jit and tracing: each library's compiler, the cache key, torch.compile, tf.function and jax.jit around unarray."""
