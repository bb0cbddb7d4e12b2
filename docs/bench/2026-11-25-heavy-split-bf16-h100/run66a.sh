#!/usr/bin/env bash
# Device run 66a (session 9): the deterministic merge, the split rule (SplitPays), scratch
# reserved at prepare: every GPU test, python GPU tests, CLI test.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
timeout 330 /tmp/b/tests/gpu/stof_gpu_tests > /tmp/gpu_tests.log 2>&1; rc=$?; echo "gpu tests rc=$rc"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" /tmp/gpu_tests.log | head -12 | tee $OUT/gpu_tests_summary.log
grep -E "SameBits|Reserve|SplitPays|Strided|Dependent" /tmp/gpu_tests.log | grep -E "OK|FAILED"
grep -B2 -A12 "Failure" /tmp/gpu_tests.log | head -60
echo "at $(( $(date +%s) - t0 )) s"
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=$S PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 80 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_tests.log | head
timeout 85 tests/app/cli_test.sh $S > /tmp/cli.log 2>&1; echo "cli test rc=$?"; tail -1 /tmp/cli.log
echo "total $(( $(date +%s) - t0 )) s"
