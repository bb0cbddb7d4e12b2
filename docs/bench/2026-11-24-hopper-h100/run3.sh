#!/usr/bin/env bash
# Device run 3: schedules (serial / overlap / pingpong) and the extended grid.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
S=/tmp/b/app/stof
echo "== pingpong tests"
STOF_HOPPER_SCHEDULE=3 timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='Masks/GpuHopperAttention.*/full*:Masks/GpuHopperAttention.*/causal*:Masks/GpuHopperAttention.*/bigbird*:Masks/GpuHopperAttention.*/holes*:Masks/GpuHopperAttention.*/empty*:GpuHopperAttentionShapes.*' > $OUT/tests_pingpong.log 2>&1; echo "pingpong tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED" $OUT/tests_pingpong.log | head -8
echo "== schedules"
b() { timeout 60 $S bench mha "$@" --runs 50 --no-counters 2>&1 | grep -E "^latency" | sed -E 's/ +/ /g' | cut -c1-30; }
for d in 64 128; do for pat in full causal; do for sch in 0 1 3; do
  echo "$pat L4096 B4 H12 d$d 128x128 schedule $sch: $(STOF_HOPPER_SCHEDULE=$sch b --pattern $pat --seq 4096 --batch 4 --heads 12 --dim $d --block 128x128 --warps 12)"
done; done; done | tee $OUT/schedules.txt
echo "== extended grid"
cd tests/compare && PYTHONUNBUFFERED=1 timeout 330 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto,128x128x12 --methods ours,flex,sdpa --cuda-graph --time-budget 300 \
  --out $OUT/compare_extended.json > $OUT/compare_extended.log 2>&1; echo "compare rc=$?"; grep -A60 "CUDA-graph latency" $OUT/compare_extended.log | head -60; tail -22 $OUT/compare_extended.log
