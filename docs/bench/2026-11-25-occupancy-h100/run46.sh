#!/usr/bin/env bash
# Device run 46 (session 6): where the time goes now. ncu of dense L4096 B4 H12 d64 (64 x 128,
# three CTAs per SM, serial: warp states, pipes); the kernel duration of a B1 L512 sliding
# window row (slower than Flex, ~6.8 us per graph call); hf_compare (whole models) on the
# new kernel.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$PWD
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
A="bench mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block 64x128 --warps 5"
timeout 150 ncu --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,sm__inst_executed_pipe_xu.sum,sm__cycles_elapsed.avg,smsp__inst_executed.avg,gpu__time_duration.sum \
  -k regex:HopperAttention --launch-skip 3 -c 1 /tmp/b/app/stof $A --runs 50 --warmup 1 --no-counters > $OUT/ncu_dense_d64.txt 2>&1
echo "ncu rc=$?"
grep -E "issue_stalled" $OUT/ncu_dense_d64.txt | awk '{print $NF, $1}' | sort -rn | head -10
grep -E "Active Warps Per|Eligible Warps|Issued Warp|No Eligible|cycles_elapsed|smsp__inst_executed.avg|pipe_xu|gpu__time_duration|Pipe Utilization|Executed Ipc" $OUT/ncu_dense_d64.txt | head -14
B="bench mha --pattern sliding_window --seq 512 --batch 1 --heads 12 --dim 64"
timeout 60 ncu --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.avg,launch__grid_size,launch__occupancy_limit_shared_mem \
  -k regex:HopperAttention --launch-skip 3 -c 3 /tmp/b/app/stof $B --runs 50 --warmup 1 --no-counters > $OUT/ncu_b1_l512.txt 2>&1
echo "ncu b1 rc=$?"; grep -E "gpu__time|cycles_active|cycles_elapsed|grid_size" $OUT/ncu_b1_l512.txt | head -12
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
(cd $OUT && PYTHONUNBUFFERED=1 timeout 200 python3 $R/python/bench/hf_compare.py --out hf.json --md hf.md --time-budget 150 --layers 12 > hf.log 2>&1; echo "hf rc=$?"; cat hf.md | head -30)
