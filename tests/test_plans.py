"""``ua.explain`` names the kernel the call enters (issue 28, "decide once"): for every backend on the fixture and
every ``ua.nn`` op, the call runs with a recorder in place of each plan's kernel; the kernel it entered must be
the one ``ua.explain`` names, which must be the object its qualified name imports to."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import unarray as ua
from unarray._backends._nn import Plan, resolve
from unarray._explanation import PLANNERS

OPS: dict[str, dict[str, Any]] = {
    "softmax": {}, "log_softmax": {"axis": 0}, "logsumexp": {"axis": 1}, "logsumexp ()": {"axis": ()},
    "layer_norm": {}, "layer_norm (0,)": {"axis": 0}, "rms_norm": {}, "gelu": {}, "gelu tanh": {"approximate": True},
    "silu": {},
}


def _entered(monkeypatch: pytest.MonkeyPatch, call: Any) -> list[Any]:
    # The kernels the call enters: every plan run hands its call a recorder in place of its kernel.
    seen: list[Any] = []

    def run(plan: Plan) -> Any:
        def recorder(*args: Any, **kwargs: Any) -> Any:
            seen.append(plan.kernel)
            return plan.kernel(*args, **kwargs)

        return plan.call(recorder)

    monkeypatch.setattr(Plan, "run", run)
    call()
    return seen


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", list(OPS))
def test_explain_names_the_kernel_the_call_enters(backend: Any, case: str, dtype: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    op = case.split()[0]
    kwargs = OPS[case]
    x = backend.asarray(np.random.default_rng(3).standard_normal((3, 4)).astype(dtype))
    b, plan = PLANNERS[f"nn.{op}"](x, **kwargs)
    label = ua.explain(f"nn.{op}", x, **kwargs).kernel
    name = label.split(" ")[0]
    kernel = resolve(name)
    assert kernel is plan.kernel, f"{label!r} names {kernel!r}, not the plan's kernel {plan.kernel!r}"
    out = getattr(ua.nn, op)
    seen = _entered(monkeypatch, lambda: out(x, **kwargs))
    assert seen == [kernel], f"ua.explain names {name}; ua.nn.{op} on {b.name} entered {seen}"
