#!/usr/bin/env bash
# Dispatch cost, before/after, in one run on one machine: benchmarks/dispatch.py from two trees
# (BASE: an earlier commit's checkout, NEW: this one), alternated ROUNDS times so that both see the
# same host speeds. Each table is unarray vs native vs array-api-compat timed interleaved; compare the
# unarray/native ratios of the two trees.
#   BASE=.base NEW=. ROUNDS=2 OUT=$OUT bash benchmarks/gpu/dispatch_ab.sh [BACKENDS]
set -u
BACKENDS=${1:-torch-cuda,cupy,jax-gpu,numpy,torch,jax}
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
for tree in "$BASE" "$NEW"; do (cd "$tree" && python3 setup.py -q build_ext --inplace > /dev/null 2>&1); done
for r in $(seq 1 "${ROUNDS:-2}"); do
  for side in base new; do
    tree=$BASE; [ $side = new ] && tree=$NEW
    python3 "$tree/benchmarks/dispatch.py" --backends "$BACKENDS" --repeats 9 --number 1000 \
      --out "$OUT" --tag "ab_${side}_$r" > "$OUT/ab_${side}_$r.log" 2>&1
    echo "round $r $side rc=$?"
  done
done
