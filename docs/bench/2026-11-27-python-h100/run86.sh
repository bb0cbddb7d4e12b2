#!/usr/bin/env bash
# Device run 86: the session's final tree (staged bitmaps + C API version 5 + bound eager
# launches) validated in one call: the build, the Hopper GPU tests, the Python GPU tests, and
# a short mha_compare (ours through the C API against Flex, 8 rows of the paper grid).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > /tmp/hopper.log 2>&1; echo "hopper tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" /tmp/hopper.log | tee $OUT/run86_hopper_tests_summary.txt
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests > $OUT/run86_python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run86_python_tests.log
cd tests/compare && PYTHONUNBUFFERED=1 timeout 120 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --filter '/L4096/' --ours auto --methods ours,flex --cuda-graph --time-budget 100 --out $OUT/run86_compare_l4096.json > $OUT/run86_compare_l4096.log 2>&1
echo "compare rc=$? at $(( $(date +%s) - t0 )) s"; tail -6 $OUT/run86_compare_l4096.log
