"""Test helpers: a per-backend adapter (make arrays from NumPy, read them back)
and dtype-aware tolerances against a float64 NumPy reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from unarray._backends import LIBRARIES

# The parameter id per library whose CUDA arrays TestBackend makes ("torch-cuda": torch's arrays on the GPU).
GPU_PARAMS = {"torch": "torch-cuda", "jax": "jax-gpu", "cupy": "cupy", "numba": "numba"}
# Parameter ids per device class, in the registry's order: on the CPU every library with a CPU build. numba is
# handoff-only (tests/conftest.py gives it to the tests marked ``handoff`` only).
BACKEND_PARAMS = {
    "cpu": [n for n, lib in LIBRARIES.items() if lib.install_cpu and not lib.accelerator_only],
    "gpu": [GPU_PARAMS[n] for n in LIBRARIES if n in GPU_PARAMS],
}

# Fixture tests a backend does not pass yet, run as strict xfails: (backend, test module, test function or the
# parametrized test's id) -> reason.
KNOWN_FAILURES = {
    ("mlx", "test_nn", "test_activations_match_the_formula[mlx-gelu]"):
        "MLX's float64 erf is float32-accurate (ua.nn's exact gelu)",
    ("mlx", "test_nn_trust", "test_activations_at_infinities_and_nan[mlx-gelu-float64]"):
        "MLX's float64 erf is float32-accurate (ua.nn's exact gelu)",
}


def compute_params(device: str) -> list[str]:
    """The parameters of ``device`` whose libraries compute (a handoff-only library's arrays are only handed over)."""
    return [p for p in BACKEND_PARAMS[device] if not LIBRARIES[p.partition("-")[0]].handoff_only]


@dataclass
class TestBackend:
    """How the tests make and read arrays of one backend on one device."""

    __test__ = False
    name: str  # backend name as unarray knows it
    param: str  # test id
    device: str  # "cpu" or "gpu"
    module: Any

    def asarray(self, a: Any) -> Any:
        a = np.asarray(a)
        if self.name == "numpy":
            return a.copy()
        if self.name == "torch":
            import torch

            return torch.from_numpy(a.copy()).to("cuda" if self.device == "gpu" else "cpu")
        if self.name == "jax":
            import jax

            dev = jax.devices("gpu")[0] if self.device == "gpu" else jax.devices("cpu")[0]
            return jax.device_put(a, dev)
        if self.name == "cupy":
            import cupy

            return cupy.asarray(a)
        if self.name == "tensorflow":
            import tensorflow as tf

            return tf.constant(a)
        if self.name == "mlx":
            import mlx.core as mx

            # (mx.array alone makes float64 input float32)
            return mx.array(a, dtype=getattr(mx, "bool_" if a.dtype == np.bool_ else a.dtype.name))
        if self.name == "dask":
            import dask.array as da

            return da.from_array(a.copy())
        if self.name == "numba":
            from numba import cuda

            return cuda.to_device(a.copy())
        raise AssertionError(self.name)

    def to_numpy(self, x: Any) -> np.ndarray:
        if isinstance(x, (bool, int, float, complex, np.generic)):
            return np.asarray(x)
        if self.name == "torch":
            return x.detach().cpu().numpy()
        if self.name == "cupy":
            return x.get()
        if self.name == "numba":
            return x.copy_to_host()
        if self.name == "tensorflow":
            return x.numpy()
        if self.name == "mlx":
            # (NumPy has no bfloat16: MLX's bfloat16 is read through float32, exactly)
            return np.array(x.astype(self.module.float32) if x.dtype == self.module.bfloat16 else x)
        if self.name == "dask" and hasattr(x, "compute"):
            # A lazy graph: run it, then read the chunks' result like any other (CuPy chunks from the GPU).
            out = x.compute()
            return np.asarray(out.get() if hasattr(out, "get") else out)
        return np.asarray(x)

    def is_native(self, x: Any) -> bool:
        if self.name == "numpy":
            return isinstance(x, (np.ndarray, np.generic))
        if self.name == "torch":
            import torch

            return isinstance(x, torch.Tensor)
        if self.name == "jax":
            import jax

            return isinstance(x, jax.Array)
        if self.name == "cupy":
            import cupy

            return isinstance(x, cupy.ndarray)
        if self.name == "tensorflow":
            import tensorflow as tf

            return isinstance(x, tf.Tensor)
        if self.name == "mlx":
            import mlx.core as mx

            return isinstance(x, mx.array)
        if self.name == "dask":
            import dask.array as da

            return isinstance(x, da.Array)
        if self.name == "numba":
            return type(x).__module__.startswith("numba") and hasattr(x, "copy_to_host")
        return False

    @property
    def ua_device(self) -> Any:
        """The ``ua.Device`` the fixture's arrays live on."""
        import unarray as ua

        if self.device == "cpu":
            return ua.Device("cpu")
        return ua.device(self.asarray(np.zeros(1, np.float32)))

    @property
    def has_float64(self) -> bool:
        if self.name == "jax":
            import jax

            return bool(jax.config.jax_enable_x64)
        return True

    @property
    def has_bfloat16(self) -> bool:
        # NumPy has no bfloat16, so neither have CuPy and dask (NumPy chunks).
        return self.name not in ("numpy", "cupy", "dask")

    def holds(self, dtype_name: str) -> bool:
        """Whether the fixture's device holds the standard dtype ``dtype_name`` (MLX has no complex128)."""
        import unarray as ua

        info: Any = ua.array_namespace(self.asarray(np.zeros(1, np.float32))).__array_namespace_info__
        return dtype_name in info().dtypes()

    @property
    def has_uint64_sum(self) -> bool:
        # Every backend sums unsigned input into the default unsigned dtype (torch through int64 bits).
        return True


def make_backend(param: str) -> TestBackend | None:
    name, _, dev = param.partition("-")
    device = "gpu" if dev in ("cuda", "gpu") or name in ("cupy", "numba") else "cpu"
    if name == "torch":
        import torch

        if device == "gpu" and not torch.cuda.is_available():
            return None
        return TestBackend("torch", param, device, torch)
    if name == "jax":
        import jax

        if device == "gpu":
            try:
                jax.devices("gpu")
            except RuntimeError:
                return None
        return TestBackend("jax", param, device, jax)
    if name == "cupy":
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() < 1:
                return None
        except Exception:
            return None
        return TestBackend("cupy", param, device, cupy)
    if name == "numba":
        try:
            import numba
            from numba import cuda

            if not cuda.is_available():
                return None
        except Exception:
            return None
        np.row_stack = np.vstack  # type: ignore[attr-defined]  # numba-cuda on NumPy 2.5 compiles with it
        return TestBackend("numba", param, device, numba)
    if name == "tensorflow":
        import tensorflow as tf

        return TestBackend("tensorflow", param, device, tf)
    if name == "mlx":
        import mlx.core as mx

        return TestBackend("mlx", param, device, mx)
    if name == "dask":
        import dask.array as da

        return TestBackend("dask", param, device, da)
    import numpy

    return TestBackend("numpy", param, device, numpy)


EPS = {
    "float16": 2.0**-10,
    "bfloat16": 2.0**-7,
    "float32": 2.0**-23,
    "float64": 2.0**-52,
    "complex64": 2.0**-23,
    "complex128": 2.0**-52,
}


def tolerance(dtype_name: str, n_terms: int = 1, precision: str = "highest") -> tuple[float, float]:
    """(rtol, atol) for a result accumulated over ``n_terms`` values of ``dtype_name``.

    Rounding grows like sqrt(n) for well-conditioned sums; we allow n^0.5 * 8
    ulps, and the coarser unit roundoff of a reduced-precision policy.
    """
    eps = EPS.get(dtype_name, 0.0)
    if precision == "tf32" and dtype_name == "float32":
        eps = 2.0**-10
    elif precision in ("bf16", "fastest") and dtype_name == "float32":
        eps = 2.0**-7
    if eps == 0.0:
        return 0.0, 0.0
    rtol = 8 * eps * max(1.0, n_terms) ** 0.5
    return rtol, rtol


def assert_close(actual: np.ndarray, expected: np.ndarray, dtype_name: str, n_terms: int = 1,
                 precision: str = "highest", scale: float | None = None) -> None:
    """Compare with a float64 reference; atol scales with the magnitude of the inputs (``scale``)."""
    rtol, atol = tolerance(dtype_name, n_terms, precision)
    if scale is not None:
        atol *= scale
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if rtol == 0.0:
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual.astype(np.complex128 if np.iscomplexobj(actual) else np.float64),
                                   expected, rtol=rtol, atol=atol, equal_nan=True)


def child_pythonpath(*first: object) -> str:
    """PYTHONPATH for a child process: ``first`` ahead of the parent's own (packages reached through it stay)."""
    import os

    return os.pathsep.join([*(str(p) for p in first), *filter(None, [os.environ.get("PYTHONPATH")])])
