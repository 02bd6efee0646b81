"""The NumPy backend's array-API namespace: array_api_compat.numpy's names, each resolved on first use.

array_api_compat.numpy opens with ``from numpy import *``, which loads f2py, testing, ma, random and the rest
of NumPy (about 120 modules, a tenth of a second). Most of its names are NumPy's own; most of the others are
array_api_compat's generic functions bound to NumPy (``get_xp(numpy)(array_api_compat.common.<module>.<name>)``).
This namespace serves those two kinds without importing it, building the bound function the same way, and
imports array_api_compat.numpy only for a function it writes for NumPy alone (``OWN``).
tests/structure/test_first_use.py holds every public name equal to array_api_compat.numpy's (and its linalg's
and fft's) against the installed versions."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

_PACKAGE = "array_api_compat.numpy"
# Per namespace ("" the main one): the generic module its bound functions come from, and their names.
COMMON: dict[str, tuple[str, frozenset[str]]] = {
    "": ("_aliases", frozenset({
        "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult", "arange", "argsort", "cumulative_prod",
        "cumulative_sum", "empty", "empty_like", "eye", "finfo", "full", "full_like", "iinfo", "linspace",
        "matmul", "matrix_transpose", "nonzero", "ones", "ones_like", "permute_dims", "sign", "sort", "std",
        "tensordot", "unique_all", "unique_counts", "unique_inverse", "unique_values", "var", "zeros",
        "zeros_like"})),
    "linalg": ("_linalg", frozenset({
        "cholesky", "cross", "diagonal", "eigh", "matrix_norm", "matrix_rank", "outer", "pinv", "qr", "slogdet",
        "svd", "svdvals", "trace"})),
    "fft": ("_fft", frozenset({
        "fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft", "irfft", "irfftn",
        "rfft", "rfftfreq", "rfftn"})),
}
# The generic module's own objects, served unbound (the named results linalg returns).
RESULTS: dict[str, frozenset[str]] = {
    "linalg": frozenset({"EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult"}),
}
# The functions array_api_compat.numpy writes for NumPy itself: the one reason to import it.
OWN: dict[str, frozenset[str]] = {
    "": frozenset({"asarray", "astype", "ceil", "clip", "count_nonzero", "floor", "take_along_axis", "trunc"}),
    "linalg": frozenset({"eig", "eigvals", "solve"}),
}
# linalg's names that are the main namespace's functions.
SHARED = frozenset({"matmul", "matrix_transpose", "tensordot", "vecdot"})


class Namespace:
    """array_api_compat.numpy (``sub`` "": the main namespace) or its ``linalg`` or ``fft``, name by name."""

    def __init__(self, sub: str = "") -> None:
        self._sub = sub
        self.__name__ = _PACKAGE + (f".{sub}" if sub else "")

    def __repr__(self) -> str:
        return f"<unarray's lazy view of {self.__name__}>"

    def __getattr__(self, name: str) -> Any:
        value = _resolve(self._sub, name)
        setattr(self, name, value)
        return value


def _resolve(sub: str, name: str) -> Any:
    if not sub and name in ("linalg", "fft"):
        return Namespace(name)
    if sub == "linalg" and name in SHARED:
        return getattr(XP, name)
    if name in OWN.get(sub, ()) or name.startswith("_"):  # (its own functions, and its dunders: its version, its info)
        return getattr(importlib.import_module(_PACKAGE + (f".{sub}" if sub else "")), name)
    module, bound = COMMON[sub]
    results = RESULTS.get(sub, ())
    if name in bound or name in results:
        from array_api_compat._internal import get_xp

        generic = getattr(importlib.import_module(f"array_api_compat.common.{module}"), name)
        return generic if name in results else get_xp(np)(generic)
    try:
        return getattr(getattr(np, sub) if sub else np, name)  # (np.fft is loaded on first use: not before)
    except AttributeError:
        raise AttributeError(f"{_PACKAGE + (f'.{sub}' if sub else '')} has no {name!r}") from None


XP = Namespace()
