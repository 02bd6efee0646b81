"""Data types and data type functions: the dtype objects (``ua.float32``...),
``astype``, ``can_cast``, ``finfo``, ``iinfo``, ``isdtype``, ``result_type``.

The dtype objects are backend-neutral (see ``unarray._dtypes.DType``); every
function here also accepts the libraries' own dtypes.
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

from unarray import _docs
from unarray._backends import DEFAULT as _DEFAULT
from unarray._dispatch import BY_TYPE as _BY_TYPE
from unarray._dispatch import backend_named as _backend_named
from unarray._dispatch import fail as _fail
from unarray._dispatch import many as _many
from unarray._dispatch import one as _one
from unarray._dtypes import DTYPES, DType, canonical_name, isdtype, promote, promote_names
from unarray._errors import DTypeError
from unarray._lookup import ROOTS
from unarray._lookup import SCALARS as _SCALARS
from unarray._names import refuse as _refuse
from unarray._typing import A, Array, DeviceLike, DTypeLike, Refused

__all__ = [
    "astype", "bool", "can_cast", "complex64", "complex128", "finfo", "float16", "bfloat16", "float32",
    "float64", "iinfo", "int8", "int16", "int32", "int64", "isdtype", "result_type", "uint8", "uint16",
    "uint32", "uint64",
]

bool = DTYPES["bool"]  # noqa: A001 - the standard's name
int8 = DTYPES["int8"]
int16 = DTYPES["int16"]
int32 = DTYPES["int32"]
int64 = DTYPES["int64"]
uint8 = DTYPES["uint8"]
uint16 = DTYPES["uint16"]
uint32 = DTYPES["uint32"]
uint64 = DTYPES["uint64"]
float16 = DTYPES["float16"]
bfloat16 = DTYPES["bfloat16"]
float32 = DTYPES["float32"]
float64 = DTYPES["float64"]
complex64 = DTYPES["complex64"]
complex128 = DTYPES["complex128"]


def astype(x: A, dtype: DTypeLike, /, *, copy: builtins.bool = True, device: DeviceLike | None = None,
           **refused: Refused) -> A:
    """``x`` cast to ``dtype`` (a copy unless ``copy=False`` and nothing changes).

        Parameters
        ----------
        {x}
        dtype : dtype
            The target dtype (``ua.int32``, or the library's own).
        copy : bool
            ``True`` (the default) always returns a new array; ``False`` returns ``x`` itself when the dtype
            (and device) already match.
        device : device, optional
            Also move the result to this device.

        Returns
        -------
        out : array
            ``x``'s values in ``dtype`` (floats to integers truncate toward zero), of ``x``'s library.

        Raises
        ------
        {unknown_x}
        {dtype_unknown}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.astype(np.array([1.7, -2.2]), ua.int32)
        array([ 1, -2], dtype=int32)
    """
    if refused:
        _refuse(astype, refused, x)
    b = _BY_TYPE.get(type(x)) or _one(x, "astype")
    try:  # frame("astype"): its except clause is the template's (tools/gen_frontend.py)
        kw = {} if device is None else {"device": b.native_device(device)}
        return b.astype(x, b.dtype(dtype), copy=copy, **kw)
    except Exception as e:
        raise _fail("astype", b, e) from e


def can_cast(from_: DTypeLike | Array, to: DTypeLike, /, **refused: Refused) -> builtins.bool:
    """Whether the standard's promotion rules allow casting ``from_`` to ``to`` without loss of kind.

        Parameters
        ----------
        from_ : dtype or array
            The source dtype, or an array whose dtype it is.
        to : dtype
            The target dtype.

        Returns
        -------
        out : bool
            ``True`` if promoting ``from_`` with ``to`` gives ``to``.

        Raises
        ------
        DTypeError
            ``to`` (or ``from_``) is not a dtype the standard knows.

        Examples
        --------
        >>> import unarray as ua
        >>> ua.can_cast(ua.int8, ua.int16), ua.can_cast(ua.float64, ua.float32)
        (True, False)
    """
    if refused:
        _refuse(can_cast, refused, from_)
    src = _name(from_ if canonical_name(from_) else getattr(from_, "dtype", from_), "can_cast")
    dst = _name(to, "can_cast")
    return promote_names(src, dst) == dst


def result_type(*arrays_and_dtypes: Array | DTypeLike | complex, **refused: Refused) -> Any:
    """The dtype unarray's promotion gives for the arguments: what its functions give on arrays of those dtypes.

        The standard's table, and for the kinds it leaves open one rule on every backend: the higher kind's
        dtype at its own width (``int32`` with ``float32`` is ``float32``, ``int64`` with ``float16`` is
        ``float16``, an integer with ``complex64`` is ``complex64``). Signed with unsigned beyond the standard's
        table (``int8``..``int64`` with ``uint64``) is refused. With any array among the arguments, the answer
        is that backend's dtype (and its refusals: 64-bit dtypes on JAX without x64); with only ``ua`` dtypes, a
        ``ua`` dtype; with only one library's dtypes, that library's dtype. Python scalars follow the arrays'
        kinds.

        Parameters
        ----------
        *arrays_and_dtypes : array, dtype, or Python scalar
            The operands whose promoted dtype is wanted; at least one array or dtype.

        Returns
        -------
        out : dtype
            The promoted dtype.

        Raises
        ------
        DTypeError
            No array or dtype is given, or two dtypes have no common dtype (a signed integer with ``uint64``:
            cast one side first).

        Examples
        --------
        >>> import unarray as ua
        >>> ua.result_type(ua.int8, ua.uint8), ua.result_type(ua.int32, ua.float32)
        (ua.int16, ua.float32)
    """
    if refused:
        _refuse(result_type, refused, arrays_and_dtypes)
    arrays = [a for a in arrays_and_dtypes if not isinstance(a, _SCALARS) and canonical_name(a) is None]
    if arrays:
        b, _ = _many("result_type", arrays)
        return on_backend(b, arrays_and_dtypes, *promoted_name(arrays_and_dtypes))
    out, _ = promoted_name(arrays_and_dtypes)
    if out is None:
        raise DTypeError("needs at least one array or dtype", op="result_type")
    for v in arrays_and_dtypes:
        if isinstance(v, _SCALARS):
            out = _with_scalar(out, v)
    roots = {ROOTS.get(type(a).__module__.partition(".")[0]) for a in arrays_and_dtypes
             if not isinstance(a, (DType, str, *_SCALARS))} - {None}
    if len(roots) == 1:
        return _backend_named(roots.pop(), "result_type").dtype(out)
    return DTYPES[out]


def on_backend(b: Any, arrays_and_dtypes: tuple[Any, ...], out: str | None, crossed: builtins.bool) -> Any:
    """``b``'s dtype for ``result_type(*arrays_and_dtypes)``, whose promoted name is ``out`` (``crossed``: by the
    rule for mixed kinds): the backend's own answer where the standard's table decides (with its refusals), else
    the backend's dtype of the rule's answer."""
    try:  # frame("result_type"): its except clause is the template's (tools/gen_frontend.py)
        if not crossed or out is None:
            return b.result_type(*(a if isinstance(a, _SCALARS) or canonical_name(a) is None else b.dtype(a)
                                   for a in arrays_and_dtypes))
        return b.result_type(b.dtype(out), *(a for a in arrays_and_dtypes if isinstance(a, _SCALARS)))
    except Exception as e:
        raise _fail("result_type", b, e) from e


def promoted_name(arrays_and_dtypes: tuple[Any, ...]) -> tuple[str | None, builtins.bool]:
    # The promoted name of the arrays' and dtypes' (None: none, or one unarray does not name), and whether the rule
    # for mixed kinds decided it; a pair with no common dtype raises.
    out: str | None = None
    crossed = False
    for a in arrays_and_dtypes:
        if isinstance(a, _SCALARS):
            continue
        n = canonical_name(a) or canonical_name(getattr(a, "dtype", None))
        if n is None:
            return None, False
        if out is None:
            out = n
        elif n != out:
            crossed = crossed or promote_names(out, n) is None
            out = promote("result_type", out, n)
    return out, crossed


_COMPLEX_OF = {"float16": "complex64", "bfloat16": "complex64", "float32": "complex64", "float64": "complex128"}


def _with_scalar(name: str, v: builtins.bool | int | float | complex) -> str:
    # Note: a Python scalar keeps the dtype where its kind fits and widens only the kind, to the default dtype of
    # the default backend (ua.__array_namespace_info__), as each backend does next to an array.
    kind = DType(name).kind
    if isinstance(v, builtins.bool) or kind == "complex floating":
        return name
    if isinstance(v, int):
        return name if kind != "bool" else _default("integral")
    if isinstance(v, float):
        return name if kind == "real floating" else _default("real floating")
    return _COMPLEX_OF[name] if kind == "real floating" else _default("complex floating")


def _default(kind: str) -> str:
    from unarray.introspection import array_namespace_info

    return str(array_namespace_info().default_dtypes()[kind].name)


def finfo(type: DTypeLike | Array, /, **refused: Refused) -> Any:  # noqa: A002 - the standard's name
    """Machine limits of a floating dtype or an array's: ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal``.

        Parameters
        ----------
        type : dtype or array
            A real or complex floating dtype, or an array of one.

        Returns
        -------
        out : object
            The backend's ``finfo`` object, with ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` and
            ``dtype``.

        Raises
        ------
        DTypeError
            ``type`` is not floating-point.

        Examples
        --------
        >>> import unarray as ua
        >>> f = ua.finfo(ua.float32)
        >>> f.bits, f.eps
        (32, 1.1920928955078125e-07)
    """
    return _info(finfo, type, refused)


def iinfo(type: DTypeLike | Array, /, **refused: Refused) -> Any:  # noqa: A002
    """Machine limits of an integer dtype (or an array's dtype): ``bits``, ``max``, ``min``, ``dtype``.

        Parameters
        ----------
        type : dtype or array
            An integer dtype, or an array of one.

        Returns
        -------
        out : object
            The backend's ``iinfo`` object, with ``bits``, ``max``, ``min`` and ``dtype``.

        Raises
        ------
        DTypeError
            ``type`` is not an integer dtype.

        Examples
        --------
        >>> import unarray as ua
        >>> i = ua.iinfo(ua.int8)
        >>> i.bits, i.min, i.max
        (8, -128, 127)
    """
    return _info(iinfo, type, refused)


# (named tuples, not dataclasses: cheaper to build at `import unarray`, docs/design-notes.md)
class finfo_object(NamedTuple):  # noqa: N801 - the standard's name
    """``ua.finfo``'s answer: every field a Python ``int``/``float`` on every backend (2025.12)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: Any


class iinfo_object(NamedTuple):  # noqa: N801
    """``ua.iinfo``'s answer: Python ``int`` fields on every backend."""

    bits: int
    max: int
    min: int
    dtype: Any


def _info(fn: Any, t: Any, refused: dict[str, Any]) -> Any:
    if refused:
        _refuse(fn, refused, t)
    op = fn.__name__
    name = canonical_name(t)
    if name is None:
        b = _one(t, op)
    else:
        # (the class's bases too: the namespace bound to MLX hands out a subclass of MLX's dtype)
        root = next((r for k in type(t).__mro__ if (r := ROOTS.get(k.__module__.partition(".")[0]))), None)
        b = _backend_named(root or _DEFAULT, op)
    try:  # frame(op): its except clause is the template's (tools/gen_frontend.py)
        r = getattr(b, op)(t if name is None else b.dtype(name))
    except Exception as e:
        raise _fail(op, b, e) from e
    # Note: torch's finfo/iinfo name their dtype as a string; the field is the library's dtype object, the one its
    # arrays report (np.dtype, not NumPy's scalar type), as its bound namespace hands it out.
    of = canonical_name(r.dtype)
    dt = b.namespace_dtypes().get(of) if of is not None else None
    if dt is None:
        dt = b.dtype(of or r.dtype)
    if op == "iinfo":
        return iinfo_object(int(r.bits), int(r.max), int(r.min), dt)
    # Note: NumPy, JAX and CuPy give NumPy scalars; torch names smallest_normal "tiny" in old releases.
    tiny = getattr(r, "smallest_normal", None)
    return finfo_object(int(r.bits), float(r.eps), float(r.max), float(r.min),
                        float(tiny if tiny is not None else r.tiny), dt)


def _name(d: Any, op: str) -> str:
    name = canonical_name(d)
    if name is None:
        raise DTypeError(f"{d!r} is not a dtype", op=op)
    return name

_docs.fill(globals())
