"""The arbiter behind every process-global precision switch (``_precision.Switch``), on a fake
global: each call must run under the setting it asked for, whatever the other threads ask for,
and the user's setting must be back once they are done. A fake global lets the test see what each
call ran under, which the real frameworks only show through rounding."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from unarray._precision import Switch


class FakeGlobal:
    def __init__(self, user: str) -> None:
        self.value = user
        self.swaps = 0

    def switch(self) -> Switch:
        def swap(want: str) -> tuple[str, str]:
            saved, self.value = self.value, want
            self.swaps += 1
            return saved, want

        def restore(saved: str) -> None:
            self.value = saved

        return Switch(lambda want: self.value, lambda state, want: state == want, swap, restore)


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


@settings(max_examples=25, deadline=None)
@given(user=st.sampled_from(["ieee", "tf32", "bf16"]),
       plans=st.lists(st.lists(st.sampled_from(["ieee", "tf32", "bf16"]), min_size=1, max_size=40),
                      min_size=2, max_size=8),
       nested=st.booleans())
def test_every_call_runs_under_its_setting_and_the_user_setting_comes_back(
        user: str, plans: list[list[str]], nested: bool) -> None:
    g = FakeGlobal(user)
    sw = g.switch()
    errors = _hammer(g, sw, plans, nested)
    assert not errors, errors[:5]
    assert g.value == user
    assert sw._fast == [] and sw._slow == [] and not sw._closed


def test_calls_needing_the_users_setting_never_swap() -> None:
    g = FakeGlobal("ieee")
    sw = g.switch()
    assert not _hammer(g, sw, [["ieee"] * 200 for _ in range(8)], nested=False)
    assert g.swaps == 0 and g.value == "ieee"


def test_a_failing_call_still_restores_the_users_setting() -> None:
    g = FakeGlobal("ieee")
    sw = g.switch()

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
