#!/usr/bin/env bash
# Device run 59 (session 8): validation of pending-gpu/all-split as it will merge (the
# profiler's Measure in parts, the shared online softmax, the column-only prefetch, the split
# with its capture fix): every GPU test, the python GPU tests, the CLI test, a profile smoke.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
$S profile mha --pattern bigbird --seq 1024 --batch 2 --heads 4 > $OUT/profile.txt 2>&1; echo "profile mha rc=$?"; grep -E "DRAM|output check|tensor" $OUT/profile.txt | head -3
timeout 340 /tmp/b/tests/gpu/stof_gpu_tests > /tmp/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" /tmp/gpu_tests.log | head -12 | tee $OUT/gpu_tests_summary.log
grep -E "^\[ *(RUN|OK|FAILED) *\]|Failure|error" /tmp/gpu_tests.log | grep -v "^\[ RUN" | tail -n 600 > $OUT/gpu_tests_tail.log
echo "at $(( $(date +%s) - t0 )) s"
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=$S PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 80 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_tests.log | head -10
timeout 85 tests/app/cli_test.sh $S > /tmp/cli_test.log 2>&1; echo "cli test rc=$?"; tail -3 /tmp/cli_test.log | tee $OUT/cli_test_tail.log
echo "total $(( $(date +%s) - t0 )) s"
