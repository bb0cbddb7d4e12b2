#!/usr/bin/env bash
# Device run 124 (H200, 2026-11-28, session 19; written in session 18): the mma.sync kernels split into named parts
# (commit 4ee37b3: block-wise, gemm_norm and SDF PTX byte-identical; gemm_chain's registers
# renumbered, so its tests run here) and the chain benchmark's host refactor: the GEMM-chain
# GPU tests (mhnk and Hopper) and `stof bench chain --shape G4 G12`.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 60 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Chain*:*GemmNorm*' > $OUT/run124_gpu_tests.log 2>&1; echo "chain + gemm_norm tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/run124_gpu_tests.log | head -10
timeout 30 /tmp/b/app/stof bench chain --shape G4 G12 > $OUT/run124_bench_chain.txt 2>&1; echo "bench rc=$?"; cat $OUT/run124_bench_chain.txt
echo "HGMMA in stof: $(cuobjdump -sass /tmp/b/app/stof | grep -c HGMMA)"
echo "total $(( $(date +%s) - t0 )) s"
