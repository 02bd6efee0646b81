"""Handoff between libraries: ``ua.to``, ``ua.from_dlpack``, ``ua.stats``.

Data moves through DLPack (or ``__cuda_array_interface__`` where that is the
faster correct path). A copy happens only where the consumer cannot alias the
producer's memory or the caller asked for another device; it is counted in
:func:`stats`, and ``copy=False`` turns it into a :class:`HandoffError`.

Each module is one library-agnostic step (docs/layout.md maps them); a library's own facts and converters
are its package's ``handoff`` module (unarray/_backends/<lib>/handoff.py), asked through the registry's
``handoff(name)``: no string here names a library.

The rule: the package imports no framework at import time and no front-end or
dispatch module (dispatch imports it to hand mixed operands over); backends are
reached through the registry (``unarray._backends.get``), never imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on the first handoff (__getattr__ below); a type checker reads them here
    from unarray.interop._dlpack import from_dlpack
    from unarray.interop._promise import checking_readonly, verify_readonly
    from unarray.interop._public import stats, to

__all__ = ["checking_readonly", "from_dlpack", "stats", "to", "verify_readonly"]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        # The steps are loaded by the first handoff, not by ``import unarray``: one library's calls need none of them.
        if name in ("stats", "to"):
            from unarray.interop import _public as home
        elif name == "from_dlpack":
            from unarray.interop import _dlpack as home
        elif name in ("checking_readonly", "verify_readonly"):
            from unarray.interop import _promise as home
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = globals()[name] = getattr(home, name)
        return value
