#!/usr/bin/env bash
# Do unarray's GPU checks pass, and what do its GPU benchmarks give? (all of them, for one lent GPU machine)
#   bash benchmarks/gpu/run_all.sh PHASE     (PHASE: correctness | bench | stress | attention | all)
# Results go to $OUT (default ./out) as one tarball plus a summary, so that
# they come back whole; each step has its own time limit and a failing step
# does not stop the others.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/out}
RES=/tmp/unarray-gpu-results
mkdir -p "$OUT" "$RES"
phase=${1:-all}
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
# ua.to's C hot path, built for this machine's Python (without a compiler the Python path runs).
python3 setup.py -q build_ext --inplace > "$RES/build_ext.log" 2>&1
python3 -c "import unarray.interop._routes as i; print('ua.to in', 'C' if i.speedups else 'Python')" > "$RES/ua_to.txt" 2>&1
cat "$RES/ua_to.txt"
python3 - > "$RES/versions.txt" 2>&1 <<'PY'
import platform, importlib
print("python", platform.python_version())
for m in ("numpy", "torch", "cupy", "jax", "jaxlib", "numba", "array_api_compat", "hypothesis"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "missing", e)
import torch
print("gpu", torch.cuda.get_device_name(0), "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
PY
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv >> "$RES/versions.txt" 2>&1

step() {  # step NAME SECONDS CMD...
  local name=$1 secs=$2; shift 2
  echo "== $name"; local t0=$(date +%s)
  timeout "$secs" "$@" > "$RES/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t0 ))s" | tee -a "$RES/steps.txt"
  tail -n 25 "$RES/$name.log"
}

if [[ $phase == correctness || $phase == all ]]; then
  # The GPU test suite and the conformance suite check answers, not speed: they share the GPU.
  step gpu_tests 400 python3 -m pytest tests --devices gpu -q -p no:cacheprovider -o addopts="" \
    --junitxml="$RES/gpu_tests.xml" --maxfail=200 -W ignore::DeprecationWarning &
  step conformance 400 python3 -m unarray check --profile quick --jobs 4 --out "$RES/conformance" &
  wait
fi
if [[ $phase == bench || $phase == all ]]; then
  if [[ ${BENCH:-all} != handoff ]]; then  # BENCH=handoff: the handoff benchmarks only
    step dispatch 120 python3 benchmarks/dispatch.py --backends torch-cuda,cupy,jax-gpu,numpy,torch,jax \
      --repeats 9 --number 1000 --out "$RES" --tag h100
    [ -f benchmarks/gpu/cupy_check.py ] && step cupy_check 90 env OUT="$RES" python3 benchmarks/gpu/cupy_check.py
  fi
  # The host's own speed over time, from a process beside the matrix (are its slow spells the machine's?).
  env OUT="$RES" python3 benchmarks/gpu/host_speed.py 600 > "$RES/host_speed.log" 2>&1 &
  sampler=$!
  [ -f benchmarks/gpu/handoff_gpu.py ] && step handoff 240 env OUT="$RES" python3 benchmarks/gpu/handoff_gpu.py
  # The same matrix on the pure-Python path, for the C path's share.
  [ -f benchmarks/gpu/handoff_gpu.py ] && step handoff_python 240 env OUT="$RES/python" UNARRAY_PURE_PYTHON=1 \
    python3 benchmarks/gpu/handoff_gpu.py
  # JAX sources still computing when handed over, on both paths, beside the consumers' own imports.
  step stream_order_jax 120 env OUT="$RES" python3 benchmarks/gpu/stream_order_jax.py 40
  step stream_order_jax_python 120 env OUT="$RES" UNARRAY_PURE_PYTHON=1 python3 benchmarks/gpu/stream_order_jax.py 40
  kill $sampler 2>/dev/null; wait $sampler 2>/dev/null
fi
if [[ $phase == stress ]]; then
  # The handoff conformance checks (JAX -> Numba among them) again and again, while another process
  # keeps the GPU busy: one earlier run under load had 3 JAX -> Numba "values changed" failures.
  python3 - > "$RES/stress_load.log" 2>&1 <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda")
t0 = time.time()
while time.time() - t0 < 300:
    a = torch.tanh(a @ a / 8192)
    torch.cuda.synchronize()
print("load done")
PY
  load=$!
  for i in $(seq 1 ${STRESS_RUNS:-8}); do
    step "stress_$i" 120 python3 -m unarray check --ops handoff --devices cuda --seed "$i" --out "$RES/stress_$i"
  done
  kill $load 2>/dev/null; wait
  grep -h "fail\|error" "$RES"/stress_*.log | grep -v " 0 fail" | head -40 > "$RES/stress_failures.txt"
fi
if [[ $phase == attention || $phase == all ]]; then
  [ -f benchmarks/gpu/attention_gpu.py ] && step attention 420 env OUT="$RES" python3 benchmarks/gpu/attention_gpu.py
fi
tar czf "$OUT/results-$phase.tgz" -C "$RES" .
cp "$RES/steps.txt" "$OUT/steps-$phase.txt" 2>/dev/null
exit 0
