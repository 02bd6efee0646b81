"""The JAX two-device split's head-group rule (unarray/_backends/jax/attention_ring.py) as pure functions: its
two counts, the group count they give, and the modelled peak of that walk against one device's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("jax")

from unarray._backends.jax import attention_ring as ring  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(hk=st.sampled_from([1, 2, 4, 8, 16]), rep=st.sampled_from([1, 2, 4]), b=st.integers(1, 4),
       lq=st.integers(1, 1 << 19), d=st.sampled_from([32, 64, 128, 256]), item=st.sampled_from([2, 4, 8]),
       kernel=st.sampled_from(["cudnn", "xla"]))
def test_split_groups_keep_the_peak_under_one_device(hk: int, rep: int, b: int, lq: int, d: int, item: int,
                                                     kernel: str) -> None:
    hq, acc = hk * rep, max(item, 4)
    held, merge = ring.split_extra_bytes(b, hq, hk, lq, lq, d, d, item, acc, kernel)
    out = b * hq * lq * d * item
    io = out + b * (hq * lq * d + hk * lq * 2 * d) * item
    groups = ring.split_groups(hk, held, merge, io, out, 2)
    assert hk % groups == 0
    whole = 2 * io  # one device's inputs and output for the whole sequence
    # one group: its blocks run before the output exists, and the merge writes into it
    if io - out + held <= whole and io + merge <= whole:
        assert groups == 1
    else:
        # several: the output is held throughout, beside one group's share of the larger count; the fewest
        # that fit, else every kv head its own group
        fits = [g for g in range(2, hk + 1) if hk % g == 0 and io + max(held, merge) / g <= whole]
        assert groups == (fits[0] if fits else hk)
    # the split counts less than the zigzag ring on the same shard
    assert max(held, merge) < ring.extra_bytes(b, hq, hk, lq, lq, d, d, item, acc, True, kernel)


@pytest.mark.parametrize("hk", [1, 4, 16])
@pytest.mark.parametrize("lq", [16384, 1 << 15, 1 << 16, 1 << 19])
def test_split_on_cudnn_blocks_walks_one_group(hk: int, lq: int) -> None:
    # bf16, H=16, D=128 on two devices: the split's blocks hold about one shard's inputs and output, so it
    # walks all heads at once where the zigzag ring walks several groups.
    hq, d = 16, 128
    held, merge = ring.split_extra_bytes(1, hq, hk, lq, lq, d, d, 2, 4, "cudnn")
    out = hq * lq * d * 2
    io = out + (hq * lq * d + hk * lq * 2 * d) * 2
    assert ring.split_groups(hk, held, merge, io, out, 2) == 1
    if hk == hq:
        zigzag = ring.extra_bytes(1, hq, hk, lq, lq, d, d, 2, 4, True, "cudnn")
        assert ring.split_groups(hk, zigzag, zigzag, io, 0, 2) > 1


def test_a_route_asked_for_is_one_the_planner_knows() -> None:
    from unarray._errors import ArgumentTypeError

    for route in ("auto", "ring", "split"):
        token = ring.PREFER.set(route)
        try:
            assert ring._route(True, 2, 1024)[0] == ("split" if route == "auto" else route)
        finally:
            ring.PREFER.reset(token)
    token = ring.PREFER.set("zigzag")
    try:
        with pytest.raises(ArgumentTypeError, match="PREFER must be one of .*got 'zigzag'"):
            ring._route(True, 2, 1024)
    finally:
        ring.PREFER.reset(token)
