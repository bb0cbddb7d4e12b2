#!/usr/bin/env bash
# Device run 70 (session 10): where the short rows' time goes, on the Q-ring kernel.
# (1) ncu of one launch (clocks and caches left alone) on sliding window L512 B8 (768 items,
# 1.45 per resident CTA), L256 B8 (384: one wave) and L4096 B16 (12288) at d 64;
# (2) a tile sweep, ours only, CUDA-graph replay, on the short rows (is 64 x 64 the right
# choice there?); (3) one CTA per item against the persistent grid on the same rows.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
M="--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__cycles_active.avg,sm__cycles_elapsed.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__cycles_active.avg"
for cfg in "512 8" "256 8" "4096 16"; do set -- $cfg
  timeout 100 ncu --cache-control none --clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy $M \
    -k regex:HopperAttention -s 20 -c 1 $S bench mha --pattern sliding_window --seq $1 --batch $2 --heads 12 --dim 64 --runs 50 --warmup 1 --no-counters > /tmp/ncu_$1_$2.txt 2>&1
  echo "ncu L$1 B$2 rc=$?"
done
cat /tmp/ncu_*.txt | grep -vE "^==PROF==|^  *-+$" | grep -E "sliding|HopperAttention|Duration|DRAM|dram__|lts__|sm__|smsp__|gpu__|Stall|Warp Cycles|Active Warps|Eligible|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|Compute \(SM\)|Block Limit|L2 Cache|L1/TEX Hit|seq" > $OUT/ncu_short_rows.txt
echo "ncu at $(( $(date +%s) - t0 )) s"
cd tests/compare
F='sliding_window/L(256|512|1024)/B(1|8|16)/d64|bigbird/L(256|512)/B(8|16)/d64|sliding_window/L(256|512|1024)/B8/d128'
PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so \
  --filter "$F" --ours auto,64x64x5,64x128x5,128x64x12,128x128x12 --methods ours --cuda-graph --time-budget 140 --out $OUT/tiles.json > /tmp/tiles.log 2>&1; echo "tiles rc=$?"
STOF_HOPPER_PERSISTENT=0 PYTHONUNBUFFERED=1 timeout 60 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so \
  --filter "$F" --ours auto --methods ours --cuda-graph --time-budget 50 --out $OUT/per_item.json > /tmp/pi.log 2>&1; echo "per item rc=$?"
python3 - <<PY | tee $OUT/tiles.txt
import json
T=json.load(open('$OUT/tiles.json'))['results']
P={r['name']:r['methods']['ours']['graph_latency']['median_us'] for r in json.load(open('$OUT/per_item.json'))['results'] if 'methods' in r}
for r in T:
  if 'methods' not in r: continue
  m=r['methods']; c=m['ours']['choice']
  s=' '.join(f"{k[5:]}={m[k]['graph_latency']['median_us']:.2f}" for k in m if k.startswith('ours_') and 'graph_latency' in m[k])
  print(f"{r['name']:30s} auto({c['block_m']}x{c['block_n']})={m['ours']['graph_latency']['median_us']:.2f} {s} per_item={P.get(r['name'],0):.2f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
