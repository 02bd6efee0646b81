"""dask: lazy dask.array.Array over NumPy or CuPy chunks.

backend (the class: every op builds graph), chunks (what runs on the chunks: a Chan combine for
var/std, per-matrix linear algebra, the chunks' own backend's corrections) and attention (the blocked
online-softmax attention over chunks)."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="dask", shown="Dask",
    install_cpu="pip install 'dask[array]'",
    lazy=True,
)
