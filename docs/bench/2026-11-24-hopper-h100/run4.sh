#!/usr/bin/env bash
# Device run 4: every GPU test, compute-sanitizer on the Hopper kernel, ncu of d64, profiles.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
S=/tmp/b/app/stof
T=/tmp/b/tests/gpu/stof_gpu_tests
echo "== all GPU tests"
timeout 330 $T > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|^\[==========\]|HGMMA" $OUT/gpu_tests.log | head -12
echo "== sanitizer"
F='Masks/GpuHopperAttention.*/*_L128_*:Masks/GpuHopperAttention.*/*_L1000_d64:GpuHopperAttentionShapes.StridedViewsMatchPackedTensors'
for tool in memcheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 5 $T --gtest_filter="$F" > $OUT/sanitizer_$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $OUT/sanitizer_$tool.log | tr '\n' ' ')"
done
echo "== profiles"
for d in 64 128; do
  timeout 60 $S profile mha --pattern full --seq 4096 --batch 4 --heads 12 --dim $d --block 128x128 --warps 12 > $OUT/profile_full_d$d.txt 2>&1
  grep -E "compute|tensor_op|dram__bytes" $OUT/profile_full_d$d.txt | head -4
done
echo "== ncu d64"
timeout 150 ncu --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section Occupancy -k regex:HopperAttention -c 1 \
  $S bench mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block 128x128 --warps 12 --runs 50 --warmup 1 --no-counters > $OUT/ncu_d64.txt 2>&1
echo "ncu rc=$?"; grep -E "Stall|Issue|Eligible|Active Warps|Pipe|No Eligible" $OUT/ncu_d64.txt | head -40
