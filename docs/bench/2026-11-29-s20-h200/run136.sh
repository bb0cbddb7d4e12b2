#!/usr/bin/env bash
# Device run 136 (session 20): after the MHA choice became one engine function (the kernels'
# host rules moved into the engine, the Hopper rules shared) and the recomposition test's
# helpers: the GPU tests of the kernels whose host checks changed (mma.sync block-wise,
# recomposition, Hopper configuration, the choice and the capabilities) and the chain tests.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS=stof_gpu_tests bash scripts/gpu-build /tmp/b > /tmp/build.log 2>&1 || { tail -20 /tmp/build.log; exit 1; }
echo "built at $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout $(( 175 - ($(date +%s) - t0) )) /tmp/b/tests/gpu/stof_gpu_tests \
  --gtest_filter='GpuRecomposedMhaEdge.*:MhaCapabilities*:MhaChoice*:MhaDispatch*:GpuPreparedMha*:GpuMhaBackend*:GpuMhaEdge*:GpuMhaSmall*:HopperConfig*:HopperChain*:RecomposeParamsHost*:NativeMhaChoice*' \
  > $OUT/run136_gpu_tests.log 2>&1
echo "rc=$? at $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" $OUT/run136_gpu_tests.log | head
