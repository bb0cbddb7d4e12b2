#!/usr/bin/env bash
# Device run 103 (H200, 2026-11-28): run 102's fixes (test texts, d 8 in fp16), and the whole GPU
# test binary as ONE process (the studio profiles in one long-lived process: issue 35's CUPTI
# capture), then every Python GPU test.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
T=/tmp/b/tests/gpu/stof_gpu_tests
timeout 330 $T > $OUT/gpu_tests_one_process.log 2>&1; echo "gpu tests (one process) rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests_one_process.log | head -12
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' -v > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|Error:" $OUT/python_tests.log | head -20
echo "total $(( $(date +%s) - t0 )) s"
