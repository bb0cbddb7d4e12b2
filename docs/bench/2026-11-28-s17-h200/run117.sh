#!/usr/bin/env bash
# Device run 117 (H200, 2026-11-28, session 17): the kept-keys GPU test again after the choice
# fix (num_warps 5 alone now means a 64-row tile; run 116 refused the model's 128 x 128 there).
set -uo pipefail
cd "$(dirname "$0")/../../.."
STOF_BUILD_TARGETS="stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 40 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*KeyBits*:*KeyRanges*:HopperShapes.*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|^\[       OK" $OUT/gpu_tests.log | head -12
