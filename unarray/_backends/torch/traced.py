"""Another library's array met inside torch.compile: NumPy arrays are captured by the trace, others refused with a
typed error (made traceable once torch._dynamo is loaded); and what unarray registers with the tracer then (the
C calls' traceable twins, the calls it runs as constants)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from unarray._errors import TracerHandoffError

__all__ = ["disable_foreign_refusal", "refuse_foreign", "register_constant", "register_traced"]

_FOREIGN = ("inside torch.compile only NumPy arrays join a torch tensor (the trace captures them); "
            "convert other arrays before the compiled function (ua.to(x, 'torch')) and pass the tensor in")


def _refuse_eagerly(x: Any) -> Any:
    raise TracerHandoffError(f"{_FOREIGN}; got a {type(x).__module__}.{type(x).__qualname__}", backend="torch")


refuse_foreign: Any = _refuse_eagerly


def disable_foreign_refusal() -> None:
    # Note: a typed error cannot be built inside a trace: the graph breaks here (under fullgraph=True torch names
    # this reason). Made once torch._dynamo is loaded, since torch.compiler.disable imports it.
    global refuse_foreign
    disable: Callable[..., Any] = torch.compiler.disable  # untyped in torch
    try:
        refuse_foreign = disable(_refuse_eagerly, recursive=True, reason=f"unarray: {_FOREIGN}")
    except TypeError:  # a torch whose disable takes no reason
        refuse_foreign = disable(_refuse_eagerly, recursive=True)


def register_traced(fn: Any, reference: Any) -> None:
    # A C hot call of the front end (unarray/_hot.py): torch.compile traces its Python reference instead.
    torch.compiler.substitute_in_graph(fn, skip_signature_check=True)(reference)


def register_constant(fn: Any, _: Any = None) -> None:
    # A function of constants (ua.array_namespace's lookup of a traced tensor's namespace) that torch.compile runs
    # at trace time, taking its result as a constant: its caches and the object it builds stay out of the trace.
    torch.compiler.assume_constant_result(fn)  # type: ignore[no-untyped-call]
