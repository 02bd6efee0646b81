"""The arbiter behind every process-global precision switch (``_precision.Switch``), on a fake
global: each call must run under the setting it asked for, whatever the other threads ask for,
and the user's setting must be back once they are done. A fake global lets the test see what each
call ran under, which the real frameworks only show through rounding."""

from __future__ import annotations

import operator
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unarray._precision import POLICIES, Switch, _gate_type

SETTINGS = ("ieee", "tf32", "bf16")
# Both fast paths: the Python one (Switch.enter/leave) and the C gate (unarray/_gate.c), which
# shares the Python one's list of fast calls and closed flag with the locked path.
NO_GATE = pytest.mark.skipif(_gate_type() is None, reason="unarray._gate is not built")
GATES = [False, pytest.param(True, marks=NO_GATE)]


class FakeGlobal:
    def __init__(self, user: str) -> None:
        self.value = user
        self.swaps = 0

    def switch(self, gate: bool = False) -> Switch:
        def swap(want: str) -> tuple[str, str]:
            saved, self.value = self.value, want
            self.swaps += 1
            return saved, want

        def restore(saved: str) -> None:
            self.value = saved

        reads = {w: (operator.attrgetter("value"), (self,), (w,)) for w in SETTINGS} if gate else None
        sw = Switch(lambda want: self.value, lambda state, want: state == want, swap, restore, reads)
        assert (type(sw.run).__name__ == "Gate") == gate
        return sw


