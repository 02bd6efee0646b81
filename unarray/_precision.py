"""The precision policy for matmul-like ops (matmul, tensordot, vecdot, attention).

``"highest"`` (the default) means float32 inputs are multiplied to float32
accuracy on every backend and device. JAX on GPU/TPU and TensorFlow on
Ampere+ GPUs would otherwise use TF32 or bf16 passes silently. The faster
policies are opt-in, per call (``precision=``) or per scope
(``with ua.precision("tf32"):``), held in a ``contextvars.ContextVar`` (so per
thread and per asyncio task), and each backend maps them onto its own switch. A
framework's process-global switch is a :class:`Switch`, an arbiter shared by every
thread that never leaves the user's setting changed (the rule and its residual
exposure: docs/precision.md, "The switch, and your framework settings").
"""

from __future__ import annotations

import contextvars
import functools
import os
import sys
from _thread import get_ident
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, Literal

from unarray import _native
from unarray._errors import ArgumentError

__all__ = ["POLICIES", "Policy", "Switch", "current", "ignoring_policy", "precision", "resolve", "scope"]

Policy = Literal["highest", "tf32", "bf16", "fastest"]
POLICIES: tuple[str, ...] = ("highest", "tf32", "bf16", "fastest")

_POLICY: contextvars.ContextVar[str] = contextvars.ContextVar("unarray_precision", default="highest")
# The front end's one read of the scope, passed down to the backend as an argument: nothing below the front
# end reads the scope. One object (a C method, no Python frame), so that a backend whose tracer cannot read a
# ContextVar (torch.compile's) can substitute ``traced`` for it inside its traces.
scope: Callable[[], str] = _POLICY.get


# Policies of ``with ua.precision(...)`` entered inside a torch.compile trace, innermost last. Dynamo
# cannot trace a ContextVar; a plain list it can (and it restores the list after the trace).
_TRACED: list[str] = []


# Whether this thread is being traced: the loaded backend's compiling(), never a process-wide flag (true in every
# thread while one compiles). Read from here, not sys.modules: Dynamo guards on a dict it reads and iterates it.
_IS_COMPILING: list[Any] = []
# Until then, that library's own flag (Library.tracing_flag, dotted from its top module), as the registry tells it.
_TRACING_FLAGS: list[str] = []


def watch_tracing(flags: Any = (), compiling: Any = None) -> None:
    """What tells whether a trace is running: each library's dotted flag, or a loaded backend's own ``compiling``
    (which replaces them). The registry, which reads each library's record and loads its backend, calls this."""
    if compiling is not None:
        _IS_COMPILING[:] = [compiling]
    _TRACING_FLAGS.extend(f for f in flags if f not in _TRACING_FLAGS)


def tracing() -> bool:
    """Whether torch.compile is tracing this code in this thread (no import: torch only if it is loaded)."""
    if not _IS_COMPILING:
        for flag in _TRACING_FLAGS:
            top, *path = flag.split(".")
            found = sys.modules.get(top)
            if found is None:
                continue
            _IS_COMPILING.append(functools.reduce(getattr, path, found))
            break
        else:
            return False
    return bool(_IS_COMPILING[0]())


def traced() -> str:
    """Inside a torch.compile trace: the policy scoped inside the compiled function, else ``""``
    (the policy in force when the compiled graph runs, read by unarray's custom ops then)."""
    return _TRACED[-1] if _TRACED else ""


def current() -> str:
    """The precision policy in force in this thread or task (``ua.get_precision``).

    Returns
    -------
    out : str
        ``"highest"`` (the default), ``"tf32"``, ``"bf16"`` or ``"fastest"``: the innermost
        :class:`unarray.precision` scope's policy, or the one set with it as a plain setter.

    Examples
    --------
    >>> import unarray as ua
    >>> ua.get_precision()
    'highest'
    >>> with ua.precision("bf16"):
    ...     ua.get_precision()
    'bf16'
    """
    return _POLICY.get()


