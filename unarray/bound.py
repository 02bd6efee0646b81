"""``ua.array_namespace``: unarray's namespace bound to the caller's library and device.

Generic code written the way the ecosystem writes it (``xp = array_namespace(x)``) gets one namespace
per (backend, device): every function of ``unarray`` as it is at module level (so a call costs what
``ua.f`` costs), creation functions that allocate in the bound library on the bound device, and an
``__array_namespace_info__`` describing that library and device.
"""

from __future__ import annotations

import copy
import functools
import sys
import types
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from unarray import _names
from unarray._devices import Device, from_native
from unarray._dispatch import backend_named, default_backend, leader, one
from unarray._dispatch import run_as_written as _run_as_written
from unarray._dtypes import DTYPES, DType, canonical_name
from unarray._errors import ArgumentError
from unarray._lookup import PASSIVE, ROOTS, SCALARS, of_array
from unarray._names import FOREIGN, RECIPES
from unarray.datatypes import on_backend, promoted_name
from unarray.interop import _compile_watch
from unarray.introspection import Info, with_library

if TYPE_CHECKING:
    from unarray._backends._base import Backend
    from unarray._namespace_types import PublicNames
else:
    PublicNames = object  # the types of the public names, for the type checker (generated)

__all__ = ["BoundNamespace", "array_namespace", "namespace"]

# The standard's versions a caller may ask for (the newest, implemented here, keeps the older ones' functions).
_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")
# Creation functions with no array argument: bound to the namespace's backend and device.
_CREATION = ("arange", "asarray", "empty", "eye", "full", "linspace", "ones", "zeros")
_FFT_CREATION = ("fftfreq", "rfftfreq")

# unarray's public names (functions, dtypes, constants, extensions), filled once this module is defined (below).
_PUBLIC: dict[str, Any] = {}
_CACHE: dict[tuple[str, type, Device | None, bool], BoundNamespace] = {}  # (the class: as _info.with_library's)
# (backend, the ua.use device as written) -> the namespace of the device it names.
_DEFAULTS: dict[tuple[str, str | None], BoundNamespace] = {}
# (array type, the array's own .device) -> its namespace: the lookup of array_namespace(x) for a known x.
_BY_DEVICE: dict[tuple[type, Any], BoundNamespace] = {}