def _hammer(g: FakeGlobal, sw: Switch, plans: list[list[str]], nested: bool) -> list[str]:
    errors: list[str] = []

    def compute(want: str) -> None:
        seen = g.value
        time.sleep(0)  # let another thread in while this call is in flight
        if g.value != want or seen != want:
            errors.append(f"ran under {seen!r}/{g.value!r}, asked for {want!r}")
        if nested:
            # a call nested in one in flight (a tensor subclass calling unarray) must not deadlock
            sw.run(want, lambda: None)

    def worker(plan: list[str]) -> None:
        for want in plan:
            sw.run(want, compute, want)

    threads = [threading.Thread(target=worker, args=(plan,)) for plan in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a thread is stuck: the arbiter deadlocked"
    return errors


@pytest.mark.parametrize("gate", GATES)
@settings(max_examples=25, deadline=None)
@given(user=st.sampled_from(SETTINGS),
       plans=st.lists(st.lists(st.sampled_from(SETTINGS), min_size=1, max_size=40), min_size=2, max_size=8),
       nested=st.booleans())
def test_every_call_runs_under_its_setting_and_the_user_setting_comes_back(
        gate: bool, user: str, plans: list[list[str]], nested: bool) -> None:
    g = FakeGlobal(user)
    sw = g.switch(gate)
    errors = _hammer(g, sw, plans, nested)
    assert not errors, errors[:5]
    assert g.value == user
    assert sw._fast == [] and sw._slow == [] and not sw._g.closed


@pytest.mark.parametrize("gate", GATES)
def test_calls_needing_the_users_setting_never_swap(gate: bool) -> None:
    g = FakeGlobal("ieee")
    sw = g.switch(gate)
    assert not _hammer(g, sw, [["ieee"] * 200 for _ in range(8)], nested=False)
    assert g.swaps == 0 and g.value == "ieee"


@pytest.mark.parametrize("gate", GATES)
def test_a_call_in_flight_is_listed_by_its_threads_id(gate: bool) -> None:
    # The fast list names each call in flight by its thread's id (what a draining swap waits on), from one
    # thread after another, nested calls once each; empty when they are done.
    g = FakeGlobal("ieee")
    sw = g.switch(gate)
    seen: list[list[int]] = []

    def inner() -> None:
        seen.append(list(sw._fast))

    def outer() -> None:
        seen.append(list(sw._fast))
        sw.run("ieee", inner)

    idents = []
    for _ in range(3):
        t = threading.Thread(target=lambda: (idents.append(threading.get_ident()), sw.run("ieee", outer)))
        t.start()
        t.join(timeout=60)
    sw.run("ieee", outer)
    idents.append(threading.get_ident())
    assert seen == [x for i in idents for x in ([i], [i, i])]
    assert sw._fast == [] and g.swaps == 0


@pytest.mark.parametrize("gate", GATES)
def test_a_failing_call_still_restores_the_users_setting(gate: bool) -> None:
    g = FakeGlobal("ieee")
    sw = g.switch(gate)

    def boom() -> None:
        raise RuntimeError("kernel failed")

    for want in ("tf32", "ieee"):
        try:
            sw.run(want, boom)
        except RuntimeError:
            pass
        else:
            raise AssertionError("the error was swallowed")
    assert g.value == "ieee" and sw._slow == [] and sw._fast == []


@pytest.mark.parametrize("gate", GATES)
def test_a_failing_read_propagates_and_unregisters_the_call(gate: bool) -> None:
    def broken(*_: object) -> str:
        raise ValueError("the framework refused the read")

    reads = {"ieee": (broken, (), ("ieee",))} if gate else None
    sw = Switch(broken, lambda state, want: state == want, lambda w: (w, w), lambda s: None, reads)
    with pytest.raises(ValueError, match="refused the read"):
        sw.run("ieee", lambda: None)
    assert sw._fast == [] and sw._slow == [] and not sw._g.closed


@pytest.mark.parametrize("gate", GATES)
def test_the_call_runs_once_with_its_arguments_on_either_path(gate: bool) -> None:
    g = FakeGlobal("ieee")
    sw = g.switch(gate)
    calls: list[tuple[object, ...]] = []

    def fn(*args: object) -> tuple[str, tuple[object, ...]]:
        calls.append(args)
        return g.value, args

    assert sw.run("ieee", fn, 1, "a") == ("ieee", (1, "a"))  # the fast path: the setting gives it
    assert sw.run("bf16", fn) == ("bf16", ())  # the locked path: a swap, then the user's value back
    assert calls == [(1, "a"), ()] and g.value == "ieee" and g.swaps == 1


@NO_GATE
def test_a_read_the_gate_cannot_take_goes_to_the_python_path() -> None:
    # torch's cuBLAS reader raises RuntimeError when its legacy and new APIs disagree: the gate sends the
    # call to the Python path, whose own read decides.
    def mixed() -> bool:
        raise RuntimeError("mixed APIs")

    g = FakeGlobal("ieee")
    sw = Switch(lambda want: g.value, lambda state, want: state == want, lambda w: ("ieee", w), lambda s: None,
                {"ieee": (mixed, (), ("ieee",))})
    assert sw.run("ieee", lambda: "ran") == "ran"
    assert sw._fast == [] and sw._slow == [] and not sw._g.closed
    with pytest.raises(TypeError, match="gate"):
        sw.run("ieee")  # no function to run


def test_the_torch_gate_gives_the_python_verdict_for_every_setting() -> None:
    # The C gate's table (_READS) must say what _satisfies(_read(want), want) says, whatever the user set.
    torch = pytest.importorskip("torch")
    from unarray._backends.torch import precision as tp

    saved = tp.snapshot()
    try:
        for mkldnn in ("ieee", "tf32", "bf16", "none"):
            for legacy in ("highest", "high", "medium"):
                torch.set_float32_matmul_precision(legacy)
                tp._set("mkldnn", "matmul", mkldnn)
                for want, (read, args, states) in tp._READS.items():
                    try:
                        table = read(*args) in states
                    except RuntimeError:
                        table = False  # the gate's verdict: to the Python path
                    assert table == tp._satisfies(tp._read(want), want), (mkldnn, legacy, want)
        assert set(tp._READS) == set(tp.WANT.values())
    finally:
        tp.restore(saved)
    assert tp.snapshot() == saved


def test_the_cupy_gate_gives_the_python_verdict_for_every_compute_type() -> None:
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:
        pytest.skip("no CUDA device for CuPy")
    from unarray._backends.cupy import backend as cb

    a = cupy.ones((4, 4), dtype=cupy.float32)
    cb.BACKEND.matmul(a, a, "highest")  # a float32 matmul through the switch
    saved = cb._read_compute()
    try:
        for t in set(cb._types().values()):
            cb._write_compute(t)
            for p, (read, args, states) in cb._READS.items():
                assert (read(*args) in states) == cb._gives(cb._read_compute(), p), (t, p)
        assert set(cb._READS) == set(POLICIES)
        assert type(cb._COMPUTE.run).__name__ == ("Gate" if _gate_type() else "method")
    finally:
        cb._write_compute(saved)
