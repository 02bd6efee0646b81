"""A backend's hot calls, declared once: the branch of a hot op that is one native call, and its guards.

A backend declares each such branch as a :class:`HotCall`, named fields only: the op, the native callable, the
arrays' class, how many arrays, the dtypes, the other parameters' values at which it is taken, the device rule
(:class:`Here`), the size bound (:class:`Bound`) and how a precision policy reaches it (:class:`Keyword`,
:class:`Gated`). :meth:`HotCall.bind` writes the backend's op from the declaration and the op's general path: the
Python op tests the declared guards and calls the native, else the general path. Where the C fast path is built
(``unarray._fast``, unarray/_fast.c), ``bind`` hands it the same declaration, whose fields the C reads by name
when it registers the op; on the front end's hot path the C then takes the branch itself, without the op's frame,
and runs the general path for every other call. A branch therefore exists once, in its declaration, and the two
paths cannot differ (``tests/ops/test_hot_path.py`` holds them equal bit for bit on every backend).

A native that raises takes the general path instead (in C: the front end's reference runs the call again), so
the general path's checks give the op's errors.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from unarray import _native

__all__ = ["Bound", "Gated", "Here", "HotCall", "Keyword"]

_FAST = _native.load("_fast")


class Here(NamedTuple):
    """The branch only where the first array is on the current device, ``x.<attr>.<sub> == current()``: a library
    whose calls run on the current device rather than the array's (CuPy)."""

    attr: str
    sub: str
    current: Callable[[], Any]

    def holds(self, x: Any) -> bool:
        try:
            where = getattr(getattr(x, self.attr), self.sub)
        except AttributeError:
            return False
        return bool(where == self.current())


class Bound(NamedTuple):
    """The branch only below a size: ``x.<size> < limit`` wherever ``x.<on>`` is true (``on`` None: everywhere),
    and ``x.<same[0]> is same[1]`` where ``same`` is given."""

    size: str
    limit: int
    on: str | None = None
    same: tuple[str, Any] | None = None

    def holds(self, x: Any) -> bool:
        same = self.same
        if same is not None and getattr(x, same[0], None) is not same[1]:
            return False
        if self.on is not None:
            on = getattr(x, self.on, None)
            if on is None:
                return False
            if not on:
                return True  # (the size rule does not apply)
        n = getattr(x, self.size, None)
        return isinstance(n, int) and n < self.limit


class Keyword(NamedTuple):
    """The policy's value passed to the native as a keyword: ``native(x1, x2, <keyword>=values[policy])``
    (JAX's ``precision=``)."""

    keyword: str
    values: Mapping[str, Any]


class Gated(NamedTuple):
    """A matmul whose result a precision policy can change for some dtypes (torch's, CuPy's).

    A dtype in ``anywhere`` is the native's everywhere; in ``on_host``, where ``x1.<host>`` is true; in
    ``reducible``, where also ``flags.<flag>`` is false and (``limit`` >= 0) ``x1.numel() * x2.numel() <=
    limit * max(1, x1.shape[-1])``, a product below the size at which a reduced-precision pass can run. A
    reducible dtype's other calls run ``gate(wants[(x1.<host>, policy)], native, x1, x2)``, the precision
    switch's call, where ``gate`` is given; ``host`` None reads as false (a library of one kind of device).
    ``tracing``: while it is true the gate is not taken (the general path has the traced route; the C path is
    never met inside a trace)."""

    anywhere: frozenset[Any]
    on_host: frozenset[Any]
    reducible: frozenset[Any]
    host: str | None
    limit: int
    flags: Any
    flag: str
    gate: Callable[..., Any] | None = None
    wants: Mapping[tuple[bool, str], Any] | None = None
    tracing: Callable[[], bool] | None = None

    def small(self, x1: Any, x2: Any) -> bool:
        if getattr(self.flags, self.flag):
            return False
        if self.limit < 0:
            return True
        n1, n2, last = math.prod(x1.shape), math.prod(x2.shape), max(1, x1.shape[-1] if x1.shape else 1)
        return bool(n1 == 0 or n2 == 0 or n1 * n2 <= self.limit * last)