def resolve(per_call: str | None) -> str:
    """The policy in force for one call: the per-call value (checked), else the scope's (:data:`scope`)."""
    if per_call is None:
        return scope()
    if per_call not in POLICIES:
        raise ArgumentError(f"unknown precision policy {per_call!r}; use one of {POLICIES}")
    return per_call


class precision:
    """Set the precision policy for a scope (also works as a plain setter).

    Args:
        policy: ``"highest"`` (float32-accurate, the default), ``"tf32"``
            (TensorFloat-32 tensor-core passes where the device has them),
            ``"bf16"`` (bfloat16 passes) or ``"fastest"`` (the backend's own
            fastest setting).

    A scope is left in the context (thread, asyncio task) that entered it: leaving it in another raises
    ``ArgumentError`` (a ``ValueError``), since restoring would overwrite that context's own policy.

    Examples:
        >>> import unarray as ua
        >>> with ua.precision("tf32"):
        ...     ua.get_precision()
        'tf32'
        >>> ua.get_precision()
        'highest'
    """

    def __init__(self, policy: Policy):
        p = resolve(policy)
        if tracing():
            self._token: Any = None
            _TRACED.append(p)
        else:
            self._token = _POLICY.set(p)

    def __enter__(self) -> precision:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is None:
            _TRACED.pop()
            return
        try:
            _POLICY.reset(self._token)
        except ValueError as e:
            # Note: another context's policy is not this scope's to overwrite: the exit is refused, not guessed.
            raise ArgumentError(
                "this scope was entered in another context (thread, asyncio task or contextvars.Context.run) "
                "than the one leaving it, so it cannot restore that context's policy; open and close each "
                "`with ua.precision(...)` inside one task or thread (the entering context keeps the scope's "
                "policy until it leaves), or pass precision= per call", op="precision") from e


def ignoring_policy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a backend op taking the policy last and dropping it: the switch of a backend whose results no
    policy changes (NumPy). In C where the switch's module is built (a Python frame would cost more than the
    op's dispatch)."""
    m = _native.load("_gate")
    if m is not None:
        return m.Unswitched(fn)  # type: ignore[no-any-return]
    def unswitched(*args: Any) -> Any:
        return fn(*args[:-1])

    unswitched.__wrapped__ = fn  # type: ignore[attr-defined]  # (ua.explain names the op)
    return unswitched


# Note: tests set this to arbitrate even where the setting cannot change a result (a CPU with no
# reduced-precision path), so that the save/write/restore path runs on any machine.
FORCE_ARBITRATION = os.environ.get("UNARRAY_FORCE_PRECISION_ARBITER", "") == "1"


def _gate_type() -> Any:
    """unarray._gate.Gate (the fast path in C), or None without it or with UNARRAY_PURE_PYTHON=1."""
    m = _native.load("_gate")
    return None if m is None else m.Gate


