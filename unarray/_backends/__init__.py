"""Backend registry: one module (or package) per framework, imported on first use only.

A backend module imports its framework at its top. It is imported here only
when an array of that framework has been seen (so the framework is already in
``sys.modules``) or when the caller names the backend.

The rule of this package: a backend holds only what differs from the generic
array-API path (``_base.Backend``), each deviation with a one-line reason; the
semantics live in the front end. The rest of unarray reaches a backend through
:func:`get`, never by importing its module, and a backend imports nothing above
it (not this registry, no lookup, no dispatch, no handoff hub, no front end), and no
library's package imports another's: what two libraries need of each other is
declared by one of them and composed here and in the handoff hub; a lazy library's
backend gets the backends that run its chunks from here when it is built; where a
backend needs a step of the handoff (a graph break, a dask join) the caller passes it in.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from unarray import _dtypes, _precision
from unarray._backends._library import Library
from unarray._devices import Device, accelerator_free
from unarray._errors import BackendNotAvailableError

if TYPE_CHECKING:
    from unarray._backends._base import Backend
    from unarray._backends._handoff import Handoff

# The registry line: one name per backend package (unarray/_backends/<name>/).
NAMES = ("numpy", "torch", "jax", "cupy", "tensorflow", "numba", "dask", "mlx")
# The embedded default backend (creation without an array, ua.use()): the one hard dependency.
DEFAULT = "numpy"
ALIASES = {"tf": "tensorflow", "np": "numpy", "jnp": "jax", "pytorch": "torch", "cp": "cupy"}

# Each package's facts, read without importing its framework (the package's __init__ imports none).
LIBRARIES: dict[str, Library] = {n: importlib.import_module(f"unarray._backends.{n}").LIBRARY.filled() for n in NAMES}
# The core below this registry names no library: it learns the tracers' facts from the records here.
_precision.watch_tracing(lib.tracing_flag for lib in LIBRARIES.values() if lib.tracing_flag)
_dtypes.own_caches(root for lib in LIBRARIES.values() if lib.tracer_module for root in lib.roots)

_LOADED: dict[str, Backend] = {}


def after_tracer(name: str, hook: Any) -> bool:
    """Run ``hook()`` once library ``name``'s tracer module is imported (now where it is), through the one watch its
    package declares (``Library.tracer_watch``); False where it declares none."""
    if not LIBRARIES[name].tracer_watch:
        return False
    importlib.import_module(f"unarray._backends.{name}.watch").after_import(hook)
    return True


def known_devices(name: str) -> tuple[Device, ...] | None:
    """The devices backend ``name`` would list, where they are known without importing its framework: on a
    machine whose OS shows no GPU or TPU driver, the CPU (none for a GPU-only backend). None where only the
    framework can tell, where it is imported already, and for NumPy (the default backend): then it is asked."""
    if name in _LOADED or name in sys.modules or name in ("numpy", "cupy") or not accelerator_free():
        return None
    return () if LIBRARIES[name].accelerator_only else (Device("cpu"),)


def get(name: str, op: str | None = None) -> Backend:
    canonical = ALIASES.get(name, name)
    if canonical in _LOADED:
        return _LOADED[canonical]
    if canonical not in NAMES:
        raise BackendNotAvailableError(f"unknown backend {name!r}; known: {', '.join(NAMES)}", op=op)
    try:
        module = _import(canonical)
    except ImportError as e:
        raise BackendNotAvailableError(
            f"backend {canonical!r} is not installed or failed to import ({e}); "
            f"install it with: {install_hint(canonical)}",
            op=op,
            backend=canonical,
        ) from e
    backend: Backend = module.BACKEND
    if LIBRARIES[canonical].lazy:  # a graph's chunks run on the eager libraries' backends, each built on first use
        module.BACKEND.chunks = _OnFirstUse()
    if backend.compiling is not None:  # a tracer sharing the array type: its own probe from now on
        _precision.watch_tracing(compiling=backend.compiling)
    _LOADED[canonical] = _LOADED[name] = backend
    return backend


class _OnFirstUse(dict[str, "Backend"]):
    """Backends by name, each built when first asked for (a framework is never imported unasked)."""

    def __missing__(self, name: str) -> Backend:
        return self.setdefault(name, get(name))


def install_hint(name: str) -> str:
    lib = LIBRARIES.get(name)
    cpu, gpu = (lib.install_cpu, lib.install_gpu) if lib else ("", "")
    if cpu and gpu:
        return f"{cpu} (CPU build; {gpu})"
    return cpu or gpu or f"pip install {name}"


def _import(name: str) -> Any:
    # Note: torch by an import statement, not importlib: torch.compile's tracer runs an import statement for
    # real at trace time, so a first unarray call inside a compiled function (cold process) loads its backend;
    # importlib.import_module is a function it refuses to trace.
    if name == "torch":
        from unarray._backends.torch import backend as torch_module

        return torch_module
    return importlib.import_module(f"unarray._backends.{name}.backend")


_HANDOFFS: dict[str, Handoff] = {}


def handoff(name: str) -> Handoff:
    """Backend ``name``'s handoff declaration (its package's ``handoff`` module, which imports no
    framework until a converter runs): what ``unarray.interop`` asks of a library."""
    h = _HANDOFFS.get(name)
    if h is None:
        h = _HANDOFFS[name] = importlib.import_module(f"unarray._backends.{name}.handoff").HANDOFF
    return h


# (name, top module, device kinds) of each library that lends its fused attention kernels (Library.lends_attention)
_LENDERS = tuple((lib.name, lib.roots[0], lib.lends_attention) for lib in LIBRARIES.values() if lib.lends_attention)


def attention_lender(b: Backend, q: Any, imported: bool = True) -> str | None:
    """The library whose fused attention kernels take ``q`` (an array of ``b``, which borrows them) zero-copy on
    its device, where the caller has imported it (with ``imported=False``: one that would, not imported), else
    None. unarray never imports a framework on its own (DESIGN 1.2)."""
    if not b.borrows_attention:
        return None
    for name, root, kinds in _LENDERS:
        if name != b.name and (root in sys.modules) is imported and b.device_of(q).kind in kinds:
            return name
    return None


def loaded() -> dict[str, Backend]:
    return {k: v for k, v in _LOADED.items() if k in NAMES}


def installed(name: str) -> bool:
    import importlib.util  # (ua.backends() alone asks)

    return importlib.util.find_spec(name) is not None
