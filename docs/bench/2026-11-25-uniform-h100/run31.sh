#!/usr/bin/env bash
# Device run 31 (session 5): the ring position stepped per block (no division per block), 32-bit
# item division, the producer at 32 registers (no spills) -- against step 3 (HEAD 9a8beb5) and
# step 2 (17f0963) on the B1 d64 rows; the Hopper suite; SASS; ncu of dense d64.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
for v in step2 step3; do
  mkdir -p /tmp/$v && tar -xf .devdeps/$v.tar -C /tmp/$v && cp -r .devdeps /tmp/$v/
  (export STOF_BUILD_TARGETS="stof stof_capi"; /tmp/$v/scripts/gpu-build /tmp/b_$v > /tmp/build_$v.log 2>&1; echo "$v build rc=$?") &
done
timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests.log | head -8
wait
for v in b b_step3 b_step2; do
  o=$(find /tmp/$v -name 'hopper_attention_d64.cu.o' | head -1)
  cuobjdump -sass "$o" > /tmp/sass_$v.txt 2>&1; echo "$v HGMMA $(grep -c HGMMA /tmp/sass_$v.txt) STL $(grep -c 'STL' /tmp/sass_$v.txt)"
done
tar -czf $OUT/sass_d64.tgz -C /tmp sass_b.txt sass_b_step3.txt sass_b_step2.txt
cd tests/compare
for v in b b_step3 b_step2; do
  m=ours; [ $v = b ] && m=ours,flex
  PYTHONUNBUFFERED=1 timeout 80 python3 mha_compare.py --stof /tmp/$v/app/stof --lib /tmp/$v/kernels/libstof_capi.so \
    --filter '/B1/d64' --ours auto --methods $m --cuda-graph --time-budget 45 \
    --out $OUT/compare_b1_$v.json > /tmp/compare_b1_$v.log 2>&1; echo "$v rc=$?"; grep -E "geomean speedup over the faster" /tmp/compare_b1_$v.log | tail -1
done
cd ../..
timeout 120 ncu --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats -k regex:HopperAttention -c 1 \
  /tmp/b/app/stof bench mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block 64x128 --warps 5 --runs 50 --warmup 1 --no-counters > $OUT/ncu_d64_64x128.txt 2>&1
echo "ncu rc=$?"; grep -E "Stall|Issue|Eligible|Active Warps|Pipe|No Eligible|Executed Ipc" $OUT/ncu_d64_64x128.txt | head -40
