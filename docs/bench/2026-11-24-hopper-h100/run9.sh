#!/usr/bin/env bash
# Device run 9: the tuner with the Hopper configurations, the Hopper and choice tests.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 300 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='GpuTune.*:*Hopper*:MhaChoice.*:GpuLayer*:GpuPreparedMha.*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|^\[==========\]" $OUT/gpu_tests.log | head -12
grep -B3 -A6 "Failure" $OUT/gpu_tests.log | head -30
