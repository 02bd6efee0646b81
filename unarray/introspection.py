"""Introspection: which backend and device an array has, what is installed,
and what a call would do (``ua.explain``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from unarray import _backends, _docs, _precision
from unarray._backends._info import Info, with_library
from unarray._devices import Device
from unarray._dispatch import backend_named, default_backend, leader, one, same_device
from unarray._dispatch import run_as_written as _run_as_written
from unarray._dtypes import DType
from unarray._explanation import PLANNERS, Explanation
from unarray._lookup import SCALARS
from unarray._typing import Array

__all__ = ["BackendInfo", "Explanation", "Info", "array_namespace_info", "backend_of", "backends", "device",
           "explain", "with_library"]


def backend_of(x: Array) -> str:
    """The name of the backend that owns ``x`` (``"numpy"``, ``"torch"``, ``"jax"``, ...).

        Parameters
        ----------
        {x_any}

        Returns
        -------
        out : str
            The backend's name.

        Raises
        ------
        {unknown_x}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.backend_of(np.zeros(2))
        'numpy'
    """
    return one(x, "backend_of").name


def device(x: Array, /) -> Device:
    """Where ``x`` lives, as a backend-neutral :class:`Device`.

        For a JAX array sharded over several devices, a :class:`ShardedDevice` (its mesh, partition spec and
        devices).

        Parameters
        ----------
        {x_any}

        Returns
        -------
        out : Device
            The device: ``kind`` (``"cpu"``, ``"cuda"``, ``"rocm"``, ``"tpu"``...), ``index``, and ``library``
            (``x``'s backend), so that ``ua.zeros(3, device=ua.device(x))`` is an array of ``x``'s library on
            ``x``'s device. It equals ``x``'s own device object (``ua.device(x) == x.device``).

        Raises
        ------
        {unknown_x}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.device(np.zeros(2))
        Device('cpu')
        >>> ua.device(np.zeros(2)).library
        'numpy'
    """
    b = one(x, "device")
    return with_library(b.placement_of(x), b.name)


@dataclass(frozen=True)
class BackendInfo:
    """One row of :func:`backends`."""

    name: str
    installed: bool
    version: str | None
    loaded: bool
    usable: bool | None = None
    devices: tuple[Device, ...] = ()
    error: str | None = None


def _version(name: str) -> str | None:
    import importlib.metadata  # (on first use: it imports about 60 modules)

    for dist in _backends.LIBRARIES[name].distributions:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def backends(probe: bool = False) -> list[BackendInfo]:
    """What is installed, what is loaded, and (with ``probe=True``) what runs and on which devices.

        Without ``probe`` nothing is imported; with it, each installed backend is
        imported and asked for its devices.

        Parameters
        ----------
        probe : bool
            Import each installed backend and list its devices. Default ``False``.

        Returns
        -------
        out : list of BackendInfo
            One entry per backend unarray knows, in a fixed order (NumPy first).

        Examples
        --------
        >>> import unarray as ua
        >>> info = ua.backends()
        >>> info[0].name, info[0].installed
        ('numpy', True)
    """
    out = []
    for name in _backends.NAMES:
        installed = _backends.installed(name)
        loaded = name in sys.modules
        info = BackendInfo(name, installed, _version(name) if installed else None, loaded)
        if probe and installed:
            try:
                info = BackendInfo(name, True, info.version, True, True, tuple(_backends.get(name).devices()))
            except Exception as e:  # a broken install is reported, not raised
                info = BackendInfo(name, True, info.version, loaded, False, (), f"{type(e).__name__}: {e}")
        out.append(info)
    return out


_PRECISION_OPS = {"matmul", "tensordot", "vecdot", "scaled_dot_product_attention", "linalg.matmul"}


def _array_args(args: tuple[Any, ...]) -> list[Any]:
    # The positional arguments that are not Python scalars, strings, None or sequences; else the arrays of the
    # first sequence (ua.concat([a, b])); a sequence of numbers (a shape, asarray's nested lists) holds none.
    passive = (*SCALARS, str, tuple, list, type(None), DType)
    arrays = [a for a in args if not isinstance(a, passive)]
    if not arrays:
        seq = next((a for a in args if isinstance(a, (tuple, list))), ())
        arrays = [a for a in seq if not isinstance(a, passive)]
    return arrays


def explain(op: str | Callable[..., Any], *args: Any, **kwargs: Any) -> Explanation:
    """Say which backend, device, kernel, precision and copies ``ua.<op>(*args, **kwargs)`` would use.

        The op does not run. ``op`` may also be a :class:`unarray.jit` function: the explanation then names
        the compiler its call would use, why, and whether it is compiled already (``JitExplanation``).

        Arrays of libraries other than the leading array's are handed over as the call would hand them (on
        the leader's device, else :class:`DeviceMismatchError`, as the call raises); a handoff that would
        copy is counted in ``copies`` and named with the reason in ``handoffs``. No copy is made: the
        zero-copy views are made and dropped, and ``ua.stats()`` counts no handoff for them.

        Parameters
        ----------
        op : str or callable
            The name of a unarray function (``"matmul"``, ``"linalg.svd"``), the function itself, or a
            :class:`unarray.jit` function.
        *args : object
            The arguments the call would get.
        **kwargs : object
            The keyword arguments the call would get (``precision=``, ``axis=``...).

        Returns
        -------
        out : Explanation
            ``backend``, ``device``, ``kernel``, ``precision``, ``copies`` and ``handoffs``; ``str()`` of it is
            the multi-line report.

        Raises
        ------
        ArgumentError
            ``op`` names no unarray function.
        UnknownArrayTypeError
            An argument is not an array of a supported library.
        DeviceMismatchError
            The arrays live on different devices (as the call would raise).

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> e = ua.explain("matmul", np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))
        >>> e.backend, e.kernel
        ('numpy', 'numpy.matmul')
        >>> ua.explain("sum", np.ones(3)).kernel  # the callable the call runs, named where it is found
        'unarray._backends.numpy.backend.NumpyBackend.sum'
        >>> ua.explain("zeros", (2, 3)).device
        Device('cpu')
    """
    from unarray._explain_check import bind, resolve
    from unarray._jit import jit
    from unarray.interop._public import copy_reason, explain_to, handoff_name

    if isinstance(op, jit):  # a ua.jit function: its compiler, cache entry and fallbacks
        return op.explain(*args, **kwargs)
    if op == "to":  # a handoff: its path, its copies, the readonly promise it rests on
        bind("to", explain_to, args, kwargs, "ua.explain('to', x, target_backend_name)")
        return explain_to(*args, **kwargs)
    resolve(op, args, kwargs)  # what the call itself would refuse (its name, its argument types)
    op = cast(str, op)  # resolve refused anything but the name of an op
    arrays = _array_args(args)
    if not arrays:
        from unarray.creation import _creation_backend, zeros

        lead, _ = _creation_backend(op, kwargs.get("backend"), kwargs.get("device"))
        # Where the call would allocate: an empty array made as it would make its result.
        where = lead.device_of(zeros((0,), backend=kwargs.get("backend"), device=kwargs.get("device")))
        return Explanation(op, lead.name, where, lead.kernel_name(op, args, kwargs), None)
    li = leader(op, arrays)  # a traced, lazy or distributed operand leads wherever it is
    arrays = [arrays[li], *arrays[:li], *arrays[li + 1:]]
    lead = one(arrays[0], op)
    dev = lead.device_of(arrays[0])
    handoffs = []
    copies = 0
    for a in arrays[1:]:
        b = one(a, op)
        if b is lead:
            continue
        same_device(op, lead, arrays[0], b, a)
        path = handoff_name(a, lead, op)  # the converter of the route the call takes
        why = copy_reason(a, lead.name, op)
        if why is None:
            handoffs.append(f"{b.name} -> {lead.name} via {path}")
        else:
            copies += 1
            handoffs.append(f"{b.name} -> {lead.name}: one copy ({why})")
    prec = None
    if op in _PRECISION_OPS and lead.dtype_name(arrays[0]) in ("float32", "complex64"):
        prec = lead.precision_used(_precision.resolve(kwargs.get("precision")), arrays[0])
    elif op in _PRECISION_OPS:
        prec = f"{lead.dtype_name(arrays[0])} (the policy applies to float32 only)"
    planner = PLANNERS.get(op)
    kernel = planner(*args, **kwargs)[1].label if planner is not None else lead.kernel_name(op, args, kwargs)
    return Explanation(op, lead.name, dev, kernel, prec, tuple(handoffs), copies)


def array_namespace_info() -> Info:
    """The inspection API of the default backend and device (:func:`unarray.use`), NumPy when nothing is set."""
    name, dev = default_backend()
    return Info(backend_named(name, "__array_namespace_info__"), dev)

# tf.function runs this module's functions as written, however it was imported (_dispatch.run_as_written).
_run_as_written(sys.modules[__name__])

_docs.fill(globals())
