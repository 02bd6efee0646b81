"""NumPy: ndarray on the CPU, the default backend. The array-API namespace is array-api-compat's
wrapper of NumPy where NumPy deviates, NumPy itself elsewhere."""

from unarray._backends._library import Library

LIBRARY = Library(
    name="numpy", shown="NumPy",
    install_cpu="pip install numpy",
    api_names=("ddof", "a", "initial"),
    shared_dtypes=True,
)
