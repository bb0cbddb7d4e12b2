#!/usr/bin/env bash
# Device run 57 (session 8): (1) why STOF_HOPPER_SPLIT=2 hit an illegal address in run 56's
# mha_compare (C API, sliding window L256 B1 H12 d64) while the GPU test passed: the C++ bench
# path, then the python path without and with CUDA graphs, then compute-sanitizer on whichever
# fails. (2) A/B of pending-gpu/all-split's kernels (split off) against main's
# (.devdeps/main_kernels.tar), CUDA-graph replay, ours only, two alternating rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$PWD
export STOF_BUILD_TARGETS="stof stof_capi"
t0=$(date +%s)
rm -rf /tmp/src0 && mkdir -p /tmp/src0 && cp -r . /tmp/src0/ 2>/dev/null; rm -rf /tmp/src0/kernels && tar -xf .devdeps/main_kernels.tar -C /tmp/src0
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd /tmp/src0 && scripts/gpu-build /tmp/b0 > $OUT/build0.log 2>&1) || { tail -30 $OUT/build0.log; exit 1; }
echo "builds $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
D=$OUT/debug.txt
BENCH="bench mha --pattern sliding_window --seq 256 --batch 1 --heads 12 --no-counters"
echo "== C++ bench, split 2" >> $D
STOF_HOPPER_SPLIT=2 timeout 30 $S $BENCH --runs 50 >> $D 2>&1; echo "bench split2 rc=$?" | tee -a $D
STOF_HOPPER_SPLIT=2 timeout 30 $S $BENCH --runs 50 --block 64x64 --warps 5 >> $D 2>&1; echo "bench split2 64x64 rc=$?" | tee -a $D
echo "== compute-sanitizer C++ bench split 2" >> $D
STOF_HOPPER_SPLIT=2 timeout 60 compute-sanitizer --tool memcheck --print-limit 5 $S $BENCH --runs 50 --warmup 1 --block 64x64 --warps 5 >> $D 2>&1; echo "sanitizer bench rc=$?" | tee -a $D
cd tests/compare
C="python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so --filter sliding_window/L256/B1/d64 --ours auto --methods ours --time-budget 10 --verbose"
for g in "" "--cuda-graph"; do
  echo "== python split 2 $g" >> $D
  STOF_HOPPER_SPLIT=2 CUDA_LAUNCH_BLOCKING=1 PYTHONUNBUFFERED=1 timeout 40 $C $g --out /tmp/dbg.json >> $D 2>&1; echo "python split2 '$g' rc=$? $(grep -c 'illegal' $D)" | tee -a $D
done
if grep -q illegal $D; then
  echo "== compute-sanitizer python split 2 --cuda-graph" >> $D
  STOF_HOPPER_SPLIT=2 PYTHONUNBUFFERED=1 timeout 150 compute-sanitizer --tool memcheck --print-limit 5 $C --cuda-graph --out /tmp/dbg2.json > $OUT/sanitizer_py.txt 2>&1; echo "sanitizer python rc=$?" | tee -a $D
  grep -E "^=========" $OUT/sanitizer_py.txt | head -40 >> $D
fi
echo "debug done at $(( $(date +%s) - t0 )) s"
F='(bigbird|sliding_window|dilated)/L(512|1024|4096)/B(1|8)/d64|bigbird/L(1024|4096)/B8/d128'
for round in 1 2; do for v in b0 b; do
  PYTHONUNBUFFERED=1 timeout 70 python3 mha_compare.py --stof /tmp/$v/app/stof --lib /tmp/$v/kernels/libstof_capi.so \
    --filter "$F" --ours auto,64x64x4 --methods ours --cuda-graph --time-budget 50 \
    --out /tmp/ab_${v}_$round.json > /tmp/ab_${v}_$round.log 2>&1; echo "$v round $round rc=$?"
done; done
python3 - > $OUT/ab.txt <<PY
import json
def load(p): return {r['name']:r for r in json.load(open(p))['results'] if 'methods' in r}
runs={f'{v}_{k}':load(f'/tmp/ab_{v}_{k}.json') for v in ('b0','b') for k in (1,2)}
for key in ('ours','ours_64x64x4'):
  print(key, '  (main r1, r2 | branch r1, r2; median us, graph replay)')
  for n in runs['b0_1']:
    row=[runs[r][n]['methods'].get(key,{}).get('graph_latency',{}).get('median_us',0) if n in runs[r] else 0 for r in ('b0_1','b0_2','b_1','b_2')]
    print(f"  {n:30s} main {row[0]:8.2f} {row[1]:8.2f}  branch {row[2]:8.2f} {row[3]:8.2f}  ratio {min(row[:2])/max(min(row[2:]),1e-9):.3f}")
PY
cat $OUT/ab.txt
tar -cf $OUT/raw.tar -C /tmp ab_b0_1.json ab_b0_2.json ab_b_1.json ab_b_2.json ab_b0_1.log ab_b_1.log
echo "total $(( $(date +%s) - t0 )) s"
