#!/usr/bin/env bash
# Device run 114 (H200, 2026-11-28, session 17): whole models with padding holes (every other
# row has 32 padding tokens inside it, which no per-row key range says):
# python/bench/hf_padding_bench.py --holes, "stof" (one launch over a mask per batch row) against
# "stof_per_row" (one launch per row, what ran before), "sdpa" and "flex_attention"; then ncu on
# one d 256 causal prefill launch (L4096 B4, 16 over 8 heads, bf16), where run 113's ncu call
# was refused (--runs below 50).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python:$PWD/python/bench
timeout 300 python3 python/bench/hf_padding_bench.py --holes --reps 10 --out $OUT/run114_holes.json > $OUT/holes.log 2>&1; echo "holes rc=$?"
grep -E "^\{" $OUT/holes.log | tail -8
echo "at $(( $(date +%s) - t0 )) s"
D256="--pattern causal --seq 4096 --batch 4 --heads 16 --kv-heads 8 --head-dim 256 --dtype bf16"
timeout 180 ncu --kernel-name regex:HopperAttentionKernel --launch-skip 10 --launch-count 1 --set full \
  /tmp/b/app/stof bench mha $D256 --no-counters --runs 50 > $OUT/ncu_d256.txt 2>&1; echo "ncu rc=$?"
grep -E "^  [A-Z].*Kernel|Duration|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Waves Per SM|L2 Hit|Executed Ipc A|Issue Slots Busy|No Eligible|Grid Size|Block Size|Local|Dynamic Shared" $OUT/ncu_d256.txt | head -30
grep -iE "stall|cycles per issued|bottleneck|est. speedup" $OUT/ncu_d256.txt | head -16
echo "total $(( $(date +%s) - t0 )) s"
