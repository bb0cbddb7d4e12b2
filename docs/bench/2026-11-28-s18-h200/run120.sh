#!/usr/bin/env bash
# Device run 120 (H200, 2026-11-28, session 18): run 119's Hopper chain with the benchmark's
# cluster list fixed (run 119 asked for it with unallocated arguments and got none): the chain
# GPU tests again, then `stof bench chain` as text and as JSON (G1-G12; CUDA graphs).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "HGMMA in stof: $(cuobjdump -sass /tmp/b/app/stof | grep -c HGMMA)"
timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Chain*' > $OUT/gpu_tests.log 2>&1; echo "chain tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" $OUT/gpu_tests.log | head -20
timeout 200 /tmp/b/app/stof bench chain > $OUT/bench_chain.txt 2>&1; echo "bench chain rc=$?"
cat $OUT/bench_chain.txt
timeout 200 /tmp/b/app/stof bench chain --json > $OUT/run120_chain.json 2>&1; echo "bench chain --json rc=$?"
echo "total $(( $(date +%s) - t0 )) s"
