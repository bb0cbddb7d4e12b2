#!/usr/bin/env bash
# Device run 121 (H200, 2026-11-28, session 18): the Hopper chain with its GEMMs overlapped (a
# chunk's k steps issued back to back, E += C D beside the next chunk's first steps) and the cluster's reduction pushed (remote stores into
# the owner's slots) instead of pulled; the chain GPU tests and memcheck, then
# `stof bench chain` as text and as JSON (G1-G12; CUDA graphs).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "HGMMA in stof: $(cuobjdump -sass /tmp/b/app/stof | grep -c HGMMA)"
timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Chain*' > $OUT/gpu_tests.log 2>&1; echo "chain tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|worst" $OUT/gpu_tests.log | head -20
timeout 90 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain.ThroughTheBackend:HopperChain.RaggedTilesBiasesGelu:HopperChain.FfnFormRelu' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -5
timeout 200 /tmp/b/app/stof bench chain > $OUT/bench_chain.txt 2>&1; echo "bench chain rc=$?"
cat $OUT/bench_chain.txt
timeout 200 /tmp/b/app/stof bench chain --json > $OUT/run121_chain.json 2>&1; echo "bench chain --json rc=$?"
echo "total $(( $(date +%s) - t0 )) s"
