"""Numba CUDA device arrays, at the edges only: unarray reads their device and hands them to and from
CuPy and torch zero-copy; every compute op is refused with what to do instead."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="numba", shown="Numba",
    install_cpu="pip install numba",
    install_gpu="Numba's CUDA arrays also need an NVIDIA GPU and pip install numba-cuda",
    accelerator_only=True,
    handoff_only=True,
    no_compiler="numba cannot compile unarray's dispatch",
)
