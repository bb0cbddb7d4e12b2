#!/usr/bin/env bash
# Device run 113 (H200, 2026-11-28, session 17): the two rows of masks per batch row / head
# again with FlexAttention also given the closed-form mask_mod a Flex user writes (document ids
# compared; causal with a window on half the heads), not a mask tensor read per element; then
# where d 256 prefill's time goes (issue 31: 0.91x cuDNN in run 100): ncu on one launch of the
# causal L4096 B4 16-over-8-heads bf16 prefill (the 128 x 64 tile).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
timeout 240 python3 tests/compare/shapes_compare.py --match "docs" --json $OUT/run113_varlen.json > $OUT/compare.log 2>&1; echo "compare rc=$?"
timeout 200 python3 tests/compare/shapes_compare.py --match "heads causal" --json $OUT/run113_heads.json >> $OUT/compare.log 2>&1; echo "compare rc=$?"
grep -E " us |^row|\| " $OUT/compare.log | grep -v Warn | tail -16
echo "at $(( $(date +%s) - t0 )) s"
D256="--pattern causal --seq 4096 --batch 4 --heads 16 --kv-heads 8 --head-dim 256 --dtype bf16"
/tmp/b/app/stof bench mha $D256 --no-counters --runs 50 > $OUT/d256_bench.txt 2>&1; grep -E "^(choice|latency|floor|throughput)" $OUT/d256_bench.txt
timeout 150 ncu --kernel-name regex:HopperAttentionKernel --launch-skip 10 --launch-count 1 --set full \
  /tmp/b/app/stof bench mha $D256 --no-counters --runs 20 > $OUT/ncu_d256.txt 2>&1; echo "ncu rc=$?"
grep -E "Duration|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Waves Per SM|L2 Hit|Executed Ipc A|Issue Slots Busy|No Eligible|Grid Size|Local" $OUT/ncu_d256.txt | head -24
grep -iE "stall|warp cycles per issued" $OUT/ncu_d256.txt | head -12
echo "total $(( $(date +%s) - t0 )) s"
