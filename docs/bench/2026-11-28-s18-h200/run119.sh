#!/usr/bin/env bash
# Device run 119 (H200, 2026-11-28, session 18): the first Hopper GEMM chain (issue 32,
# kernels/gemm_chain_hopper/: TMA ring, wgmma, a producer warp and a consumer warpgroup, C
# split over a cluster's CTAs and E reduced through distributed shared memory). Its GPU tests
# and the mhnk chain's (which now share chain_test_util.h), compute-sanitizer memcheck on the
# backend test, the HGMMA count, then `stof bench chain --json` on G1-G12 (the mhnk settings,
# the Hopper chain at each cluster size, two cuBLASLt GEMMs; CUDA graphs).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_gpu_tests stof_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "HGMMA: $(cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA)"
timeout 240 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Chain*' > $OUT/gpu_tests.log 2>&1; echo "chain tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran|Failure|error|Expected|Which is|worst" $OUT/gpu_tests.log | head -40
echo "at $(( $(date +%s) - t0 )) s"
timeout 90 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain.ThroughTheBackend:HopperChain.RaggedTilesBiasesGelu' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -5
echo "at $(( $(date +%s) - t0 )) s"
timeout 200 /tmp/b/app/stof bench chain > $OUT/bench_chain.txt 2>&1; echo "bench chain rc=$?"
cat $OUT/bench_chain.txt
echo "total $(( $(date +%s) - t0 )) s"
