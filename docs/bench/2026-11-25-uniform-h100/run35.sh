#!/usr/bin/env bash
# Device run 35 (session 5): where dense d64 (64x128x5) waits: ncu stall reasons per issued
# instruction and the SASS lines with the most stall samples; serial vs overlap schedule.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
A="bench mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block 64x128 --warps 5"
timeout 200 ncu --section WarpStateStats --section SourceCounters --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,sm__inst_executed_pipe_xu.sum,sm__cycles_elapsed.avg,smsp__inst_executed.avg \
  --print-details all -k regex:HopperAttention --launch-skip 3 -c 1 /tmp/b/app/stof $A --runs 50 --warmup 1 --no-counters > $OUT/ncu_stalls.txt 2>&1
echo "ncu rc=$?"
grep -E "issue_stalled" $OUT/ncu_stalls.txt | awk '{print $NF, $1}' | sort -rn | head -14
grep -E "cycles_elapsed|smsp__inst_executed.avg|pipe_xu" $OUT/ncu_stalls.txt
for s in 0 1; do echo "schedule $s: $(STOF_HOPPER_SCHEDULE=$s timeout 30 /tmp/b/app/stof $A --runs 100 --no-counters | grep -E '^latency|^throughput' | tr -s ' ' | cut -c1-60 | paste -sd' ')"; done