class HotCall(NamedTuple):
    """One branch of a backend's hot op that is one native call, and the guards it is taken under.

    ``op``: the backend's op; ``native``: what the branch calls; ``cls``: the arrays' exact class; ``arrays``:
    1 (a method ``(self, x, *params)``, taken where each of ``params`` is ``defaults``' value by identity) or 2
    (two arrays of one dtype object: a binary function ``(x1, x2)``, or with a ``policy`` a method
    ``(self, x1, x2, policy)``); ``dtypes``: the first array's dtypes the branch takes (None: any, none read);
    ``device``: only on the current device; ``max_size``: only within a bound; ``policy``: how a precision policy
    reaches the native; one array only: ``keywords``, passed to the native, and ``then``, what its result goes
    through."""

    op: str
    native: Callable[..., Any]
    cls: type
    arrays: int = 1
    dtypes: frozenset[Any] | None = None
    defaults: tuple[Any, ...] = ()
    device: Here | None = None
    max_size: Bound | None = None
    policy: Keyword | Gated | None = None
    keywords: Mapping[str, Any] | None = None
    then: Callable[[Any], Any] | None = None

    def bind(self, general: Callable[..., Any], *, fast: bool = True) -> Callable[..., Any]:
        """The op: this branch, else ``general`` (the op less the branch, same signature); handed to the C fast
        path where it is built (``fast`` False: not, e.g. while a tracer runs, where a C call breaks the graph)."""
        writer = _writers.get((self.arrays, type(self.policy)))
        if writer is None or ((self.then, self.keywords) != (None, None) and self.arrays != 1):
            raise TypeError(f"HotCall {self.op}: arrays is 1 or 2, a call with a policy takes two arrays, and one "
                            "with keywords or then one")
        fn = writer(self, general)
        if self.arrays == 1 or self.policy is not None:  # a method: named as the one it stands for (ua.explain)
            for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
                if hasattr(general, attr):
                    setattr(fn, attr, getattr(general, attr))
        fn.hot_call, fn.general = self, general  # type: ignore[attr-defined]
        if _FAST is not None and fast:
            _FAST.register(fn, self, general)
        return fn


# The Python reading of each kind of declaration: the fields are read once, into the closure, not per call.


def _one(c: HotCall, general: Callable[..., Any]) -> Callable[..., Any]:
    native, dtypes, defaults, then = c.native, c.dtypes, c.defaults, c.then
    if c.keywords:
        native = functools.partial(native, **c.keywords)
    cls: Any = c.cls  # (a type test on Any narrows nothing)
    here = c.device.holds if c.device is not None else None
    bound = c.max_size.holds if c.max_size is not None else None
    n = len(defaults)

    def op(self: Any, x: Any, *params: Any) -> Any:
        if type(x) is cls and len(params) == n and _at(params, defaults) \
                and (dtypes is None or x.dtype in dtypes) and (bound is None or bound(x)) \
                and (here is None or here(x)):
            try:
                return native(x) if then is None else then(native(x))
            except Exception:  # noqa: BLE001 - the general path gives the op's error
                pass
        return general(self, x, *params)

    return op


def _at(params: tuple[Any, ...], defaults: tuple[Any, ...]) -> bool:
    for p, d in zip(params, defaults, strict=True):
        if p is not d:
            return False
    return True


def _binary(c: HotCall, general: Callable[..., Any]) -> Callable[..., Any]:
    native = c.native
    cls: Any = c.cls  # (a type test on Any narrows nothing)
    here = c.device.holds if c.device is not None else None

    # (any arguments: a library's ops may be wrapped alike, the binary ones taking the branch)
    def op(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 2 and not kwargs:
            x1, x2 = args
            if type(x1) is cls and type(x2) is cls and x1.dtype is x2.dtype and (here is None or here(x1)):
                try:
                    return native(x1, x2)
                except Exception:  # noqa: BLE001 - the general path gives the op's error
                    pass
        return general(*args, **kwargs)

    op.__wrapped__ = native  # type: ignore[attr-defined]  # (ua.explain names the kernel it wraps)
    return op


def _keyword(c: HotCall, general: Callable[..., Any]) -> Callable[..., Any]:
    native = c.native
    cls: Any = c.cls  # (a type test on Any narrows nothing)
    assert isinstance(c.policy, Keyword)
    keyword, values = c.policy.keyword, c.policy.values

    def op(self: Any, x1: Any, x2: Any, policy: str) -> Any:
        if type(x1) is cls and type(x2) is cls and x1.dtype is x2.dtype and policy in values:
            try:
                return native(x1, x2, **{keyword: values[policy]})
            except Exception:  # noqa: BLE001 - the general path gives the op's error
                pass
        return general(self, x1, x2, policy)

    return op


def _gated(c: HotCall, general: Callable[..., Any]) -> Callable[..., Any]:
    native, g = c.native, c.policy
    cls: Any = c.cls  # (a type test on Any narrows nothing)
    assert isinstance(g, Gated)
    here = c.device.holds if c.device is not None else None
    anywhere, on_host, reducible, host, gate, wants = g.anywhere, g.on_host, g.reducible, g.host, g.gate, g.wants
    tracing = g.tracing

    def op(self: Any, x1: Any, x2: Any, policy: str) -> Any:
        d = getattr(x1, "dtype", None)
        if type(x1) is cls and type(x2) is cls and d is x2.dtype and (here is None or here(x1)):
            at = host is not None and bool(getattr(x1, host))
            if d in anywhere or (d in on_host and at) or (d in reducible and at and g.small(x1, x2)):
                try:
                    return native(x1, x2)
                except Exception:  # noqa: BLE001 - the general path gives the op's error
                    pass
            elif d in reducible and gate is not None and wants is not None and not (tracing is not None and tracing()):
                want = wants.get((at, policy))
                if want is not None:
                    return gate(want, native, x1, x2)
        return general(self, x1, x2, policy)

    return op


_writers: dict[tuple[int, type], Callable[[HotCall, Callable[..., Any]], Callable[..., Any]]] = {
    (1, type(None)): _one, (2, type(None)): _binary, (2, Keyword): _keyword, (2, Gated): _gated}
