"""CuPy: cupy.ndarray on CUDA and ROCm GPUs.

backend (the class and its hot ops) and attention_cudnn (cuDNN's fused SDPA through
nvidia-cudnn-frontend, without torch)."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="cupy", shown="CuPy",
    roots=("cupy", "cupy_backends"),
    distributions=("cupy-cuda13x", "cupy-cuda12x", "cupy-rocm-6-0", "cupy"),
    install_gpu="CuPy runs only on a GPU: with an NVIDIA GPU pip install cupy-cuda13x (cupy-cuda12x for CUDA 12 "
                "drivers), with an AMD GPU pip install cupy-rocm-7-0; without a GPU use NumPy arrays",
)
