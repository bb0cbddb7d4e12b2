#!/usr/bin/env bash
# Device run 142 (H200, 2026-11-29, session 21): the Hopper chain in the tuner's space
# (CudaBackend::GemmChainParamChoices offers its clusters and split groups on sm_90): every
# chain GPU test, among them the new one that runs each offered setting through the backend.
set -uo pipefail
cd "$(dirname "$0")/../../.."
STOF_BUILD_TARGETS="stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 100 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain*' > $OUT/run142_gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|OK \] HopperChain.Tuner" $OUT/run142_gpu_tests.log | head
