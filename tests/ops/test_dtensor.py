"""torch DTensors over gloo in 2 and 3 local processes: unarray.conformance.sharded_torch.

Each run starts its own process group (a free port) and prints one JSON line per property from rank 0;
a failure names the property and the falsifying draw. One run covers the hot ops, handoff and
mixing rules, and attention on 2 ranks; a second covers attention on 3 ranks (uneven shards, zigzag
over 6 chunks).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
pytest.importorskip("hypothesis")
if not (dist.is_available() and dist.is_gloo_available()):
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)

from unarray.conformance import local_group  # noqa: E402  (after the skip: it starts torch's store)

PROPERTIES = {"matmul", "reductions", "elementwise_and_permute", "device_handoff_mixing", "attention",
              "attention_heads_sharded", "attention_refuses_gradients_through_the_ring"}


def _run(*args: str) -> tuple[int, dict[str, dict[str, object]], str]:
    env = {**os.environ, "UA_GLOO_TIMEOUT": "90"}
    p = subprocess.run([sys.executable, "-m", "unarray.conformance.sharded_torch", *args], capture_output=True,
                       text=True, timeout=400, env=env)
    rows = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[row["property"]] = row
    return p.returncode, rows, p.stdout[-3000:] + p.stderr[-3000:]


@pytest.fixture(scope="module")
def two_ranks() -> tuple[int, dict[str, dict[str, object]], str]:
    return _run("--nproc", "2", "--examples", "6")


@pytest.mark.parametrize("prop", sorted(PROPERTIES))
def test_property_holds_on_two_ranks(two_ranks: tuple[int, dict[str, dict[str, object]], str], prop: str) -> None:
    _, rows, tail = two_ranks
    assert prop in rows, f"property {prop} did not report:\n{tail}"
    row = rows[prop]
    assert row["ok"], f"{prop} failed: {row['error']}"
    assert isinstance(row["examples"], int) and row["examples"] >= 1


def test_two_ranks_exit_zero(two_ranks: tuple[int, dict[str, dict[str, object]], str]) -> None:
    rc, rows, tail = two_ranks
    assert set(rows) == PROPERTIES, tail
    assert rc == 0, tail


def test_attention_on_three_ranks() -> None:
    rc, rows, tail = _run("--nproc", "3", "--examples", "6", "--only", "attention")
    assert {"attention", "attention_heads_sharded", "attention_refuses_gradients_through_the_ring"} <= set(rows), tail
    assert all(r["ok"] for r in rows.values()), [r["error"] for r in rows.values() if not r["ok"]]
    assert rc == 0, tail


def test_a_failing_property_is_named() -> None:
    # The harness reports a failure by name and exits non-zero: a property that cannot hold.
    code = ("from unarray.conformance import sharded_torch_rank as s\n"
            "def _never(mesh, data):\n"
            "    raise AssertionError('the sharded result differs')\n"
            "s.PROPERTIES[:] = [('never', _never)]\n"
            "from unarray.conformance.local_group import end_worker\n"
            "end_worker(s.worker(2, ''))\n")
    ranks = local_group.run_workers([sys.executable, "-c", code], 2, timeout=200, env={"UA_GLOO_TIMEOUT": "60"})
    assert [rc for rc, _, _ in ranks] == [1, 1], ranks[0][2][-2000:]
    row = json.loads(next(line for line in ranks[0][1].splitlines() if line.startswith("{")))
    assert row["property"] == "never" and row["ok"] is False
    assert "the sharded result differs" in row["error"]
