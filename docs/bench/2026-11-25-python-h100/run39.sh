#!/usr/bin/env bash
# Device run 39 (session 5): the GPU tests run 38's time limit cut off (every test but the 485
# that passed there).
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter="-$(cat .devdeps/passed_filter.txt)" > $OUT/gpu_tests_rest.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|OK \]" $OUT/gpu_tests_rest.log | head -20
