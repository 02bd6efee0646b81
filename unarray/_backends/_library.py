"""What unarray knows about a library without importing it: the record each backend package declares.

Every backend package's ``__init__`` holds one :class:`Library` named ``LIBRARY`` and imports no
framework, so the registry, the type lookup, the install hints and the platform pages can read every
library's facts on a machine where the framework is missing. The backend class, which imports the
framework, lives in the package's ``backend`` module and is loaded on first use.
"""

from typing import NamedTuple

__all__ = ["AT_IN_PLACE", "IMMUTABLE", "Library", "Row"]

# A row of the deviation table, as a backend package declares it (its deviations.py): op, backend, platform,
# dtype (fnmatch patterns each) and the reason. A package's deviations.py holds plain values (no framework):
# INBOUND, the handoffs to it that differ (from any source), and ROWS, its own (each empty where absent);
# CORRECTED, where its own function answers otherwise and ua.<op> gives the standard's answer (op, dtype, what
# the library gives: the conformance suite expects the standard's answer there); INSTALL, the command per
# platform where it runs (the CPU one defaults to LIBRARY.install_cpu, one not named is ""); NOTE; OPERATORS,
# what its native arrays' own operators do (unarray never wraps or patches them).
# unarray/conformance/deviations.py assembles the table and renders backends/*.md.
Row = tuple[str, str, str, str, str]
# Reasons several libraries' rows share (each package's deviations.py names them): an immutable array handed to a
# library without read-only arrays (JAX's, TensorFlow's), ua.at in place where arrays are immutable or lazy.
IMMUTABLE = ("JAX arrays and TensorFlow tensors are immutable and torch, CuPy and Numba arrays cannot be read-only: "
             "such a handoff is one copy (refused under copy=False), never a writable alias")
AT_IN_PLACE = ("ua.at(..., copy=False) writes in place on NumPy, CuPy and torch arrays only; JAX and TensorFlow "
               "arrays (immutable) and dask arrays (a graph) refuse it (ArgumentError; leave copy unset)")


class Library(NamedTuple):
    """One library's facts, read before its framework is imported."""

    name: str
    # Its name as prose writes it (docstrings, pages).
    shown: str
    # Top-level modules whose classes are this library's arrays (type(x).__mro__ is read against them); () is
    # (name,).
    roots: tuple[str, ...] = ()
    # Distribution names, in order of preference, for installed-version reports; () is (name,).
    distributions: tuple[str, ...] = ()
    # The CPU build's install command ("" where the library has no CPU build), then the accelerator build's.
    install_cpu: str = ""
    install_gpu: str = ""
    # Its devices are accelerators only (no CPU device to list without asking the framework).
    accelerator_only: bool = False
    # ua.jit compiles its arrays with the library's own compiler (its backend's ``compiler``); where it
    # cannot, why not (shown when a caller names the library as a compiler).
    compiles: bool = False
    no_compiler: str = ""
    # The module whose import means the library's Python tracer is coming (it must learn ua.to's polyfill:
    # the backend's register_traced_to), or "". Such a tracer wraps the dict it looks a dtype up in: the
    # library's dtypes keep their names in a cache of their own (unarray._dtypes).
    tracer_module: str = ""
    # Its package has a ``watch`` module (importing no framework) whose ``after_import(hook)`` runs a hook once that
    # tracer's module is imported: the one watch on the tracer (``after_tracer`` in the registry).
    tracer_watch: bool = False
    # Its function (dotted, from its top module) telling whether that tracer is tracing this thread: what the
    # precision scope reads until the backend loads and installs its own (unarray._precision.tracing).
    tracing_flag: str = ""
    # Its array types (dotted, from its top module) registered at ``import unarray`` where the library is
    # imported already: a first lookup inside its tracer would be replayed and the function traced twice.
    early_types: tuple[str, ...] = ()
    # Other libraries' array types (dotted, from their top module) the type lookup resolves once this library's
    # tracer is coming: a type first met inside its trace cannot be resolved there.
    trace_types: tuple[str, ...] = ()
    # Device kinds on which its fused attention kernels take another library's arrays zero-copy, once the caller
    # has imported it: a backend without fused kernels of its own (Backend.borrows_attention) borrows them there.
    lends_attention: tuple[str, ...] = ()
    # Its arrays are lazy graphs: a handoff wraps or computes them (the conformance handoff pairs leave it out).
    lazy: bool = False
    # It takes part in handoff only (no array namespace of its own): the conformance suite runs no op cases.
    handoff_only: bool = False
    # Seconds its whole quick conformance run took in the project's recorded run (conformance/README.md), said before
    # it starts on a machine that kept no run of its own; 0 where it is quick.
    check_seconds: float = 0
    # Its dtype objects are also other libraries' (NumPy's, which JAX, CuPy and dask arrays carry): such a dtype
    # names no library for creation (ua.zeros(3, dtype=x.dtype) of a JAX array stays with the default backend).
    shared_dtypes: bool = False
    # Its argument names that ua's hints translate (ua.nn's keyword errors name them as this library's).
    api_names: tuple[str, ...] = ()

    def filled(self) -> "Library":
        """This record with an empty ``roots`` or ``distributions`` read as ``(name,)`` (the registry's form)."""
        return self._replace(roots=self.roots or (self.name,), distributions=self.distributions or (self.name,))
