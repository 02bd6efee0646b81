"""Sequence-sharded attention on torch DTensors over gloo, 2 local processes (tests/_ring_inside.py): the route
follows the crossover rule on each side of its window, and unarray's ring walked in head groups gives the same
output as in one group and the float64 reference's; the two-rank split gives the reference's output and runs
below its length in the table; a window and segment ids give the reference's output on unarray's ring, which skips
the steps no query reaches."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
pytest.importorskip("hypothesis")
if not (dist.is_available() and dist.is_gloo_available()):
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)

CHECKS = {"route_follows_crossover", "head_groups_equal_one_group", "split_equals_reference",
          "structured_masks_equal_reference"}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def two_ranks() -> tuple[list[int], dict[str, dict[str, object]], str]:
    from unarray.conformance import local_group

    ranks = local_group.run_workers([sys.executable, "-c", "from tests import _ring_inside as t; t.main()"], 2,
                                    timeout=300, env={"OMP_NUM_THREADS": "1", "UA_GLOO_TIMEOUT": "120"}, cwd=ROOT)
    (_, out0, err0), (_, _, err1) = ranks
    rows = {}
    for line in out0.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[row["check"]] = row
    tail = out0[-2000:] + err0[-3000:] + err1[-2000:]
    return [rc for rc, _, _ in ranks], rows, tail


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_check_holds_on_two_ranks(two_ranks: tuple[list[int], dict[str, dict[str, object]], str], check: str) -> None:
    _, rows, tail = two_ranks
    assert check in rows, f"check {check} did not report:\n{tail}"
    assert rows[check]["ok"], f"{check} failed: {rows[check]['error']}"
    assert isinstance(rows[check]["examples"], int) and rows[check]["examples"] >= 1


def test_both_ranks_exit_zero(two_ranks: tuple[list[int], dict[str, dict[str, object]], str]) -> None:
    rcs, rows, tail = two_ranks
    assert set(rows) == CHECKS, tail
    assert rcs == [0, 0], tail