class Switch:
    """One process-global framework switch, shared by the unarray calls of every thread.

    ``read(want)`` describes the setting in force (only the part that ``want`` depends on);
    ``satisfies(state, want)`` says whether it gives ``want``; ``swap(want)`` saves the user's
    setting exactly, writes the one ``want`` needs and returns ``(saved, state)``;
    ``restore(saved)`` writes the user's back.

    Note: two paths. The fast path, taken while no call holds the switch changed or waits to change
    it, takes no lock: the call registers itself by appending its thread id to a list (one atomic
    step under the GIL), re-checks that the switch is still open, reads the setting and runs. A call
    that needs another setting closes the switch, waits until every registered call has left, then
    swaps; calls arriving meanwhile take the locked path and queue or join. Appending before the
    re-check, and closing before counting, is what keeps a fast call from ever overlapping a swap.
    """

    def __init__(self, read: Callable[[Any], Any], satisfies: Callable[[Any, Any], bool],
                 swap: Callable[[Any], tuple[Any, Any]], restore: Callable[[Any], None],
                 reads: dict[Any, tuple[Callable[..., Any], tuple[Any, ...], tuple[Any, ...]]] | None = None) -> None:
        self._read, self._satisfies, self._swap, self._restore = read, satisfies, swap, restore
        import threading  # (here: the frameworks that make a Switch have imported it, import unarray need not)

        self._cond = threading.Condition(threading.Lock())
        self._fast: list[int] = []  # thread ids of the fast-path calls in flight
        self._slow: list[int] = []  # thread ids of the locked-path calls in flight
        self._draining = False  # a locked-path call waits for the fast calls to leave
        self._waiting = 0
        self._state: Any = None
        self._saved: Any = None
        self._swapped = False
        self.swaps = 0  # how many times a call wrote its own setting (tests and benchmarks read it)
        # ``reads``: want -> (read, its arguments, the states that give want): satisfies(read(want), want) without
        # a Python frame, the C gate's fast path (a want missing from it takes the Python path).
        gate = _gate_type() if reads is not None else None
        # run(want, fn, *args): fn(*args) with the setting giving ``want`` (the C gate where built).
        self.run: Callable[..., Any] = self._run
        # The closed flag (in the gate where built): set while a locked-path call holds or waits to change the switch.
        self._g: Any = SimpleNamespace(closed=False)
        if gate is not None:
            # Note: the table itself (not a copy): a backend may fill it once its framework is loaded.
            self._g = self.run = gate(self._fast, reads, self._run, self._wake)

    def enter(self, want: Any) -> int:
        """Admit one call needing ``want``; returns the token to hand to :meth:`leave`."""
        me = get_ident()
        g = self._g
        if not g.closed:
            fast = self._fast
            fast.append(me)
            try:
                ok = not g.closed and self._satisfies(self._read(want), want)
            except BaseException:
                self.leave(me)
                raise
            if ok:
                return me
            fast.remove(me)
            if g.closed:
                self._wake()
        self._enter_locked(want, me)
        return -1 - me

    def leave(self, token: int) -> None:
        if token >= 0:
            self._fast.remove(token)
            if self._g.closed:
                self._wake()
            return
        with self._cond:
            self._slow.remove(-1 - token)
            if self._slow:
                return
            if self._swapped:
                saved, self._saved, self._swapped = self._saved, None, False
                self._restore(saved)
            self._state = None
            if not self._draining:
                self._g.closed = False
            self._cond.notify_all()

    def _run(self, want: Any, fn: Callable[..., Any], *args: Any) -> Any:
        token = self.enter(want)
        try:
            return fn(*args)
        finally:
            self.leave(token)

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _enter_locked(self, want: Any, me: int) -> None:
        with self._cond:
            if me in self._slow or me in self._fast:
                # Note: a call nested in one this thread has in flight (a tensor subclass whose matmul calls
                # unarray) runs under the setting in force: waiting for the outer call would never end.
                self._slow.append(me)
                return
            while True:
                if not self._slow and not self._draining:
                    # Note: one call at a time closes the switch and waits for the fast calls to
                    # leave (the wait releases the lock; the others queue behind the drain).
                    self._g.closed = self._draining = True
                    try:
                        while self._fast:
                            self._cond.wait()
                    finally:
                        self._draining = False
                    state = self._read(want)
                    if not self._satisfies(state, want):
                        self._saved, state = self._swap(want)
                        self._swapped = True
                        self.swaps += 1
                    self._state = state
                    self._slow.append(me)
                    self._cond.notify_all()
                    return
                if self._slow and not self._draining and not self._waiting and self._satisfies(self._state, want):
                    self._slow.append(me)
                    return
                # Note: once a call waits for a different setting, later calls queue behind it
                # instead of joining, so a steady stream of one policy cannot starve another.
                self._waiting += 1
                try:
                    self._cond.wait()
                finally:
                    self._waiting -= 1