class BoundNamespace(PublicNames):
    """unarray's namespace bound to one backend and device: what :func:`array_namespace` returns.

    Every standard function, constant and dtype, and unarray's extras (``nn``, ``linalg``, ``fft``,
    ``scaled_dot_product_attention``, ``at``, ``apply_numpy``, ``to``, ``jit``, ``precision``,
    ``explain``...), are unarray's own module-level objects: they dispatch on their array arguments
    as ``ua.f`` does, with unarray's semantics (precision policy, corrections). What differs is what
    has no array to dispatch on:

    - the creation functions (``asarray``, ``zeros``, ``ones``, ``empty``, ``full``, ``arange``,
      ``linspace``, ``eye``, ``fft.fftfreq``, ``fft.rfftfreq``) allocate in the bound backend on the
      bound device; an explicit ``device=`` or ``backend=`` still wins (a device that names its own
      library, ``torch.device`` or a ``ua.Device`` from another library's array, creates there).
      ``asarray`` puts host data on the bound device: lists, scalars, buffers, and arrays of another
      library in host memory (a NumPy array; one copy where the bound device is an accelerator). An
      array of the bound library, or of another library on an accelerator, keeps its device (handed
      over by :func:`unarray.to`, zero-copy where it can).
    - ``__array_namespace_info__()`` describes the bound backend and device: its devices, its default
      dtypes, and only the dtypes that device holds (no float64 on a TPU).
    - the dtypes are the library's own, the objects its arrays report as ``x.dtype`` (``torch.float32``;
      ``np.dtype("float32")`` for NumPy, JAX, dask and CuPy; ``tf.float32``; MLX's), as array-api-compat's
      namespaces hold: generic code keys dicts and sets by them (``{d: n for n, d in
      info.dtypes().items()}[x.dtype]``), which needs them to hash as ``x.dtype`` does, not only compare
      equal. ``__array_namespace_info__()`` lists those same objects; a name the library lacks
      (``complex128`` on MLX, ``bfloat16`` on NumPy) stays unarray's. The module-level ``ua.float32`` is
      unarray's, equal to each; every unarray function takes either. ``__name__`` names the library
      (``"unarray.torch"``): code that tells namespaces apart by name tells them apart (no module of that name).
    - ``result_type`` of dtypes alone answers as the bound backend's functions do on arrays of those
      dtypes: unarray's promotion (the standard's table, and for the kinds it leaves open the higher
      kind's dtype at its own width: ``float32`` with ``int32`` is ``float32``), as ``ua.result_type``
      answers, with the backend's refusals (uint32 with int16 on JAX without x64).

    A type checker reads every name as the module's own (``xp.sum`` as ``ua.sum``: the caller's array type
    comes back), from declarations generated from ``unarray.__all__`` (unarray/_namespace_types.py).

    Attributes
    ----------
    backend : str
        The bound backend's name (``"numpy"``, ``"torch"``, ``"jax"``, ``"tensorflow"``, ``"dask"``,
        ``"cupy"``).
    device : Device or None
        Where creation allocates (carrying ``library``); None when bound to a JAX or TensorFlow tracer
        (the trace places what it creates). A tensor traced by ``torch.compile`` binds to its device.
    lazy : bool
        Whether the backend's arrays are lazy (dask): their values are known only once computed.
    immutable : bool
        Whether the backend's arrays cannot be written in place (JAX, TensorFlow): use
        :func:`unarray.at` for indexed updates in code meant for every backend.

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> xp = ua.array_namespace(np.ones(3))
    >>> xp
    <unarray namespace bound to numpy on cpu>
    >>> xp.backend, xp.lazy, xp.immutable, xp.sum is ua.sum, xp.__name__
    ('numpy', False, False, True, 'unarray.numpy')
    >>> xp.float32, {xp.float32: "f4"}[np.ones(2, np.float32).dtype]
    (dtype('float32'), 'f4')
    >>> type(xp.zeros(2, device=xp.device)).__name__
    'ndarray'
    """

    backend: str
    device: Device | None
    lazy: bool
    immutable: bool

    def __init__(self, b: Any, device: Device | None) -> None:
        self.__dict__.update(_PUBLIC)
        own = b.namespace_dtypes()
        self.__dict__.update(own)
        self.backend, self.device, self.lazy, self.immutable = b.name, device, b.lazy, b.immutable
        self.__name__ = f"unarray.{b.name}"  # the library it serves, as array-api-compat names its namespaces
        bound: dict[str, Any] = {name: _bound(_PUBLIC[name], b.name, device) for name in _CREATION}
        bound["asarray"] = _bound(_PUBLIC["asarray"], b.name, device, converts=True)
        bound["result_type"] = _bound_result_type(_PUBLIC["result_type"], b.name)
        bound["fft"] = _BoundFFT(_PUBLIC["fft"], b.name, device)
        if own:
            bound["finfo"], bound["iinfo"] = _own_info(_PUBLIC["finfo"], own), _own_info(_PUBLIC["iinfo"], own)
        info = Info(b, device, own)
        bound["__array_namespace_info__"] = lambda: info
        self.__dict__.update(bound)  # what has no array to dispatch on, bound to this backend and device

    def __repr__(self) -> str:
        where = "the trace's device" if self.device is None else str(self.device)
        return f"<unarray namespace bound to {self.backend} on {where}>"

    def __dir__(self) -> list[str]:
        return _names.public_dir(_PUBLIC, "backend", "device", "lazy", "immutable", "__array_namespace_info__")

    if not TYPE_CHECKING and sys.version_info >= (3, 12):  # (a checker keeps refusing names the namespace lacks)
        # Note: ua.<name>'s error for a misspelling; on 3.11 a __getattr__ would cost every xp.<name>
        # (docs/design-notes.md, "Name lookups"), so there a misspelling keeps Python's own error.
        def __getattr__(self, name: str) -> Any:
            raise _names.error(name)


class _BoundFFT:
    """``xp.fft``: unarray.fft's functions, with ``fftfreq`` and ``rfftfreq`` creating in the bound backend and
    on the bound device."""

    def __init__(self, fft: types.ModuleType, backend: str, device: Any) -> None:
        self.__dict__.update({n: getattr(fft, n) for n in fft.__all__})
        self.__dict__.update({n: _bound(getattr(fft, n), backend, device) for n in _FFT_CREATION})

    def __repr__(self) -> str:
        return "<unarray.fft bound to a namespace>"

    def __dir__(self) -> list[str]:
        return _names.public_dir(self.__dict__)


