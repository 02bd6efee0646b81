"""benchmarks/scaling_model.py: the ring's per-step model reproduces the two-GPU timings it is calibrated on
within its stated tolerance, and its predictions keep the shape the model claims."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

MODEL = Path(__file__).resolve().parents[2] / "benchmarks" / "scaling_model.py"


def _model():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("scaling_model", MODEL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("scaling_model", mod)
    spec.loader.exec_module(mod)
    return mod


def test_model_reproduces_the_two_gpu_timings() -> None:
    m = _model()
    fixed = m.fit_fixed()
    assert 0 < fixed < 0.02
    for s, measured in m.MEASURED_2.items():
        got = m.speedup(s, 2, m.NVLINK_BPS, fixed)
        assert abs(got - measured) / measured <= m.TOLERANCE, (s, got, measured)


def test_predictions_grow_with_s_and_stay_under_the_gpu_count() -> None:
    m = _model()
    fixed = m.fit_fixed()
    for mc in m.MACHINES:
        sp = [m.speedup(1 << k, mc.gpus, mc.link_bps, fixed) for k in range(15, 23)]
        assert all(a < b for a, b in zip(sp, sp[1:], strict=False)), mc.name
        assert sp[-1] <= mc.gpus
    # The slower link costs at a size where NVLink does not: 2 hosts x 8 over InfiniBand against 16 on NVLink.
    assert m.speedup(1 << 17, 16, m.IB_BPS, fixed) < m.speedup(1 << 17, 16, m.NVLINK_BPS, fixed)


def test_table_prints() -> None:
    text = _model().table()
    assert "| 64k | 1.57 |" in text and "2 hosts x 8 GPUs" in text
