#!/usr/bin/env bash
# Dispatch and CPU handoff cost before/after, in one run on one machine (ratios to native, same run):
# benchmarks/dispatch.py through dispatch_ab.sh against BASE (an earlier commit's tree) and PREV (the
# previous session's last commit) on the torch CPU rows, then benchmarks/handoff.py (the CPU pairs:
# first and repeated handoffs) from BASE and NEW alternated. Everything goes to $OUT/ab.tgz.
#   BASE=.base PREV=.prev NEW=. OUT=$OUT bash benchmarks/gpu/trust_ab.sh
set -u
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
OUT=${OUT:-$PWD/out}
W=/tmp/trust_ab
mkdir -p "$OUT" "$W"
here=$(cd "$(dirname "$0")" && pwd)
pack() { tar czf "$OUT/ab.tgz" -C "$W" .; }  # after each step: a step cut off by the time limit loses only itself
BASE=$BASE NEW=$NEW ROUNDS=${ROUNDS:-2} OUT=$W/base bash "$here/dispatch_ab.sh" torch-cuda,cupy,jax-gpu,numpy,torch,jax
pack
BASE=$PREV NEW=$NEW ROUNDS=1 OUT=$W/prev bash "$here/dispatch_ab.sh" torch,torch-cuda,cupy
pack
for r in 1; do
  for side in base new; do
    tree=$BASE; [ $side = new ] && tree=$NEW
    (cd "$tree" && timeout 200 python3 benchmarks/handoff.py --out "$W/handoff" --stem "handoff_${side}_$r" \
      > "$W/handoff_${side}_$r.log" 2>&1)
    echo "handoff round $r $side rc=$?"
    pack
  done
done
