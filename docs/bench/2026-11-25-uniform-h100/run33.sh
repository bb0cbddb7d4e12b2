#!/usr/bin/env bash
# Device run 33 (session 5): after the warp-uniform fix: the extended grid (dense and causal
# against SDPA's dense kernels) and ncu of dense L4096 B4 H12 d64 at 64x128x5 and 128x128x12
# (the timed launches, not the check's), with the MUFU (XU), FMA, ALU and wgmma pipes.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
M=sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,sm__warps_active.avg.per_cycle_active,gpu__time_duration.sum
for c in "64x128 5" "128x128 12"; do set -- $c
  timeout 120 ncu --section WarpStateStats --section SchedulerStats --metrics $M -k regex:HopperAttention --launch-skip 3 -c 1 \
    /tmp/b/app/stof bench mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block $1 --warps $2 --runs 50 --warmup 1 --no-counters > $OUT/ncu_d64_$1.txt 2>&1
  echo "ncu $1 rc=$?"; grep -E "Stall|Eligible|Active Warps|pipe_|inst_executed|warps_active|duration|Cycles Per Issued" $OUT/ncu_d64_$1.txt | head -20
done
cd tests/compare
PYTHONUNBUFFERED=1 timeout 200 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 130 \
  --out $OUT/compare_extended.json > $OUT/compare_extended.log 2>&1; echo "extended rc=$?"; tail -8 $OUT/compare_extended.log
