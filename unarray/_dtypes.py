"""Backend-neutral dtypes and the standard's type promotion.

``ua.float32`` is not a NumPy or torch dtype: it is a name that every backend
maps to its own dtype, and it compares equal to each of them
(``torch.float32 == ua.float32`` is ``True``), so code written against the
``unarray`` namespace can test ``x.dtype == ua.float32`` on any backend.
"""

from __future__ import annotations

from typing import Any

from unarray import _precision
from unarray._errors import ArgumentError, DTypeError

__all__ = [
    "DType",
    "DTYPE_NAMES",
    "canonical_name",
    "isdtype",
    "promote",
    "promote_names",
]

_KIND = {
    "bool": "bool",
    **{n: "signed integer" for n in ("int8", "int16", "int32", "int64")},
    **{n: "unsigned integer" for n in ("uint8", "uint16", "uint32", "uint64")},
    **{n: "real floating" for n in ("float16", "bfloat16", "float32", "float64")},
    **{n: "complex floating" for n in ("complex64", "complex128")},
}
DTYPE_NAMES = tuple(_KIND)
# The standard's dtypes (bfloat16 is an extension: never listed by the inspection API).
SPEC_DTYPE_NAMES = tuple(n for n in DTYPE_NAMES if n != "bfloat16")
# The 32-bit dtype that stands in for a 64-bit default where the 64-bit one is not available.
NARROW = {"float64": "float32", "complex128": "complex64", "int64": "int32", "uint64": "uint32"}
_BITS = {n: int("".join(c for c in n if c.isdigit()) or 8) for n in DTYPE_NAMES}

_name_cache: dict[Any, str] = {}
# Note: a Python tracer (torch.compile) wraps the whole dict it looks a dtype up in and cannot hash other libraries'
# dtypes: such a library's dtypes have a cache of their own, by their type's module (Library.tracer_module).
_OWN: dict[str, dict[Any, str]] = {}


def own_caches(modules: Any) -> None:
    """Give the dtypes whose type lives in each of ``modules`` a name cache of their own."""
    for m in modules:
        _OWN.setdefault(m, {})
