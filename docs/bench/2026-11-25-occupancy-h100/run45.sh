#!/usr/bin/env bash
# Device run 45 (session 6): every GPU test and the python GPU tests on the committed tree;
# `stof bench mha` dense L4096 B4 H12 (the TFLOP/s targets); then the B1 L256-512 d64 rows
# (slower than Flex in run 44) with portable configurations beside the Hopper one.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$PWD
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 340 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/gpu_tests.log | head -12
(export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
 PYTHONUNBUFFERED=1 timeout 80 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
 grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_tests.log | head -10)
for d in 64 128; do
  /tmp/b/app/stof bench mha --pattern full --seq 4096 --batch 4 --heads 12 --dim $d --runs 100 > $OUT/bench_full_d$d.txt 2>&1
  grep -E "^kernel|^latency|^throughput|^DRAM" $OUT/bench_full_d$d.txt
done
cd tests/compare
PYTHONUNBUFFERED=1 timeout 60 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --filter 'L(256|512)/B1/d64' --ours auto,64x64x4,64x64x8,32x64x4,32x64x8,16x64x4 --methods ours,flex --cuda-graph --time-budget 45 \
  --out $OUT/compare_b1_small.json > $OUT/compare_b1_small.log 2>&1; echo "b1 small rc=$?"; tail -12 $OUT/compare_b1_small.log
