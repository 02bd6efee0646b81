#!/bin/bash
# How close does ua.ascontiguousarray come to copy bandwidth, and do its GPU tests pass? (one device call)
# One device call for ua.ascontiguousarray: the GPU benchmark, then the GPU tests.
# Run from the repository root on the GPU machine (after the .whl install and build_ext):
#   bash benchmarks/gpu/layout_run.sh
# Writes under $OUT: layout/layout_gpu.{json,md,png}, bench.log, tests.log.
set -o pipefail
mkdir -p "$OUT/layout"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/layout/nvidia-smi.csv" 2>&1
timeout ${BENCH_S:-150} python3 benchmarks/gpu/layout_gpu.py --out "$OUT/layout" 2>&1 | tee "$OUT/bench.log"
timeout ${TESTS_S:-120} python3 -m pytest --devices gpu -q -x -p no:randomly -p no:cacheprovider \
    tests/ops/test_layout.py 2>&1 | tee "$OUT/tests.log"
