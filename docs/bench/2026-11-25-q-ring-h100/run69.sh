#!/usr/bin/env bash
# Device run 69 (session 10): the Q ring (two Q slots per CTA, the output staged in its item's
# slot) against HEAD 11be7b7 (a separate O tile). (1) builds of both trees; (2) the Hopper GPU
# tests and the MHA correctness suite on the new tree; (3) ours only, CUDA-graph replay, old and
# new alternating, two rounds, on short rows and a few long ones (d 64 and 128, 64- and 128-row
# tiles).
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
mkdir -p /tmp/old && tar -xf .devdeps/old.tar -C /tmp/old && cp -r .devdeps /tmp/old/
STOF_BUILD_TARGETS="stof stof_capi" /tmp/old/scripts/gpu-build /tmp/a > $OUT/build_old.log 2>&1 || { tail -30 $OUT/build_old.log; exit 1; }
echo "built at $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*:*MhaCorrectness*:*MhaEdge*:*MhaSmall*' > /tmp/gpu_tests.log 2>&1; rc=$?; echo "gpu tests rc=$rc"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" /tmp/gpu_tests.log | head -12 | tee $OUT/gpu_tests_summary.log
grep -B2 -A12 "Failure" /tmp/gpu_tests.log | head -80 > $OUT/gpu_test_failures.log
echo "at $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || exit 1
cd tests/compare
F='/L(128|256|512)/B(1|8|16)/d64|sliding_window/L(1024|4096)/B(1|16)/d64|bigbird/L(1024|4096)/B(1|8)/d64|(sliding_window|bigbird)/L(128|512|2048)/B8/d128'
for r in 1 2; do for t in a b; do
  PYTHONUNBUFFERED=1 timeout 70 python3 mha_compare.py --stof /tmp/$t/app/stof --lib /tmp/$t/kernels/libstof_capi.so \
    --filter "$F" --ours auto --methods ours --cuda-graph --time-budget 60 --out $OUT/ab_${t}_r$r.json > /tmp/ab$t$r.log 2>&1; echo "$t r$r rc=$?"
done; done
python3 - <<PY | tee $OUT/ab.txt
import json, math
def g(p):
  try: return {r['name']:r['methods']['ours']['graph_latency']['median_us'] for r in json.load(open(p))['results'] if 'methods' in r}
  except Exception as e: return {}
R={(t,r):g(f'$OUT/ab_{t}_r{r}.json') for t in 'ab' for r in (1,2)}
logs=[]
print(f'{"row":30s} {"old r1":>8s} {"old r2":>8s} {"new r1":>8s} {"new r2":>8s}  old/new')
for n in R[('a',1)]:
  o=min(R[('a',1)][n], R[('a',2)].get(n,1e9)); q=min(R[('b',1)].get(n,1e9), R[('b',2)].get(n,1e9))
  logs.append(math.log(o/q))
  print(f'{n:30s} {R[("a",1)][n]:8.2f} {R[("a",2)].get(n,0):8.2f} {R[("b",1)].get(n,0):8.2f} {R[("b",2)].get(n,0):8.2f}  {o/q:.3f}')
print('geomean old/new (best of two)', math.exp(sum(logs)/max(1,len(logs))), len(logs), 'rows')
PY
echo "total $(( $(date +%s) - t0 )) s"
