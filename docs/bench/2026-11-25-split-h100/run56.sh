#!/usr/bin/env bash
# Device run 56 (session 8): validation of branch pending-gpu/all-split = pending-gpu/all (the
# profiler's Measure in named parts, the shared online softmax, the Hopper consumer's mask
# prefetch) + pending-gpu/kv-split (forced-only split of a tile's blocks over n CTAs).
# Every GPU test, then ours in graph replay with STOF_HOPPER_SPLIT 1/2/3 on short rows, then
# the python GPU tests.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
t0=$(date +%s)
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log; echo "build $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
$S profile mha --pattern bigbird --seq 1024 --batch 2 --heads 4 > $OUT/profile.txt 2>&1; echo "profile mha rc=$?"; grep -E "DRAM|output check|tensor" $OUT/profile.txt | head -4
timeout 330 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/gpu_tests.log | head -12
echo "at $(( $(date +%s) - t0 )) s"
cd tests/compare
for sp in 1 2 3; do
  STOF_HOPPER_SPLIT=$sp PYTHONUNBUFFERED=1 timeout 45 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so \
    --filter '/L(256|512|1024)/B1/d64|/L256/B8/d128|longformer/L4096/B1/d64' --ours auto --methods ours --cuda-graph --time-budget 28 \
    --out $OUT/split$sp.json > $OUT/split$sp.log 2>&1; echo "split $sp rc=$?"
done
python3 - <<PY
import json
r={}
for s in (1,2,3):
  try: r[s]={x['name']:x['methods']['ours']['graph_latency']['median_us'] for x in json.load(open(f'$OUT/split{s}.json'))['results'] if 'methods' in x}
  except Exception as e: r[s]={}; print('split',s,e)
for n in r[1]: print(f"{n:30s} " + "  ".join(f"S{s} {r[s].get(n,0):7.2f}" for s in (1,2,3)))
PY
cd ../..
echo "at $(( $(date +%s) - t0 )) s"
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=$S PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 80 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_tests.log | head -10
echo "total $(( $(date +%s) - t0 )) s"
