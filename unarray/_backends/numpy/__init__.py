"""NumPy: ndarray on the CPU, the default backend. The array-API namespace is array-api-compat's
wrapper of NumPy where NumPy deviates, NumPy itself elsewhere.

This module imports no framework: it holds the library's facts (``LIBRARY``). The backend class is in
``backend``, loaded by the registry on first use."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="numpy",
    roots=("numpy",),
    distributions=("numpy",),
    install_cpu="pip install numpy",
    api_names=("ddof", "a", "initial"),
    shared_dtypes=True,
)