class _Foreign:
    """A NumPy or torch name the namespace lacks (``xp.concatenate``): reading it raises ``ua.<name>``'s
    error, an AttributeError (so ``hasattr`` is False). A descriptor per name rather than ``__getattr__``,
    which on Python 3.11 would keep the interpreter from specialising every ``xp.<name>`` lookup."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        raise _names.error(self.name)


for _name in (*FOREIGN, *RECIPES):
    setattr(BoundNamespace, _name, _Foreign(_name))
del _name


def _bound(fn: Callable[..., Any], backend: str, device: Any, converts: bool = False) -> Callable[..., Any]:
    # converts (asarray): only host data goes to the bound device (_host_data).
    @functools.wraps(fn)
    def call(*args: Any, device: Any = None, backend: Any = None, **kwargs: Any) -> Any:
        # Note: a device of the bound library (x.device, torch.device("cpu")) keeps the result there too, whatever
        # obj's library (array-api-extra's lazy_apply ends with xp.asarray(np_result, device=x.device)).
        if backend is None and (device is None or _library(device) in (None, bound_backend)):
            backend = bound_backend
            if device is None and not (converts and args and not _host_data(args[0], bound_backend)):
                device = bound_device
        return fn(*args, device=device, backend=backend, **kwargs)

    bound_backend, bound_device = backend, device
    return call


def _bound_result_type(fn: Callable[..., Any], backend: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def result_type(*arrays_and_dtypes: Any) -> Any:
        dtypes = [a for a in arrays_and_dtypes if not isinstance(a, SCALARS)]
        if not dtypes or any(canonical_name(a) is None for a in dtypes):
            return fn(*arrays_and_dtypes)  # an array leads (its backend answers), or nothing to promote
        # Note: dtypes alone promote as ua.result_type does, with the bound backend's refusals (uint32 with int16 on
        # JAX without x64): what xp.add(a, b) gives, so generic code can size its outputs by it.
        b = backend_named(backend, "result_type")
        native = on_backend(b, arrays_and_dtypes, *promoted_name(arrays_and_dtypes))
        name = canonical_name(native)
        if name is None or not all(isinstance(a, (DType, str)) for a in dtypes):
            # the library's dtype for the library's dtypes, as ua.result_type gives (the namespace's object for it)
            return b.namespace_dtypes().get(name, native) if name is not None else native
        return DTYPES[name]

    return result_type


def _own_info(fn: Callable[..., Any], own: dict[str, Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def info(type: Any, /) -> Any:  # noqa: A002 - the standard's name
        out = fn(type)
        # Note: where the namespace hands out its library's own dtypes (MLX), the answer's dtype is the namespace's
        # too, also for one of unarray's it lacks (finfo(xp.complex128).dtype is xp.float64).
        d = own.get(canonical_name(out.dtype) or "")
        return out if d is None else out._replace(dtype=d)

    return info


def _host_data(obj: Any, bound: str) -> bool:
    # Note: what generic code builds from (lists, scalars, NumPy arrays) goes to the bound device; an array of the
    # bound library, or one on an accelerator, keeps its device (moving it between devices is the caller's call).
    src = of_array(obj)
    if src is None:
        return True
    return src.name != bound and not src.is_tracer(obj) and src.device_of(obj).kind == "cpu"


def _library(device: Any) -> str | None:
    # The library a device object names (a ua.Device from ua.device(x), torch.device, a JAX device); None for a string.
    if isinstance(device, Device):
        return device.library
    if isinstance(device, str):
        return None
    root = type(device).__module__.partition(".")[0]
    return ROOTS.get(root, root)


def array_namespace(*arrays: Any, api_version: str | None = None) -> BoundNamespace:
    """unarray's namespace bound to the backend and device of ``arrays``: ``xp = ua.array_namespace(x)``.

        The namespace generic code asks for (the name the ecosystem uses: array-api-compat, SciPy,
        scikit-learn). Its functions are unarray's own, so code written against it keeps unarray's
        semantics on every backend; its creation functions and ``__array_namespace_info__`` are bound
        to the arrays' library and device (see :class:`BoundNamespace`). One namespace object per
        (backend, device), cached: a later call costs a type and device lookup and a dict lookup.

        Parameters
        ----------
        *arrays : array, Python scalar or None
            The arrays whose library the namespace serves. Python scalars and None are ignored. Of
            arrays of several libraries, the one a call on them would be led by leads (the first, unless
            a traced, lazy or distributed one comes later). With no array: the default backend and
            device (:class:`unarray.use`, NumPy on the CPU unless set).
        api_version : str, optional
            The version of the standard the caller is written against (``"2021.12"`` to ``"2025.12"``);
            the namespace implements 2025.12, which keeps the older versions' functions. An older version
            gets its own ``__array_api_version__`` and inspection API: ``devices()`` is a list before
            2025.12, a tuple from it. Default: the newest.

        Returns
        -------
        out : BoundNamespace
            The namespace, with ``.backend``, ``.device``, ``.lazy`` and ``.immutable`` saying what it is
            bound to.

        Notes
        -----
        The namespace's dtypes are the library's own, the objects its arrays report (``torch.float32``,
        ``np.dtype("float32")`` for NumPy, JAX, dask and CuPy, ``tf.float32``), so generic code's
        ``x.dtype == xp.float32`` and its dict and set lookups by ``x.dtype`` hold; on MLX a subclass of
        MLX's dtype that also compares with ``None`` (MLX's own answers False beside any other object).
        Every unarray function takes them wherever it takes a dtype (``dtype=``, ``astype``, ``isdtype``,
        ``finfo``, ``iinfo``, ``result_type``, ``can_cast``), with any backend's arrays: a dtype is read by
        its name, so ``mx.float32`` with a torch tensor means ``torch.float32``; a name the target backend
        lacks is refused as unarray's dtype of that name is there. ``x.dtype == ua.float32`` (unarray's
        module-level dtype on the right) stays False on MLX arrays: write ``ua.float32 == x.dtype``.

        Raises
        ------
        UnknownArrayTypeError
            An argument is not an array of a supported library.
        ArgumentError
            ``api_version`` is not a version of the standard.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> x = np.array([1.0, 2.0, 4.0])
        >>> xp = ua.array_namespace(x, 2.0, None)
        >>> xp.backend, xp.device
        ('numpy', Device('cpu'))
        >>> bool(xp.mean(x / xp.max(x)) == ua.mean(x / ua.max(x)))
        True
        >>> xp is ua.array_namespace(np.zeros(1))
        True
    """
    if api_version is not None and api_version != _VERSIONS[-1]:
        if api_version not in _VERSIONS:
            _bad_version(api_version)
        return _as_version(array_namespace(*arrays), api_version)
    if len(arrays) == 1:
        x = arrays[0]
        try:  # the common call: one array, of a type and device seen before
            return _BY_DEVICE[type(x), x.device]
        except Exception:  # noqa: BLE001 - not seen yet, no .device, a tracer's or an unhashable device: the full way
            pass
    return _resolve(arrays)


def _bad_version(api_version: object) -> None:
    raise ArgumentError(f"api_version must be one of {', '.join(_VERSIONS)} or None; got {api_version!r}",
                        op="array_namespace")


def _resolve(arrays: tuple[Any, ...]) -> BoundNamespace:
    xs = [a for a in arrays if type(a) not in PASSIVE]
    if not xs:
        name, where = default_backend()
        return _namespace(backend_named(name, "array_namespace"), where, "default")
    x = xs[leader("array_namespace", xs)] if len(xs) > 1 else xs[0]
    b = one(x, "array_namespace")
    if b.is_tracer(x):
        # Note: a traced tensor that keeps its device (torch.compile's: its backend has `compiling`) binds to it; a
        # tracer of its own type (JAX's) is placed by its trace: bound to none.
        return _namespace(b, None if b.compiling is None else b.device_of(x), "traced")
    ns = _namespace(b, b.device_of(x), "array")
    if len(arrays) == 1:
        try:
            _BY_DEVICE[type(x), x.device] = ns
        except Exception:  # noqa: BLE001 - no .device or an unhashable one: this array takes the full way
            pass
    return ns


def _traced_array_namespace(*arrays: Any, api_version: str | None = None) -> BoundNamespace:
    # What torch.compile traces in place of array_namespace: _traced_name runs for real (a call of constants), so
    # neither the caches nor the construction are traced; the trace reads the one attribute of _TRACED it names.
    if api_version is not None and api_version not in _VERSIONS:
        _bad_version(api_version)
    xs = [a for a in arrays if type(a) not in PASSIVE]
    if xs:
        x = xs[leader("array_namespace", xs)] if len(xs) > 1 else xs[0]
        b = one(x, "array_namespace")
        if b.compiling is not None and b.is_tracer(x):
            return getattr(_TRACED, _traced_name(b.name, x.device))  # type: ignore[no-any-return]
    return _resolve(arrays)


class _Traced:
    """The namespaces of traced tensors, one attribute each (named by _traced_name)."""


_TRACED = _Traced()
_TRACED_NAMES: dict[tuple[str, Any], str] = {}


def _traced_name(backend: str, device: Any) -> str:
    # The attribute of _TRACED holding the namespace of a tensor traced on device (the library's own), made once.
    name = _TRACED_NAMES.get((backend, device))
    if name is None:
        ns = _namespace(backend_named(backend, "array_namespace"), from_native(device), "traced")
        name = f"ns{len(_TRACED_NAMES)}"
        setattr(_TRACED, name, ns)
        _TRACED_NAMES[backend, device] = name
    return name


_compile_watch.install(array_namespace, _traced_array_namespace, "register_traced")
_compile_watch.install(_traced_name, None, "register_constant")


# (namespace, an older version of the standard) -> that namespace as the version says it.
_OLDER: dict[tuple[int, str], BoundNamespace] = {}


def _as_version(ns: BoundNamespace, version: str) -> BoundNamespace:
    # Note: an older version differs only in the inspection API (devices() a list before 2025.12) and its number.
    key = (id(ns), version)
    out = _OLDER.get(key)
    if out is None:
        out = copy.copy(ns)
        info: Info = ns.__dict__["__array_namespace_info__"]().for_version(version)
        out.__dict__.update(__array_namespace_info__=lambda: info, __array_api_version__=version)
        out = _OLDER.setdefault(key, out)
    return out


def _namespace(b: Backend, where: Any, source: str) -> BoundNamespace:
    if source == "default":  # the default device, or one named by ua.use ("cuda:0"): where creation puts it
        named = (b.name, None if where is None else str(where))
        ns = _DEFAULTS.get(named)
        if ns is None:
            ns = _DEFAULTS[named] = _namespace(b, Info(b, where).default_device(), "array")
        return ns
    key = (b.name, type(where), where, source == "traced")
    ns = _CACHE.get(key)
    if ns is None:
        real = backend_named(b.name, "array_namespace")  # the backend itself, not a view of an array subclass
        ns = BoundNamespace(real, None if where is None else with_library(where, real.name))
        ns = _CACHE.setdefault(key, ns)
    return ns


def namespace(*arrays: Any) -> BoundNamespace:
    """Deprecated: use :func:`array_namespace`, which this now returns (it warns).

        ``ua.namespace`` returned the library's own array-API namespace (``array_api_compat.torch``),
        whose functions lack unarray's semantics; ``ua.array_namespace`` returns unarray's namespace bound
        to the arrays' library.

        Parameters
        ----------
        *arrays : array
            As :func:`array_namespace`.

        Returns
        -------
        out : BoundNamespace
            ``ua.array_namespace(*arrays)``.

        Examples
        --------
        >>> import warnings, numpy as np, unarray as ua
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     ua.namespace(np.zeros(2)) is ua.array_namespace(np.zeros(2))
        True
    """
    warnings.warn("ua.namespace is deprecated and will be removed: use ua.array_namespace(*arrays), the "
                  "namespace generic code asks for", DeprecationWarning, stacklevel=2)
    return array_namespace(*arrays)


# Every namespace array_namespace returns holds unarray's public names (creation re-bound to its library).
_UA = sys.modules["unarray"]
_PUBLIC.update({n: getattr(_UA, n) for n in _UA.__all__}, __array_api_version__=_UA.__array_api_version__)

# tf.function runs this module's functions as written, however it was imported (_dispatch.run_as_written).
_run_as_written(sys.modules[__name__])
