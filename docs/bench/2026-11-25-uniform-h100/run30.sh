#!/usr/bin/env bash
# Device run 30 (session 5): the launch path through WithHopperVariant (Hopper suite), step 2
# beside step 3 on the B1 d64 rows (run 29's plan), ncu of dense d64 at the automatic choice.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests.log | head -8
mkdir -p /tmp/step2 && tar -xf .devdeps/step2.tar -C /tmp/step2 && cp -r .devdeps /tmp/step2/
(export STOF_BUILD_TARGETS="stof stof_capi"; /tmp/step2/scripts/gpu-build /tmp/b_step2 >> $OUT/build.log 2>&1) || { tail -30 $OUT/build.log; exit 1; }
cd tests/compare
for v in b_step2 b; do
  PYTHONUNBUFFERED=1 timeout 80 python3 mha_compare.py --stof /tmp/$v/app/stof --lib /tmp/$v/kernels/libstof_capi.so \
    --filter '/B1/d64' --ours auto --methods ours,flex --cuda-graph --time-budget 60 \
    --out $OUT/compare_b1_$v.json > $OUT/compare_b1_$v.log 2>&1; echo "$v rc=$?"; grep -E "geomean speedup over the faster" $OUT/compare_b1_$v.log | tail -1
done
cd ../..
S=/tmp/b/app/stof
timeout 150 ncu --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats -k regex:HopperAttention -c 1 \
  $S bench mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block 64x128 --warps 5 --runs 3 --warmup 1 --no-counters > $OUT/ncu_d64_64x128.txt 2>&1
echo "ncu rc=$?"; grep -E "Stall|Issue|Eligible|Active Warps|Pipe|No Eligible|Executed Ipc" $OUT/ncu_d64_64x128.txt | head -40
