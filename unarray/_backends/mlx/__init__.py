"""The MLX backend: ``mlx.core.array`` on MLX's CPU and GPU (Metal on Apple silicon, CUDA elsewhere).

The rule of this package: everything unarray knows about MLX and nothing else. This module holds the
library's facts as plain data (read by the registry, the install hints and the deviation table without
importing MLX); ``backend.py`` holds the backend class, and the array-API namespace unarray writes for
MLX, which has none that follows the standard, is assembled in ``xp.py`` from one module per category
of the standard (``dtypes``, ``elementwise``, ``creation``, ``statistical``, ``manipulation``,
``searching``, ``linalg``, ``fft``); ``attention.py`` routes attention to ``mlx.core.fast``.
Every module but this one imports ``mlx.core`` at its top.
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
