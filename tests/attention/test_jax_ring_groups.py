"""JAX's sequence-sharded ring walks the heads in groups (ring_memory.head_groups) on 2 fake CPU devices
(tests/_jax_ring_inside.py, a subprocess: JAX fixes its device count at import): grouped equals one group and
the float64 reference (values and gradients), the compiled ring's per-device peak (XLA's memory_analysis) is
at most one device's for the whole sequence, and the counted extra bytes bound XLA's temporaries; the two-device
split equals the ring (values and gradients) and the reference, its peak is under one device's, and its
own count of extra bytes bounds its temporaries; a window and segment ids give the reference's values and gradients
on the ring at global positions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("hypothesis")

CHECKS = ("groups_equal_one_group", "one_group_below_the_row_floor", "peak_under_one_device",
          "count_bounds_the_temporaries", "split_equals_the_ring", "split_peak_under_one_device",
          "split_count_bounds_the_temporaries", "structured_masks_equal_the_reference")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows() -> tuple[dict[str, dict[str, object]], str]:
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_ENABLE_X64")}
    env.update(XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", "from tests import _jax_ring_inside as t; t.main()"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            out[row["check"]] = row
    return out, proc.stdout[-2000:] + proc.stderr[-3000:]


@pytest.mark.parametrize("check", CHECKS)
def test_check_holds_on_two_devices(rows: tuple[dict[str, dict[str, object]], str], check: str) -> None:
    got, tail = rows
    assert check in got, f"check {check} did not report:\n{tail}"
    assert got[check]["ok"], f"{check} failed: {got[check]['error']}"
    assert int(str(got[check]["examples"])) >= 1
