#!/usr/bin/env bash
# Device run 106 (H200, 2026-11-28): where a B 1 decode step's time goes (issue 31). `stof bench
# mha` with CUPTI counters (kernel activity time against the event time, DRAM bytes) at 32, 16
# and 8 chunks per tile (STOF_HOPPER_SPLIT_CUT 16, 32, 64 over its 512 blocks), ncu's speed of
# light, occupancy and launch sections on the default, then tests/compare/shapes_compare.py
# --only decode against SDPA (cuDNN, flash) and FlexAttention with CUDA-graph replays.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
B1="--pattern causal --seq 32768 --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --q-len 1"
for cut in "" 32 64; do
  STOF_HOPPER_SPLIT_CUT=$cut /tmp/b/app/stof bench mha $B1 --json > $OUT/b1_cut${cut:-default}.json 2> $OUT/err.txt
  python3 - "$cut" $OUT/b1_cut${cut:-default}.json <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
lat, c = d["latency"], d.get("counters", {})
print("cut", sys.argv[1] or "default", "event_us %.2f" % lat["median_us"], "kernel_activity_us", lat.get("kernel_activity_us"),
      "floor_us %.2f" % d["floor"]["floor_us"], "dram_over_min", c.get("dram_over_min_bytes"), "check", d["check"]["passed"])
PY
done
timeout 120 ncu --kernel-name regex:HopperAttentionKernel --launch-skip 20 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
  /tmp/b/app/stof bench mha $B1 --no-counters --runs 50 > $OUT/ncu_b1.txt 2>&1; echo "ncu rc=$?"
grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Grid Size|Registers Per|Achieved Occupancy|Theoretical Occupancy|Waves Per SM|Block Limit|L2 Hit" $OUT/ncu_b1.txt | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout $(( 580 - ($(date +%s) - t0) )) python3 tests/compare/shapes_compare.py --only decode --json $OUT/run106_decode.json > $OUT/decode.log 2>&1; echo "bench rc=$?"
tail -14 $OUT/decode.log
echo "total $(( $(date +%s) - t0 )) s"