_INT_RANGE = {n: ((-(1 << (_BITS[n] - 1)), (1 << (_BITS[n] - 1)) - 1) if n[0] == "i" else (0, (1 << _BITS[n]) - 1))
              for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")}


def check_int_scalar(op: str, backend: str | None, value: int, dtype: object) -> None:
    """Refuse a Python int that the integer ``dtype`` cannot hold (NumPy raises, torch, JAX and TF would wrap it or
    make it 0): the same typed error on every backend."""
    name = dtype.name if isinstance(dtype, DType) else canonical_name(dtype)
    bounds = _INT_RANGE.get(name or "")
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise ArgumentError(f"the Python int {value} is out of range for {name} ([{bounds[0]}, {bounds[1]}]); "
                            f"cast the array to a wider dtype first, or pass a value in range", op=op, backend=backend)


def canonical_name(dtype: object) -> str | None:
    """``"float32"`` for ``ua.float32``, ``np.float32``, ``torch.float32``, ``tf.float32``, ``"float32"``."""
    if type(dtype) is int:
        # Note: an int is never a dtype, but tf.int32 hashes as 3 and compares equal to it.
        return None
    if type(dtype) is DType:
        # Note: a DType hashes like its name: a cache lookup compares through DType.__eq__, which looks it up again.
        return dtype.name
    cache = _OWN.get(type(dtype).__module__, _name_cache)
    try:
        return cache[dtype]
    except (KeyError, TypeError):
        pass
    name = _compute_name(dtype)
    # Note: no write inside a torch.compile trace: Dynamo replays it after the graph and guards on the dict as it
    # was, so the next call recompiles (every ua.jit function compiled twice, and each new dtype once more).
    if name is not None and not _precision.tracing():
        try:
            cache[dtype] = name
        except TypeError:
            pass
    return name


def remember(dtypes: Any) -> None:
    """Name every dtype of a library up front (the torch backend's load), so that no lookup inside a
    compiled trace misses and writes."""
    for d in dtypes:
        canonical_name(d)


def _compute_name(dtype: object) -> str | None:
    if isinstance(dtype, DType):
        return dtype.name
    if isinstance(dtype, str):
        s = dtype
    elif isinstance(dtype, type):
        s = {float: "float64", complex: "complex128", int: "int64"}.get(dtype, "") or getattr(dtype, "__name__", "")
    else:
        s = getattr(dtype, "name", None) or str(dtype)
        if not isinstance(s, str):
            s = str(dtype)
    s = s.rsplit(".", 1)[-1].strip("'\"<>")
    s = {"bool_": "bool", "half": "float16", "float": "float32", "double": "float64",
         "cfloat": "complex64", "cdouble": "complex128", "long": "int64", "int": "int32",
         "short": "int16", "uint8_t": "uint8"}.get(s, s)
    return s if s in _KIND else None


class DType:
    """A backend-neutral dtype: ``ua.float32``, ``ua.int64``, ...

    Examples:
        >>> import numpy as np, unarray as ua
        >>> ua.float32 == np.float32, ua.float32 == np.dtype("float64")
        (True, False)
        >>> ua.isdtype(ua.int8, "integral")
        True
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"ua.{self.name}"

    def __eq__(self, other: object) -> bool:
        # Note: a str hashes like the DType of its name, so the name cache would call back here forever.
        if isinstance(other, DType):
            return other.name == self.name
        if isinstance(other, str):
            return _compute_name(other) == self.name
        return canonical_name(other) == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def kind(self) -> str:
        return _KIND[self.name]

    @property
    def bits(self) -> int:
        return _BITS[self.name]


# The dtype objects, one per name: ``ua.float32`` is ``DTYPES["float32"]`` (unarray/datatypes.py names them).
DTYPES: dict[str, DType] = {n: DType(n) for n in DTYPE_NAMES}


# The standard's kind names: each kind, and the two groups of kinds.
KIND_GROUPS = {**{k: {k} for k in _KIND.values()}, "integral": {"signed integer", "unsigned integer"},
                "numeric": {"signed integer", "unsigned integer", "real floating", "complex floating"}}


def isdtype(dtype: object, kind: str | object | tuple[Any, ...]) -> bool:
    """Whether ``dtype`` is of ``kind`` (a kind name, a dtype, or a tuple of either); any library's dtype.

        Parameters
        ----------
        dtype : dtype
            A dtype of any supported library, or a ``ua`` dtype.
        kind : str, dtype or tuple
            A kind name (``"bool"``, ``"signed integer"``, ``"unsigned integer"``, ``"integral"``,
            ``"real floating"``, ``"complex floating"``, ``"numeric"``), a dtype, or a tuple of those (any
            of them matches).

        Returns
        -------
        out : bool
            Whether ``dtype`` is of ``kind``.

        Raises
        ------
        DTypeError
            ``dtype`` is not a dtype.
        ArgumentError
            ``kind`` names no kind.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.isdtype(ua.float32, "real floating"), ua.isdtype(np.dtype("int8"), ("integral", "bool"))
        (True, True)
    """
    name = canonical_name(dtype)
    if name is None:
        raise DTypeError(f"{dtype!r} is not a dtype; pass a ua dtype (ua.float32) or a library's dtype",
                         op="isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str) and kind in KIND_GROUPS:
        return _KIND[name] in KIND_GROUPS[kind]
    other = canonical_name(kind)
    if other is None:
        raise ArgumentError(f"unknown kind {kind!r}; use one of {sorted(KIND_GROUPS)} or a dtype", op="isdtype")
    return name == other


def _build_promotion() -> dict[tuple[str, str], str]:
    table: dict[tuple[str, str], str] = {}
    ints = ["int8", "int16", "int32", "int64"]
    uints = ["uint8", "uint16", "uint32", "uint64"]
    floats, complexes = ["float16", "float32", "float64"], ["complex64", "complex128"]
    for group in (ints, uints, floats, complexes):
        for a in group:
            for b in group:
                table[a, b] = a if _BITS[a] >= _BITS[b] else b
    for u in uints[:-1]:  # Note: the standard defines uN x iM only where a signed type holds both (none for uint64).
        for i in ints:
            table[u, i] = table[i, u] = i if _BITS[i] > _BITS[u] else f"int{_BITS[u] * 2}"
    for f in floats:
        for c in complexes:
            wide = "complex128" if (c == "complex128" or f == "float64") else "complex64"
            table[f, c] = table[c, f] = wide
    # Note: bfloat16 is an extension; with float16 (float32) is beyond the standard: what torch and JAX both give.
    for f, out in (("bfloat16", "bfloat16"), ("float32", "float32"), ("float64", "float64"), ("float16", "float32")):
        table["bfloat16", f] = table[f, "bfloat16"] = out
    table["bool", "bool"] = "bool"
    return table


_PROMOTION = _build_promotion()


def promote_names(a: str, b: str) -> str | None:
    """The standard's result of promoting ``a`` with ``b``, or ``None`` where it leaves it undefined."""
    return _PROMOTION.get((a, b))


_RANK = {"bool": 0, "signed integer": 1, "unsigned integer": 1, "real floating": 2, "complex floating": 3}


def mixed_kinds(a: str, b: str) -> str | None:
    """unarray's rule where the standard leaves mixed kinds open: the higher kind's dtype, at its own width.

    bool or an integer with a real floating dtype gives the floating dtype (int32 with float32 is float32, int64
    with float16 is float16), with a complex dtype that complex dtype, bool with an integer that integer: what
    torch, JAX, TensorFlow and MLX do natively; NumPy's widening to float64 is corrected. Signed with unsigned
    beyond the standard's table (int8..int64 with uint64) has no rule: ``None``.
    """
    ka, kb = _RANK[_KIND[a]], _RANK[_KIND[b]]
    if ka == kb:
        return None
    return a if ka > kb else b


def promote(op: str | None, a: str, b: str, backend: str | None = None) -> str:
    """The result dtype's name of ``a`` with ``b``: the standard's table, else :func:`mixed_kinds`; a pair with
    neither (int64 with uint64: NumPy says float64 and loses integers, torch refuses, JAX picks a float) is refused
    with a :class:`~unarray.DTypeError` naming the fix."""
    out = _PROMOTION.get((a, b))
    if out is None:
        out = mixed_kinds(a, b)
        if out is None:
            raise DTypeError(f"{a} with {b} has no common dtype (the standard defines none and the libraries "
                             f"disagree); cast one side first: ua.astype(x, ua.{b}) for the {a} operand, or "
                             f"ua.astype(x, ua.{a}) for the {b} one", op=op, backend=backend)
    return out
