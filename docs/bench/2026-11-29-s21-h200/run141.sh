#!/usr/bin/env bash
# Device run 141 (H200, 2026-11-29, session 21): the code landed from runs 138-140: the merge by
# warps of HEAD with the arrival count of kernels/common/last_arrival.cuh (run 140's "light"),
# the GEMM chain's split groups on the same count, the decode test with one row per head and
# its same-bits check. The shape / pattern / split / decode / chain GPU tests, memcheck on
# the decode split and on the chain's split groups, HGMMA count.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
STOF_BUILD_TARGETS="stof_capi stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*HopperShapes*:*HopperPatterns*:*Split*:*Decode*:*HopperChain*' > $OUT/run141_gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" $OUT/run141_gpu_tests.log | head -20
el "tests"
timeout 100 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='GpuHopperShapes.DecodeSplitAndPackingMatchReference:HopperChain.SplitGroupsThroughTheBackendAndMissingWorkspace' > $OUT/run141_memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/run141_memcheck.log | tail -2
echo "HGMMA: $(cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA)"
el "total"
