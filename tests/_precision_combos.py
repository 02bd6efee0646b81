"""Run in a fresh process by tests/precision/test_precision.py: the user's torch precision set with API X then
each API Y; every unarray matmul-like call under every policy must not raise, must be within the
policy's tolerance of a float64 reference, and must leave every setting (raw "none" slots included)
as the user left it. Prints one line per failure; exit status 1 if any."""

from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import torch

import unarray as ua
from tests._torch_state import USER_APIS, fingerprint
from unarray import _precision

TOL = {"highest": 2e-5, "tf32": 2e-3, "bf16": 2e-2, "fastest": 2e-2}


def _calls(device: str) -> list[str]:
    rng = np.random.default_rng(0)
    a = torch.from_numpy(rng.standard_normal((16, 32), dtype=np.float32)).to(device)
    b = torch.from_numpy(rng.standard_normal((32, 8), dtype=np.float32)).to(device)
    q = torch.from_numpy(rng.standard_normal((1, 2, 8, 16), dtype=np.float32)).to(device)
    ref_mm = a.double() @ b.double()
    s = (q.double() @ q.double().transpose(-1, -2)) / 4.0
    ref_at = torch.softmax(s, -1) @ q.double()
    bad = []
    for policy in ("highest", "tf32", "bf16", "fastest"):
        calls = (("matmul", lambda p: ua.matmul(a, b, precision=p), ref_mm),
                 ("sdpa", lambda p: ua.scaled_dot_product_attention(q, q, q, precision=p), ref_at),
                 ("tensordot", lambda p: _scoped(p, lambda x, y: ua.tensordot(x, y, axes=1), a, b), ref_mm))
        for name, got, ref in calls:
            try:
                out = got(policy)
            except Exception as e:  # noqa: BLE001 - every failure is reported
                bad.append(f"{name}[{policy}] raised {type(e).__name__}: {e}")
                continue
            err = float(((out.double() - ref).abs().max() / ref.abs().max()).cpu())
            if not err <= TOL[policy]:
                bad.append(f"{name}[{policy}] relative error {err:.2e} > {TOL[policy]}")
    return bad


def _scoped(policy: str, fn, *args):  # type: ignore[no-untyped-def]
    with ua.precision(policy):  # type: ignore[arg-type]
        return fn(*args)


def _in_child(fn, *args):  # type: ignore[no-untyped-def]
    # The start-up state for each combination: a forked child of this fresh process.
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            data = pickle.dumps(fn(*args))
        except BaseException as e:  # noqa: BLE001 - reported by the parent
            data = pickle.dumps(("crashed", repr(e)))
        os.write(w, data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)


def _apply(first: str, second: str) -> None:
    apis = dict(USER_APIS)
    exec(apis[first], {"torch": torch})
    exec(apis[second], {"torch": torch})


def _reference(first: str, second: str) -> tuple:  # type: ignore[type-arg]
    _apply(first, second)
    return fingerprint(torch)


def _with_unarray(first: str, second: str, force: bool, device: str) -> tuple:  # type: ignore[type-arg]
    _precision.FORCE_ARBITRATION = force
    _apply(first, second)
    bad = _calls(device)
    return bad, fingerprint(torch)


def main(first: str, device: str) -> int:
    failures = []
    for second, _ in USER_APIS:
        ref = _in_child(_reference, first, second)
        for force in (False, True):
            got = _in_child(_with_unarray, first, second, force, device)
            if got[0] == "crashed":
                failures.append(f"{first} then {second} (forced={force}): the child raised {got[1]}")
                continue
            bad, after = got
            failures += [f"{first} then {second} (forced={force}): {m}" for m in bad]
            if after != ref:
                failures.append(f"{first} then {second} (forced={force}): a setting was left changed")
    for f in failures:
        print(f)
    print(f"done, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "cpu"))
