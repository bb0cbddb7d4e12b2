#!/usr/bin/env bash
# Device run 71 (session 10): the Q ring's validation. (1) every GPU test; (2) compute-sanitizer
# memcheck and synccheck on the persistent-grid and split tests (items through both Q slots,
# one and seven CTAs); (3) a tile sweep of the L128 rows, ours only, CUDA-graph replay.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 330 /tmp/b/tests/gpu/stof_gpu_tests > /tmp/gpu_tests.log 2>&1; rc=$?; echo "gpu tests rc=$rc"
grep -E "^\[  FAILED|^\[  PASSED|^\[  SKIPPED|tests from .* ran" /tmp/gpu_tests.log | head -20 > $OUT/gpu_tests_summary.txt
grep -E "SassUsesWarpgroupMma|HGMMA" /tmp/gpu_tests.log | head -5 >> $OUT/gpu_tests_summary.txt
grep -B2 -A12 "Failure" /tmp/gpu_tests.log | head -80 >> $OUT/gpu_tests_summary.txt
cat $OUT/gpu_tests_summary.txt | head -12
echo "at $(( $(date +%s) - t0 )) s"
for tool in memcheck synccheck; do
  timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 5 /tmp/b/tests/gpu/stof_gpu_tests \
    --gtest_filter='*PersistentGridMatchesReference*:*SplitBlocksMatchReference*' > /tmp/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' /tmp/san_$tool.log | tr '\n' ' ')" | tee -a $OUT/sanitizer.txt
done
echo "at $(( $(date +%s) - t0 )) s"
cd tests/compare
PYTHONUNBUFFERED=1 timeout 60 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --filter '/L128/' --ours auto,64x64x5,64x128x5,128x64x12,128x128x12 --methods ours --cuda-graph --time-budget 50 --out $OUT/tiles_l128.json > /tmp/tiles.log 2>&1; echo "tiles rc=$?"
python3 - <<PY | tee $OUT/tiles_l128.txt
import json
for r in json.load(open('$OUT/tiles_l128.json'))['results']:
  if 'methods' not in r: continue
  m=r['methods']; c=m['ours']['choice']
  s=' '.join(f"{k[5:]}={m[k]['graph_latency']['median_us']:.2f}" for k in m if k.startswith('ours_') and 'graph_latency' in m[k])
  print(f"{r['name']:30s} auto({c['block_m']}x{c['block_n']})={m['ours']['graph_latency']['median_us']:.2f} {s}")
PY
echo "total $(( $(date +%s) - t0 )) s"
