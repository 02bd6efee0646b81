"""How to install each backend's framework: the hint printed where a backend is missing.

CPU builds first, so that a user without a GPU is never sent into a multi-GB CUDA download
(PyPI's default torch wheel on Linux bundles CUDA); the GPU build is named after it. unarray
itself is installed from its clone (``pip install -e .``); these commands add a framework to it.
``unarray.conformance.deviations.INSTALL`` (the platform pages) takes its CPU column from here.
"""

from __future__ import annotations

__all__ = ["CPU", "hint"]

# The CPU build of each framework ("" where the backend has no CPU build).
CPU: dict[str, str] = {
    "numpy": "pip install numpy",
    "torch": "pip install torch --index-url https://download.pytorch.org/whl/cpu",
    "jax": "pip install jax",
    "tensorflow": "pip install tensorflow-cpu",
    "cupy": "",
    "numba": "pip install numba",
    "dask": "pip install 'dask[array]'",
    "mlx": "pip install mlx mlx-cpu",
}

_GPU: dict[str, str] = {
    "torch": "with an NVIDIA GPU: pip install torch --index-url https://download.pytorch.org/whl/cu130",
    "jax": "with an NVIDIA GPU: pip install 'jax[cuda13]'",
    "tensorflow": "with an NVIDIA GPU on Linux: pip install 'tensorflow[and-cuda]'",
    "cupy": "CuPy runs only on a GPU: with an NVIDIA GPU pip install cupy-cuda13x (cupy-cuda12x for CUDA 12 "
            "drivers), with an AMD GPU pip install cupy-rocm-7-0; without a GPU use NumPy arrays",
    "mlx": "on Apple silicon: pip install mlx (Metal); with an NVIDIA GPU: pip install 'mlx[cuda13]'",
    "numba": "Numba's CUDA arrays also need an NVIDIA GPU and pip install numba-cuda",
}


def hint(name: str) -> str:
    """The install command for backend ``name``: the CPU build, then the GPU build (one line)."""
    cpu, gpu = CPU.get(name, ""), _GPU.get(name, "")
    if cpu and gpu:
        return f"{cpu} (CPU build; {gpu})"
    return cpu or gpu or f"pip install {name}"
