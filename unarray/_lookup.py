"""Type -> backend lookup and the default backend: the bottom of dispatch, below the handoff.

A backend is found from ``type(x)`` alone, through the names of the modules in
the type's MRO, and cached per type: a call costs one dict lookup. Nothing here
imports a framework; a backend module is imported only once an array of its
framework has been seen (so the framework is already in ``sys.modules``) or the
caller named it (``backend="torch"``, ``ua.use("jax")``).

The leader rule for mixed inputs, which hands operands over, is a layer up (unarray/_dispatch.py;
the layers: docs/layout.md).
"""

from __future__ import annotations

import contextvars
import functools
import sys
from typing import TYPE_CHECKING, Any

from unarray import _backends, _precision
from unarray._errors import ArgumentTypeError, UnknownArrayTypeError

if TYPE_CHECKING:
    from unarray._backends._base import Backend

__all__ = ["BY_TYPE", "PASSIVE", "PY_SCALARS", "ROOTS", "SCALARS", "Viewed", "backend_named", "default_backend",
           "dtype_library", "of_array", "one", "register_imported", "resolve_type", "use"]

# Top-level module of a type -> backend name, from each backend package's facts.
ROOTS = {root: lib.name for lib in _backends.LIBRARIES.values() for root in lib.roots}
SCALARS = (bool, int, float, complex)
# Note: exact types, since NumPy scalars (np.float64 subclasses float) are arrays of the numpy backend.
PY_SCALARS = frozenset(SCALARS)
PASSIVE = frozenset((*SCALARS, type(None)))

BY_TYPE: dict[type, Backend] = {}


def resolve_type(t: type, op: str | None = None) -> Backend:
    for klass in t.__mro__:
        name = ROOTS.get(klass.__module__.partition(".")[0])
        if name is not None:
            backend = _backends.get(name, op=op)
            if not backend.is_array_type(t):
                break
            view = backend.plain_view(t, op)  # raises for a subclass that cannot be read as its base
            BY_TYPE[t] = backend if view is None else Viewed(backend, t, view)  # type: ignore[assignment]
            return BY_TYPE[t]
    raise UnknownArrayTypeError(
        f"got {t.__module__}.{t.__qualname__}, which is not an array of any supported library "
        f"({', '.join(_backends.NAMES)}); convert it first, e.g. ua.asarray(x)",
        op=op,
    )


def of_array(x: Any) -> Backend | None:
    """The backend of ``x`` if it is an array of a supported library (seen before or not), else None."""
    b = BY_TYPE.get(type(x))
    if b is not None:
        return b
    if type(x) in PASSIVE or type(x) in (list, tuple):
        return None
    try:
        return resolve_type(type(x))
    except UnknownArrayTypeError:
        return None


def dtype_library(dtype: Any) -> str | None:
    """The library whose own dtype object ``dtype`` is (``torch.float32``: torch), where it names one: not unarray's
    dtypes, names or Python types, nor a dtype several libraries' arrays carry (NumPy's)."""
    name = ROOTS.get(type(dtype).__module__.partition(".")[0])
    return None if name is None or _backends.LIBRARIES[name].shared_dtypes else name


def register_imported() -> None:
    """Register the array types a library declares early (``Library.early_types``: torch's tensor and parameter
    classes) ahead of their first lookup, where the library is imported already (unarray/__init__.py says why)."""
    for lib in _backends.LIBRARIES.values():
        top = sys.modules.get(lib.roots[0]) if lib.early_types else None
        if top is None:
            continue
        try:
            for path in lib.early_types:
                t: Any = functools.reduce(getattr, path.split("."), top)
                if t not in BY_TYPE:
                    resolve_type(t)
        except Exception:  # noqa: BLE001 - half imported, or its backend's requirements missing: first sight decides
            continue


def one(x: Any, op: str | None = None) -> Backend:
    """The backend of a single array argument."""
    b = BY_TYPE.get(type(x))
    if b is not None:
        return b
    if type(x) in PY_SCALARS:
        raise ArgumentTypeError(
            f"got a Python {type(x).__name__}, but this argument must be an array; wrap it with ua.asarray",
            op=op,
        )
    return resolve_type(type(x), op)


class Viewed:
    """A backend reached through a zero-copy view of an array subclass whose own semantics differ
    from the standard's (``np.matrix`` keeps every result 2-D): every op sees the plain base array
    (``np.asarray(m)``), so results have the standard's shapes. Resolved once per type."""

    def __init__(self, base: Backend, t: type, view: Any) -> None:
        self.base, self.name, self._type, self._view = base, base.name, t, view

    def plain(self, a: Any) -> Any:
        if isinstance(a, self._type):
            return self._view(a)
        if type(a) in (list, tuple) and any(isinstance(e, self._type) for e in a):
            return type(a)(self.plain(e) for e in a)
        return a

    def __getattr__(self, op: str) -> Any:
        if op.startswith("__"):
            raise AttributeError(op)
        attr = getattr(self.base, op)
        if not callable(attr) or isinstance(attr, type):
            return attr
        plain = self.plain

        def call(*args: Any, **kw: Any) -> Any:
            return attr(*[plain(a) for a in args], **{k: plain(v) for k, v in kw.items()})

        setattr(self, op, call)
        return call

    def __repr__(self) -> str:
        return f"<unarray backend {self.name} (through plain views of {self._type.__qualname__})>"


def backend_named(name: str | Any, op: str | None = None) -> Backend:
    if not isinstance(name, str):
        # A module (``numpy``, ``torch``) or an array namespace was passed (a bound one is named "unarray.torch").
        root, _, rest = getattr(name, "__name__", str(name)).partition(".")
        name = rest if root == "unarray" and rest else ROOTS.get(root, root)
    return _backends.get(name, op=op)


_DEFAULT: contextvars.ContextVar[tuple[str, Any]] = contextvars.ContextVar(
    "unarray_default_backend", default=(_backends.DEFAULT, None)
)


# Defaults set by ``ua.use`` inside a torch.compile trace, innermost last: the trace cannot run a
# ContextVar, a plain list it can (and it restores the list after the trace).
_TRACED: list[tuple[str, Any]] = []


def default_backend() -> tuple[str, Any]:
    if _TRACED and _precision.tracing():
        return _TRACED[-1]
    return _DEFAULT.get()


class use:
    """Set the default backend (and device) for creation functions.

    Works as a setter (``ua.use("torch")``) and as a context manager
    (``with ua.use("jax"): ...``) that restores the previous default on exit.
    The default lives in a ``contextvars.ContextVar``: threads and asyncio tasks
    each see their own.

    Examples:
        >>> import unarray as ua
        >>> with ua.use("numpy"):
        ...     type(ua.zeros(2)).__name__
        'ndarray'
    """

    def __init__(self, backend: str | Any = _backends.DEFAULT, device: Any = None):
        b = backend_named(backend, "use")
        if _precision.tracing():
            self._token: Any = None
            _TRACED.append((b.name, device))
        else:
            self._token = _DEFAULT.set((b.name, device))

    def __enter__(self) -> use:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is None:
            _TRACED.pop()
        else:
            _DEFAULT.reset(self._token)
