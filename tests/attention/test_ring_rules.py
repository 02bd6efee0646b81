"""The rules behind sequence-sharded torch attention (unarray/_backends/torch/ring_rules.py), as pure functions:
the route on each side of a crossover window, and the head-group count that bounds unarray's ring's memory."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")

from unarray._backends.torch import ring_rules  # noqa: E402

_TABLE = {("H100", 2): ring_rules.Crossover(24576, 49152, "a test table"), ("cpu", 2): ring_rules.Crossover(8, 16, "t")}


@pytest.mark.parametrize(("local", "route", "side"), [(16384, "ring", "below"), (24575, "ring", "below"),
                                                      (24576, "torch-cp", "inside"), (32768, "torch-cp", "inside"),
                                                      (49152, "ring", "above"), (524288, "ring", "above")])
def test_route_follows_the_window(local: int, route: str, side: str) -> None:
    with ring_rules.crossovers(_TABLE):
        got, why = ring_rules.choose_route(local, "NVIDIA H100 80GB HBM3", 2)
    assert got == route
    assert f"{side}, " in why and "[24576, 49152)" in why and "H100 x 2 ranks" in why


@pytest.mark.parametrize(("local", "split", "torch_cp", "route"),
                         [(8192, True, True, "split"), (8192, False, True, "ring"), (8192, True, False, "split"),
                          (16383, True, True, "split"), (16384, True, True, "ring"), (24576, True, True, "torch-cp"),
                          (24576, False, False, "ring"), (49152, True, True, "ring")])
def test_the_split_runs_below_its_length_where_it_applies(local: int, split: bool, torch_cp: bool,
                                                         route: str) -> None:
    table = {("H100", 2): ring_rules.Crossover(24576, 49152, "a test table", split=16384)}
    with ring_rules.crossovers(table):
        got, why = ring_rules.choose_route(local, "NVIDIA H100 80GB HBM3", 2, split=split, torch_cp=torch_cp)
    assert got == route
    assert ("below 16384 for H100 x 2 ranks" in why) == (route == "split")


def test_unknown_device_or_ring_size_keeps_torch_context_parallel() -> None:
    with ring_rules.crossovers(_TABLE):
        for name, ranks in (("NVIDIA A10G", 2), ("NVIDIA H100 80GB HBM3", 4), ("cuda", 2)):
            route, why = ring_rules.choose_route(4096, name, ranks)
            assert route == "torch-cp" and "no crossover known" in why
            # neither the split nor torch's context parallel without a crossover that says so
            assert ring_rules.choose_route(4096, name, ranks, split=True, torch_cp=False)[0] == "ring"
        # "cpu" names the CPU only, never a device whose name happens to contain it.
        assert ring_rules.crossover_for("cpu", 2) is not None
        assert ring_rules.crossover_for("acpux", 2) is None
    assert ring_rules.crossover_for("cpu", 2) is None  # the table is back to the package's own


def test_the_package_table_has_a_window_for_two_hopper_gpus() -> None:
    for name in ("NVIDIA H100 80GB HBM3", "NVIDIA H200"):
        found = ring_rules.crossover_for(name, 2)
        assert found is not None and found[1].lo < found[1].hi
        # The timed sizes: 32k over two ranks (16k each) to torch's context parallel, 64k and up to the ring.
        assert ring_rules.choose_route(16384, name, 2)[0] == "torch-cp"
        assert ring_rules.choose_route(found[1].lo, name, 2)[0] == "torch-cp"
        assert ring_rules.choose_route(32768, name, 2)[0] == "ring"
        assert ring_rules.choose_route(found[1].hi * 8, name, 2)[0] == "ring"
        # the two-rank split where it applies, from 32k to 256k over two ranks; unarray's ring at 1M
        for local in (16384, 32768, 65536, 131072):
            assert ring_rules.choose_route(local, name, 2, split=True)[0] == "split"
        assert ring_rules.choose_route(524288, name, 2, split=True)[0] == "ring"


@settings(max_examples=40, deadline=None)
@given(hk=st.sampled_from([1, 2, 3, 4, 8, 16, 32]), g=st.sampled_from([1, 2, 4]), n=st.integers(1, 4),
       lq=st.integers(1, 1 << 20), d=st.sampled_from([32, 64, 128, 256]), ranks=st.integers(2, 16),
       item=st.sampled_from([2, 4, 8]), zigzag=st.booleans())
def test_head_groups_bound_the_extra_memory(hk: int, g: int, n: int, lq: int, d: int, ranks: int, item: int,
                                            zigzag: bool) -> None:
    hq, acc = hk * g, max(item, 4)
    extra = ring_rules.ring_extra_bytes(n, hq, hk, lq, lq, d, d, item, acc, zigzag)
    io = n * (hq * lq * 2 * d + hk * lq * 2 * d) * item
    groups = ring_rules.head_groups(hk, extra, io, ranks)
    assert hk % groups == 0
    fits = [x for x in range(1, hk + 1) if hk % x == 0 and extra <= x * (ranks - 1) * io]
    if fits:
        # The fewest groups that fit, and with them a rank's inputs, output and one group's extra stay under
        # what one device holds for the whole sequence.
        assert groups == fits[0]
        assert io + extra / groups <= ranks * io
    else:
        assert groups == hk


def test_two_ranks_causal_bf16_heads_walk_in_four_groups() -> None:
    # B=1, H=16, D=128, bf16, 2 ranks: the extra (head-tail copies, accumulators, the block in flight) is
    # about three times the local inputs and output; four groups bring a rank under one device's peak.
    n, h, d, lq = 1, 16, 128, 1 << 19
    extra = ring_rules.ring_extra_bytes(n, h, h, lq, lq, d, d, 2, 4, True)
    io = n * h * lq * 4 * d * 2
    assert 2 * io < extra <= 4 * io
    assert ring_rules.head_groups(h, extra, io, 2) == 4
    assert ring_rules.head_groups(h, extra, io, 8) == 1
