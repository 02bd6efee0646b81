#!/usr/bin/env bash
# Does the whole test suite pass on a GPU machine? (within one call's time limit)
# The whole test suite on a lent GPU machine within one call's time limit: the test files in
# PARTS pytest processes side by side (balanced by file size; tests/jit/test_compile_once.py, whose cases
# are cold compiling processes, in one more of its own), with --devices gpu, plus the 14 torch
# precision API combinations on CUDA, each in its own process (the pytest test runs them one after
# another: about 25 s each). JUnit XML per part and a summary go to $OUT.
#   OUT=$OUT PARTS=4 bash benchmarks/gpu/suite_split.sh
set -u
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-3}
OUT=${OUT:-$PWD/out}
PARTS=${PARTS:-4}
mkdir -p "$OUT"
python3 setup.py -q build_ext --inplace > /dev/null 2>&1
python3 -c "import unarray.interop._routes as i, unarray._precision as p; print('ua.to in', 'C' if i.speedups else 'Python', '| switch in', 'C' if p._gate_type() else 'Python')"
# Balance the files over the parts: largest first, each to the lightest part so far.
python3 - "$PARTS" > /tmp/parts.txt <<'PY'
import os, sys
n = int(sys.argv[1])
# a file of cold processes that compile: a part of its own, from the start, so it ends inside the limit
SOLO = ("tests/jit/test_compile_once.py",)
files = sorted((os.path.getsize(os.path.join(d, f)), os.path.join(d, f)) for d, _, names in os.walk("tests")
               for f in names if f.startswith("test_") and f.endswith(".py") and "client" not in d
               and os.path.join(d, f) not in SOLO)
load, parts = [0] * n, [[] for _ in range(n)]
for size, f in reversed(files):
    i = load.index(min(load))
    load[i] += size
    parts[i].append(f)
for p in parts:
    print(" ".join(p))
for f in SOLO:
    print(f)
PY
i=0
while read -r files; do
  i=$((i + 1))
  # Note: the CUDA precision combinations run below, one process each.
  timeout 540 python3 -m pytest $files --devices gpu -q -p no:cacheprovider -o addopts="" -rfE --tb=short \
    -k "not every_torch_precision_api_combination_cuda" --junitxml="$OUT/part$i.xml" \
    -W ignore::DeprecationWarning > "/tmp/part$i.log" 2>&1 &
done < /tmp/parts.txt
firsts=$(python3 -c "from tests._torch_state import USER_APIS; print(' '.join(n for n, _ in USER_APIS))")
: > /tmp/combos.log
for f in $firsts; do
  ( r=$(timeout 500 python3 -m tests._precision_combos "$f" cuda 2>&1 | tail -n 3 | tr '\n' ' ')
    echo "$f: $r" >> /tmp/combos.log ) &
done
wait
{
  echo "# whole suite, $PARTS parts side by side, --devices gpu"
  for j in $(seq 1 "$i"); do echo "part $j: $(tail -n 1 /tmp/part$j.log)"; done
  echo; echo "# failures and errors"
  grep -h -E "^(FAILED|ERROR) " /tmp/part*.log || echo "none"
  echo; echo "# torch precision API combinations on CUDA (first API: last lines)"
  sort /tmp/combos.log
} > "$OUT/summary.txt"
cat /tmp/part*.log | grep -v "^\.\|^s\|^$" | tail -n 400 > "$OUT/parts_tail.log"
cat "$OUT/summary.txt"
