"""The MLX backend: ``mlx.core.array`` on MLX's CPU and GPU (Metal on Apple silicon, CUDA elsewhere).

This module holds the library's facts as plain data, read by the registry, the install hints and the deviation
table without importing MLX; every other module of the package imports ``mlx.core`` at its top.
"""

from __future__ import annotations

from unarray._backends._library import Library

NAME = "mlx"
# Note: mlx.core.array's __setitem__ rebinds the Python object to a new buffer (views and other holders of the
# old buffer do not see the write): MLX's buffers are values, so ua.at returns a new array and a writable alias
# handed to another library (torch) would change memory MLX shares between arrays.
IMMUTABLE = True
LIBRARY = Library(
    name=NAME, shown="MLX",
    install_cpu="pip install mlx mlx-cpu",
    install_gpu="on Apple silicon: pip install mlx (Metal); with an NVIDIA GPU: pip install 'mlx[cuda13]'",
    compiles=True,
)
