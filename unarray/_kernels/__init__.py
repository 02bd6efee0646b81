"""unarray's own GPU kernels (Triton for torch, CUDA C through CuPy), their plans and their route.

The rule of this package: kernels and the decision of when to run them (``layout_route``: the
route of ``ascontiguousarray`` and of a handoff's compact copy), never a front-end function or a
backend module. Nothing here imports a framework at import time: each kernel module imports its
compiler when a kernel is first asked for.
"""
