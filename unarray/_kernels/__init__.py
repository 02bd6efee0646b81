"""unarray's own GPU kernels (Triton for torch, CUDA C through CuPy) and their plans.

Nothing here imports a framework at import time: each kernel module imports its compiler when a
kernel is first asked for.
"""
