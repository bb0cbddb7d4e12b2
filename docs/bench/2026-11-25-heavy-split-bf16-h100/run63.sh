#!/usr/bin/env bash
# Device run 63 (planned in session 8): branch pending-gpu/heavy-split (check it out first):
# heavy tiles' blocks split over CTAs, units planned by the layout, scratch owned by the layout.
# (1) every GPU test (SplitBlocksMatchReference, SplitLaunchesInCudaGraphs, the rewritten
# persistent-grid test, the qualified test files among them); (2) ours in CUDA-graph replay,
# STOF_HOPPER_SPLIT=0 / 1 alternating, two rounds, on B1 rows with global rows and on short
# rows (the split must not touch those: no heavy tile).
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 340 /tmp/b/tests/gpu/stof_gpu_tests > /tmp/gpu_tests.log 2>&1; rc=$?; echo "gpu tests rc=$rc"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" /tmp/gpu_tests.log | head -12 | tee $OUT/gpu_tests_summary.log
grep -E "Split|Units|Pieces" /tmp/gpu_tests.log | grep -E "OK|FAILED" | head
grep -B2 -A12 "Failure" /tmp/gpu_tests.log | head -80 > $OUT/gpu_test_failures.log
echo "at $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || exit 1
cd tests/compare
F='(longformer|bigbird)/L(1024|2048|4096)/B1/d64|sliding_window/L(256|4096)/B1/d64|bigbird/L512/B8/d64'
for r in 1 2; do for sp in 0 1; do
  STOF_HOPPER_SPLIT=$sp PYTHONUNBUFFERED=1 timeout 50 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
    --filter "$F" --ours auto --methods ours --cuda-graph --time-budget 40 --out $OUT/split${sp}_r$r.json > /tmp/s$sp$r.log 2>&1; echo "split $sp r$r rc=$? $(grep -c illegal /tmp/s$sp$r.log)"
done; done
python3 - <<PY
import json
def g(p):
  try: return {r['name']:r['methods']['ours']['graph_latency']['median_us'] for r in json.load(open(p))['results'] if 'methods' in r}
  except Exception as e: return {}
R={(s,r):g(f'$OUT/split{s}_r{r}.json') for s in (0,1) for r in (1,2)}
for n in R[(0,1)]: print(f'{n:30s} whole {R[(0,1)][n]:8.2f} {R[(0,2)].get(n,0):8.2f}  split {R[(1,1)].get(n,0):8.2f} {R[(1,2)].get(n,0):8.2f}')
PY
# The cut: 5 and 20 blocks against the default (2 x mean) on the rows that split.
for cut in 5 20; do
  STOF_HOPPER_SPLIT=1 STOF_HOPPER_SPLIT_CUT=$cut PYTHONUNBUFFERED=1 timeout 40 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
    --filter '(longformer|bigbird)/L(2048|4096)/B1/d64' --ours auto --methods ours --cuda-graph --time-budget 30 --out $OUT/cut$cut.json > /tmp/c$cut.log 2>&1; echo "cut $cut rc=$?"
done
python3 -c "
import json
for c in (5, 20):
  for r in json.load(open('$OUT/cut%d.json' % c))['results']:
    if 'methods' in r: print('cut', c, r['name'], round(r['methods']['ours']['graph_latency']['median_us'], 2))
"
echo "total $(( $(date +%s) - t0 )) s"
