"""``ua.jit``: compile backend-agnostic code with the compiler of whatever arrays arrive.

The leading array of a call (the rule of the ops: the first array among the arguments, read through
tuples, lists and dicts; a traced one leads an eager one) picks the compiler: ``jax.jit`` for JAX,
``torch.compile`` for torch, ``tf.function`` for TensorFlow, ``mx.compile`` for MLX. NumPy, CuPy, dask
and Numba arrays run eagerly unless the caller names a compiler (their arrays are then handed to the compiler's library
zero-copy where it can be, and the results handed back). One compiled callable is kept per leading
backend, device, static argument values, precision policy and default backend (``ua.use``), so a
policy change compiles anew instead of reusing a graph traced under another policy.

Nothing here imports a framework: the compiler is imported when the first call of its arrays comes.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from unarray import _dispatch, _precision, interop
from unarray import _jit_compilers as _jc
from unarray._backends import LIBRARIES
from unarray._backends._compiler import EAGER, Compiler
from unarray._devices import Device
from unarray._errors import ArgumentError, ArgumentTypeError, CompileError, UnarrayError, UnknownArrayTypeError
from unarray._explanation import Explanation
from unarray._jit_compilers import JitGraphBreakWarning
from unarray._jit_keys import JitStateWarning, Reads, static_positions, typed
from unarray._lookup import BY_TYPE, SCALARS

__all__ = ["JitExplanation", "JitFallbackWarning", "JitGraphBreakWarning", "JitStateWarning", "jit"]

_EAGER = "eager"
# The compilers a caller can name: the libraries that have one of their own (their backend's compiler), and eager.
_NAMES = (*[n for n, lib in LIBRARIES.items() if lib.compiles], _EAGER)
_PASSIVE = frozenset((*SCALARS, type(None), str, bytes))


class JitFallbackWarning(UserWarning):
    """A :class:`jit` function could not be compiled for its arguments and runs eagerly instead."""


@dataclass(frozen=True)
class JitExplanation(Explanation):
    """What a call of a :class:`jit` function does: the compiler, why, and whether it is compiled already.

    ``kernel`` names the compiler as called (``"torch.compile(fullgraph=False, backend='eager')"``);
    ``precision`` is the policy the compiled code holds.
    """

    compiler: str = ""
    reason: str = ""
    static: tuple[tuple[str, Any], ...] = ()
    cache: str = "miss"
    fallbacks: tuple[str, ...] = ()

    def __str__(self) -> str:
        lines = [f"ua.jit({self.op}): backend={self.backend} device={self.device}",
                 f"  compiler: {self.kernel}", f"  why: {self.reason}", f"  precision: {self.precision}",
                 f"  static: {dict(self.static)}", f"  cache: {self.cache}"]
        lines += [f"  handoff: {h}" for h in self.handoffs]
        lines += [f"  fallback: {f}" for f in self.fallbacks]
        return "\n".join(lines)


@dataclass
class _Entry:
    run: Callable[..., Any]
    compiler: str  # a backend's name (its compiler), "eager" or "callable"
    label: str
    reason: str
    target: str | None = None  # the library inputs are handed to (a compiler the caller named)
    fallback: str | None = None  # set once the compiler failed: the call runs eagerly from then on
    calls: int = 0
    packed: bool = False  # run takes (args, kwargs) as two objects (torch's: no repacking at each level)
    rebuild: Callable[[dict[str, Any]], Callable[..., Any]] | None = None  # the compiler with other options


class jit:
    """Compile a function written with ``ua`` ops with the compiler of the arrays it is called with.

    ``@ua.jit`` (or ``ua.jit(fn, ...)``) returns a callable that compiles ``fn`` on its first call for
    each leading backend, device, set of static argument values and precision policy: ``jax.jit`` for
    JAX arrays, ``torch.compile`` for torch tensors, ``tf.function`` for TensorFlow tensors, ``mx.compile``
    for MLX arrays (every non-array argument compiled in, keyed by type and value as static ones are).
    NumPy, CuPy, dask and Numba arrays run eagerly unless ``compiler`` names one. The compiled callable is cached;
    ``ua.explain(f, *args)`` says which compiler a call uses, why, and whether it is compiled already.

    The precision policy (``ua.precision``) in force at the call holds inside the compiled code: the
    policy is part of the cache key, so a call under another policy traces anew (a torch compiled call runs
    inside unarray's precision switch, held at that policy for the whole call as it is for an eager op).
    If the compiler fails (a ``.item()`` under ``jax.jit``, a backend that raises), the call runs eagerly,
    a :class:`JitFallbackWarning` says why, and that cache entry runs eagerly from then on; with
    ``fullgraph=True`` a :class:`CompileError` is raised instead.
    An error the function raises eagerly too (a :class:`ShapeError` of its own ops) is raised as it is.
    Inside another trace (``ua.jit`` in ``jax.jit``, in ``torch.compile``) ``fn`` is traced as written.

    A compiled call gives the eager call's answer on every backend. Static arguments are keyed by type and value
    (``1``, ``True`` and ``1.0`` are three entries). ``jax.jit``, ``tf.function`` and ``mx.compile`` read a
    function's globals and closure variables once, while tracing; for those entries ``ua.jit`` reads them again
    at each call and keys on their values (numbers, strings, tuples and small dicts, lists and sets by contents,
    so a change compiles anew; anything else by identity, with a :class:`JitStateWarning` the first time, since a
    change made to it in place is not seen). The rule, and why ``ua.jit`` keys instead of freezing state at the
    first trace, is in ``docs/jit.md``. A graph break under ``torch.compile`` is reported once per entry
    (:class:`JitGraphBreakWarning`); with ``fullgraph=True`` it is a :class:`CompileError` saying what broke.
    A torch entry is guarded on everything its result depends on (the arguments, the caller's globals,
    torch's global state; the policy, the default backend and the device are the cache key), not on
    unarray's own modules, which hold nothing a call can change (see ``unarray/_backends/torch/compiled.py``).

    Parameters
    ----------
    fn : callable, optional
        The function. Leave it out to get a decorator: ``@ua.jit(static_argnames="n")``.
    static_argnums : int or sequence of int
        Positions of arguments whose values are compiled in (hashable Python values).
    static_argnames : str or sequence of str
        Names of such arguments.
    compiler : {None, "jax", "torch", "tensorflow", "mlx", "eager"} or callable
        ``None``: the leading array's own compiler; ``"eager"``: no compilation; a library's name: its
        compiler, with the inputs handed to that library (``ua.to``, zero-copy where possible) and the
        results handed back to the leading array's library; a callable: ``compiler(fn, **options)``
        returning the compiled function.
    fullgraph : bool
        Raise :class:`CompileError` instead of falling back to eager execution, and ask ``torch.compile``
        for one graph without breaks (``torch.compile(fullgraph=True)``).
    **options : object
        Passed to the compiler: ``backend=``, ``mode=``, ``dynamic=`` for ``torch.compile``;
        ``donate_argnums=`` for ``jax.jit``; ``jit_compile=``, ``reduce_retracing=`` for ``tf.function``;
        ``inputs=``, ``outputs=`` for ``mx.compile`` (``shapeless=True`` is refused: a shapeless trace keeps
        values read from the first call's shapes).
        A keyword named after a compiler (``torch={"mode": "max-autotune"}``) holds options for that
        compiler only, so one function can be called with arrays of several libraries.

    Returns
    -------
    out : jit
        The compiled function (``functools.wraps``-style; ``.explain(*args)``, ``.cache_info()``,
        ``.clear_cache()``), or a decorator when ``fn`` is left out. Its results are arrays of the
        leading argument's library.

    Raises
    ------
    ArgumentError
        ``compiler`` is an unknown name, a static argument name is not a parameter of ``fn``, or the compiler
        refuses an option's value (named in the message), when built or on the first call.
    ArgumentTypeError
        A static argument value is not hashable, or the compiler refuses an option's name or type.
    CompileError
        With ``fullgraph=True``, where the compiler fails (``__cause__`` is its error).
    BackendNotAvailableError
        A named compiler's library is not installed.

    Warns
    -----
    JitFallbackWarning
        The compiler failed and the call ran eagerly (once per cache entry).
    JitGraphBreakWarning
        ``torch.compile`` split the function at a graph break (once per cache entry, on its first call).
    JitStateWarning
        A ``jax.jit``, ``tf.function`` or ``mx.compile`` entry reads state it can key by identity only (once per
        function).

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> @ua.jit(static_argnames="axis")
    ... def normalise(x, axis):
    ...     return ua.nn.softmax(x, axis=axis)
    >>> x = np.array([[0.0, np.log(3.0)], [1.0, 1.0]])
    >>> normalise(x, axis=1)  # NumPy has no compiler: eager, and the result is NumPy's
    array([[0.25, 0.75],
           [0.5 , 0.5 ]])
    >>> e = ua.explain(normalise, x, axis=1)
    >>> e.backend, e.compiler, e.cache, e.static
    ('numpy', 'eager', 'hit', (('axis', 1),))
    """

    def __init__(self, fn: Callable[..., Any] | None = None, /, *, static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (), compiler: str | Callable[..., Any] | None = None,
                 fullgraph: bool = False, **options: Any) -> None:
        if compiler is not None and not callable(compiler) and compiler not in _NAMES:
            lib = LIBRARIES.get(compiler) if isinstance(compiler, str) else None
            why = f" ({lib.no_compiler})" if lib is not None and lib.no_compiler else ""
            raise ArgumentError(f"unknown compiler {compiler!r}{why}; use None (the leading array's own), one of "
                                f"{_NAMES}, or a callable compiler(fn, **options)", op="jit")
        self._nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self._names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self._compiler, self.fullgraph, self._options = compiler, bool(fullgraph), options
        self._fn = fn
        self._cache: dict[Hashable, _Entry] = {}
        self._lock = threading.Lock()
        self._stats = {"hits": 0, "misses": 0, "fallbacks": 0}
        self._compilers: list[str] = []  # each miss's compiler, in order
        self._reads: Reads | None = None  # what fn reads, for the compilers that bake it into a trace
        self._named: Compiler | None = None  # the compiler named by compiler=, once looked up
        if fn is not None:
            functools.update_wrapper(self, fn)
            self._positions = static_positions(fn, self._nums, self._names, lambda m: ArgumentError(m, op="jit"))

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self._fn
        if fn is None:  # ua.jit(static_argnames=...) used as a decorator
            if len(args) != 1 or kwargs or not callable(args[0]):
                raise ArgumentTypeError("ua.jit(...) without a function is a decorator: apply it to one "
                                        "function, e.g. @ua.jit(static_argnames='n')", op="jit")
            return jit(args[0], static_argnums=self._nums, static_argnames=self._names, compiler=self._compiler,
                       fullgraph=self.fullgraph, **self._options)
        lead, leaf = self._leader(args, kwargs)
        if (leaf is not None and lead.is_tracer(leaf)) or _precision.tracing():
            return fn(*args, **kwargs)  # inside an outer trace: traced as written
        entry, key, _ = self._entry(lead, leaf, args, kwargs)
        if entry is None:
            entry = self._compile(key, lead)
        else:
            self._stats["hits"] += 1
        entry.calls += 1
        if entry.fallback is not None:
            return fn(*args, **kwargs)
        target = entry.target  # None: the leading array's own compiler (the common call: no handoff)
        a, k = (args, kwargs) if target is None else self._hand(args, kwargs, target)
        try:
            out = entry.run(a, k) if entry.packed else entry.run(*a, **k)
        except Exception as e:
            return self._failed(entry, lead, e, args, kwargs)
        return out if target is None else _map(out, lambda x: _to(x, lead.name))

    def _failed(self, entry: _Entry, lead: Any, e: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if isinstance(e, Warning):
            raise e  # one of ua.jit's warnings, made an error by the caller's filter
        name = getattr(self._fn, "__qualname__", repr(self._fn))
        if entry.rebuild is not None and not isinstance(e, UnarrayError) and entry.calls == 1:
            self._check_options(entry, lead, e, args, kwargs)
        why = _jc.what_broke(e)
        if self.fullgraph:
            if isinstance(e, UnarrayError):
                raise e  # typed already: the function's own error, or one saying what tracing lacks
            raise CompileError(f"{entry.label} could not compile {name} for these arguments ({why}); make the "
                               "function traceable there, or leave fullgraph=False to fall back to eager execution "
                               "with a warning", op="jit", backend=lead.name) from e
        assert self._fn is not None
        # Note: an error the function raises eagerly too is raised as it is (so such a call runs twice).
        out = self._fn(*args, **kwargs)
        entry.fallback = f"{entry.label} failed ({why}); runs eagerly"
        self._stats["fallbacks"] += 1
        warnings.warn(JitFallbackWarning(
            f"ua.jit [{lead.name}]: {entry.label} could not compile {name} ({why}); it runs eagerly for these "
            f"arguments from now on. For the compiler's full error, compile with ua.jit({name}, fullgraph=True)"),
            stacklevel=4)
        return out

    def _check_options(self, entry: _Entry, lead: Any, e: Exception, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> None:
        # A compiler that checks its options at the first call (jax.jit): where it compiles without them, they are
        # what it refused (backend=, compiler_options=), a typed error naming them instead of a fallback.
        assert entry.rebuild is not None
        opts = self._options_for(entry.compiler)

        def compiles(o: dict[str, Any]) -> bool:
            try:
                run = entry.rebuild(o)  # type: ignore[misc]
                a, k = (args, kwargs) if entry.target is None else self._hand(args, kwargs, entry.target)
                run(a, k) if entry.packed else run(*a, **k)
            except Exception:
                return False
            return True

        if compiles({}):
            bad = [k for k in opts if not compiles({k: opts[k]})]
            raise _jc.refused(entry.compiler, self._compiler_of(entry.compiler), opts, lead.name, e, bad,
                              self._compiler) from e

    # -- the cache key --------------------------------------------------------------------------
    def _leader(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
        pos, names = self._positions, self._names
        values = [a for i, a in enumerate(args) if i not in pos] if pos else list(args)
        if kwargs:
            values += [v for n, v in kwargs.items() if n not in names]
        # One pass for the common call (one library's arrays, at most one level down); else the ops' rule below.
        leaves: list[Any] = []
        for a in values:
            t = type(a)
            if t is dict:
                leaves.extend(a.values())
            elif t is list or t is tuple:
                leaves.extend(a)
            else:
                leaves.append(a)
        lead = leaf = None
        for x in leaves:
            b = BY_TYPE.get(type(x))
            if b is None:
                if type(x) not in _PASSIVE:
                    break
            elif lead is None:
                lead, leaf = b, x
            elif b is not lead:
                break
        else:
            if lead is None:  # no array argument: the default backend, as for creation functions
                return _dispatch.backend_named(_dispatch.default_backend()[0], "jit"), None
            return lead, leaf  # one library's arrays: the first leads (the ops' rule, without its scan)
        arrays: list[Any] = []
        for a in values:
            _arrays(a, arrays)
        if not arrays:
            return _dispatch.backend_named(_dispatch.default_backend()[0], "jit"), None
        leaf = arrays[_dispatch.leader("jit", arrays)]  # the ops' rule: a traced, lazy or distributed one leads
        return BY_TYPE.get(type(leaf)) or _dispatch.one(leaf, "jit"), leaf

    def _entry(self, lead: Any, leaf: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> tuple[_Entry | None, Hashable, Any]:
        # The cache entry of the call (None: a miss), its key, and its static arguments.
        static: tuple[tuple[str, Any], ...] = ()
        if self._positions:
            n_args = len(args)
            static = tuple([(f"#{i}" if n is None else n, args[i]) for i, n in self._positions.items() if i < n_args])
        if self._names and kwargs:
            static += tuple([(n, kwargs[n]) for n in self._names if n in kwargs])
        default = _dispatch.default_backend()
        where = lead.device_of(leaf) if leaf is not None else default[1]
        # Note: keyed by type too: 1, True and 1.0 are equal with one hash, yet trace apart (isinstance, indexing).
        key = (lead.name, where, tuple([(n, typed(v)) for n, v in static]) if static else static,
               _precision.current(), default)
        comp = lead.compiler if self._compiler is None else self._named or self._name_compiler()
        if comp.bakes_state:
            reads = self._reads
            if reads is None or reads.watched or comp.bakes_arguments:
                kind = lead.name if self._compiler is None else str(self._compiler)
                key = self._traced_key(kind, comp, key, args, kwargs)
        try:
            return self._cache.get(key), key, static
        except TypeError:
            _unhashable(static, lead)

    def _name_compiler(self) -> Compiler:
        # The compiler named by compiler= (a library's: its backend is loaded, as building it would).
        self._named = self._compiler_of("callable" if callable(self._compiler) else str(self._compiler))
        return self._named

    def _compiler_of(self, kind: str) -> Compiler:
        return EAGER if kind in (_EAGER, "callable") else _dispatch.backend_named(kind, "jit").compiler

    def _traced_key(self, kind: str, comp: Compiler, key: tuple[Any, ...], args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> tuple[Any, ...]:
        # Keyed on the state a trace bakes in (unarray/_jit_keys.py), and where the compiler bakes every Python
        # argument in by equality (tf.function), on the non-static ones' types.
        reads = self._reads
        if reads is None:
            assert self._fn is not None
            reads = self._reads = Reads(self._fn, kind)
        if reads.watched:
            key += (reads.key(),)
        if comp.bakes_arguments:
            key += (tuple([type(a) for a in args]), tuple([(n, type(v)) for n, v in kwargs.items()]))
        return key

    # -- compiling ------------------------------------------------------------------------------
    def _choose(self, lead: Any) -> tuple[str, str | None, str]:
        c = self._compiler
        if callable(c):
            return "callable", None, f"the compiler passed to ua.jit ({getattr(c, '__name__', c)!r})"
        if c is None:
            if lead.compiler is EAGER:
                return _EAGER, None, (f"{lead.name} has no compiler: runs eagerly (name one, e.g. "
                                      f"compiler={_NAMES[0]!r}, to compile)")
            return lead.name, None, f"the leading argument is a {lead.name} array"
        if c == _EAGER or c == lead.name:
            return c, None, f"compiler={c!r} was named"
        return c, c, f"compiler={c!r} was named: {lead.name} inputs are handed to {c} and the results back"

    def _compile(self, key: Hashable, lead: Any) -> _Entry:
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None:
                self._stats["hits"] += 1
                return entry
            kind, target, reason = self._choose(lead)
            opts = self._options_for(kind)
            where, policy = key[1], key[3]  # type: ignore[index]
            comp = self._compiler_of(kind)
            entry = _Entry(self._build(kind, opts, lead.name, where, policy), kind, self._label(kind, opts), reason,
                           target, packed=comp.packed)
            if opts and comp.checks_options_late:  # (a failure at the first call may be an option it refuses)
                entry.rebuild = lambda o: self._build(kind, o, lead.name, where, policy)
            if comp.breaks_graphs and not self.fullgraph:
                entry.run = _jc.watch_breaks(comp, entry, getattr(self._fn, "__qualname__", repr(self._fn)),
                                             lead.name)
            self._cache[key] = entry
            self._stats["misses"] += 1
            self._compilers.append(kind)
            return entry

    def _options_for(self, kind: str) -> dict[str, Any]:
        opts = {k: v for k, v in self._options.items() if k not in _NAMES}
        own = self._options.get(kind, {})
        if not isinstance(own, dict):
            raise ArgumentTypeError(f"options for {kind} must be a dict, got {type(own).__name__}", op="jit")
        return {**opts, **own}

    def _label(self, kind: str, opts: dict[str, Any]) -> str:
        if kind == _EAGER:
            return _EAGER
        if kind == "callable":
            name = getattr(self._compiler, "__qualname__", repr(self._compiler))
            shown = dict(opts)
        else:
            comp = self._compiler_of(kind)
            name = comp.label
            shown = comp.shown(opts, fullgraph=self.fullgraph, nums=self._nums, names=self._names)
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    def _build(self, kind: str, opts: dict[str, Any], backend: str, where: Any, policy: str) -> Callable[..., Any]:
        assert self._fn is not None
        owner = None if kind in (_EAGER, "callable") else _dispatch.backend_named(kind, "jit")
        return _jc.build(kind, owner, self._fn, opts, backend=backend, where=where, policy=policy, nums=self._nums,
                         names=self._names, fullgraph=self.fullgraph, compiler=self._compiler)

    def _hand(self, args: tuple[Any, ...], kwargs: dict[str, Any], target: str) -> tuple[tuple[Any, ...],
                                                                                         dict[str, Any]]:
        a = tuple(v if i in self._positions else _map(v, lambda x: _to(x, target)) for i, v in enumerate(args))
        k = {n: v if n in self._names else _map(v, lambda x: _to(x, target)) for n, v in kwargs.items()}
        return a, k

    # -- introspection -------------------------------------------------------------------------
    def explain(self, *args: Any, **kwargs: Any) -> JitExplanation:
        """What calling this function with ``args`` does (nothing is compiled or run); ``ua.explain(f, ...)``."""
        if self._fn is None:
            raise ArgumentTypeError("ua.jit(...) without a function explains nothing; apply it first", op="explain")
        lead, leaf = self._leader(args, kwargs)
        name = getattr(self._fn, "__qualname__", repr(self._fn))
        dev = lead.device_of(leaf) if leaf is not None else _dispatch.default_backend()[1] or Device("cpu")
        if (leaf is not None and lead.is_tracer(leaf)) or _precision.tracing():
            return JitExplanation(name, lead.name, dev, "traced as written", _precision.current(),
                                  compiler="outer trace", reason="called inside another trace: no compile of its own",
                                  cache="none")
        entry, _, static = self._entry(lead, leaf, args, kwargs)
        kind, target, reason = self._choose(lead) if entry is None else (entry.compiler, entry.target, entry.reason)
        label = self._label(kind, self._options_for(kind)) if entry is None else entry.label
        hand = (f"{lead.name} -> {target} for {label}, results back to {lead.name}",) if target else ()
        fallbacks = () if entry is None or entry.fallback is None else (entry.fallback,)
        return JitExplanation(name, lead.name, dev, label, _precision.current(), hand, 0, compiler=kind,
                              reason=f"{reason} on {dev}", static=static,
                              cache="miss" if entry is None else "hit", fallbacks=fallbacks)

    def cache_info(self) -> dict[str, Any]:
        """Counts of this function's cache: ``hits``, ``misses`` (one compile each), ``fallbacks``, ``entries``."""
        return {**self._stats, "entries": len(self._cache), "compilers": tuple(self._compilers)}

    def clear_cache(self) -> None:
        """Drop every compiled entry (the frameworks' own caches are theirs)."""
        with self._lock:
            self._cache.clear()

    def __repr__(self) -> str:
        return f"<ua.jit of {getattr(self._fn, '__qualname__', self._fn)!r}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)  # as a method: bound like a function


def _arrays(x: Any, out: list[Any]) -> None:
    # The array leaves of a pytree of tuples, lists and dicts, in order (other objects are not arrays).
    t = type(x)
    if t in BY_TYPE:
        out.append(x)
    elif t in _PASSIVE:
        return
    elif isinstance(x, (tuple, list)):
        for e in x:
            _arrays(e, out)
    elif isinstance(x, dict):
        for v in x.values():
            _arrays(v, out)
    else:
        try:
            _dispatch.one(x, "jit")
        except UnknownArrayTypeError:
            return  # a module, a callable, an object of the user's: passed to the compiler as it is
        out.append(x)


def _map(x: Any, f: Callable[[Any], Any]) -> Any:
    t = type(x)
    if t in _PASSIVE:
        return x
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*(_map(e, f) for e in x))
    if isinstance(x, (tuple, list)):
        return t(_map(e, f) for e in x)
    if isinstance(x, dict):
        return t((k, _map(v, f)) for k, v in x.items())
    return f(x)


def _to(x: Any, target: str) -> Any:
    try:
        b = _dispatch.one(x, "jit")
    except UnknownArrayTypeError:
        return x
    return x if b.name == target else interop.to(x, target)


def _unhashable(static: tuple[tuple[str, Any], ...], lead: Any) -> NoReturn:
    # A key that cannot be hashed: one of its static values (the rest of a key always can be).
    bad = "?"
    for n, v in static:
        try:
            hash(v)
        except TypeError:
            bad = n
            break
    raise ArgumentTypeError(f"the static argument {bad!r} must be hashable (its value is compiled in); pass a "
                            "tuple instead of a list, or make it a traced argument", op="jit", backend=lead.name)
