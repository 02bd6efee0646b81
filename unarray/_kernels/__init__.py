"""unarray's own GPU kernels (Triton for torch, CUDA C through CuPy), their plans and their route.

The rule of this package: kernels and what every library's route shares (``layout_route``: the
thresholds, the plan record a route returns, running it), never a front-end function or a library's
own route (each backend declares that in its package). Nothing here imports a framework at import
time: each kernel module imports its compiler when a kernel is first asked for.
"""
