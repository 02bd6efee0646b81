"""JAX arrays sharded over a mesh (NamedSharding) on 4 fake host devices: hot ops keep jax.numpy's sharding
and equal the float64 reference, sequence-sharded attention runs the ring (values and gradients equal the
unsharded call), ua.device describes the placement, different meshes raise DeviceMismatchError, and a NaN in
one shard propagates through every reduction as it does on one device.

JAX fixes its device count at import (``--xla_force_host_platform_device_count``), and this session imports
JAX earlier, so the Hypothesis properties run once in a subprocess
(``python -m unarray.conformance.sharded_jax``); each test asserts on one property's entry of its JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("jax")
pytest.importorskip("hypothesis")

PROPERTIES = ("hot_ops", "attention", "attention_grad", "attention_jit", "mixed", "device", "mesh_mismatch",
              "nan_reductions")


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_ENABLE_X64")}
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.run([sys.executable, "-m", "unarray.conformance.sharded_jax"], capture_output=True,
                          text=True, env=env, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"no JSON report (exit {proc.returncode}); stderr:\n{proc.stderr[-3000:]}"
    out: dict[str, Any] = json.loads(lines[-1])
    out["returncode"] = proc.returncode
    return out


def test_the_subprocess_has_four_devices(report: dict[str, Any]) -> None:
    assert report.get("error") is None, report.get("error")
    assert report["devices"] == 4
    assert [r["property"] for r in report["results"]] == list(PROPERTIES)


@pytest.mark.parametrize("name", PROPERTIES)
def test_property(report: dict[str, Any], name: str) -> None:
    (r,) = [r for r in report["results"] if r["property"] == name]
    assert r["ok"], f"{name} failed after {r['examples']} examples:\n{r['error']}"
    assert r["examples"] >= 1


def test_exit_status_follows_the_results(report: dict[str, Any]) -> None:
    assert report["returncode"] == (0 if all(r["ok"] for r in report["results"]) else 1)


def test_a_broken_property_is_reported_by_name() -> None:
    # The runner's own check: a property that fails is named, with the failing example, and exits 1.
    code = (
        "import sys\n"
        "from unarray.conformance import sharded_jax as S\n"
        "def broken(seed, spec_i):\n"
        "    raise AssertionError('the placement was wrong')\n"
        "S.device = broken\n"
        "sys.exit(S.main(['--only', 'device', '--examples', '1']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    report = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1])
    (r,) = report["results"]
    assert proc.returncode == 1 and r["property"] == "device" and not r["ok"]
    assert "the placement was wrong" in r["error"] and "device(" in r["error"]
