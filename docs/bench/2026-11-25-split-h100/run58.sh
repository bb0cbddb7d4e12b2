#!/usr/bin/env bash
# Device run 58 (session 8): pending-gpu/all-split with the capture fix (the kernel is chosen
# after the merge's workspace). (1) The Hopper GPU tests, the new SplitLaunchesInCudaGraphs
# among them. (2) A/B in CUDA-graph replay, ours only, two rounds: main's kernels (b0), this
# tree (b), this tree with the bitmap prefetch off everywhere (b1). (3) STOF_HOPPER_SPLIT 1/2/3
# on short rows and longformer L4096 B1.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
rm -rf /tmp/src0 /tmp/src1 && mkdir -p /tmp/src0 /tmp/src1 && cp -r . /tmp/src0/ 2>/dev/null; cp -r . /tmp/src1/ 2>/dev/null
rm -rf /tmp/src0/kernels && tar -xf .devdeps/main_kernels.tar -C /tmp/src0
sed -i 's/static constexpr bool kPrefetchBitmap = .*/static constexpr bool kPrefetchBitmap = false;/' /tmp/src1/kernels/attention_hopper/hopper_attention_params.h
grep -c "kPrefetchBitmap = false" /tmp/src1/kernels/attention_hopper/hopper_attention_params.h
STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export STOF_BUILD_TARGETS="stof stof_capi"
(cd /tmp/src0 && scripts/gpu-build /tmp/b0 > /tmp/build0.log 2>&1) || { tail -30 /tmp/build0.log; exit 1; }
(cd /tmp/src1 && scripts/gpu-build /tmp/b1 > /tmp/build1.log 2>&1) || { tail -30 /tmp/build1.log; exit 1; }
echo "builds $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 140 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/hopper_tests.log 2>&1; rc=$?; echo "hopper tests rc=$rc"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|SplitLaunches" $OUT/hopper_tests.log | head -12
echo "tests done at $(( $(date +%s) - t0 )) s"
cd tests/compare
F='bigbird/L(512|1024|4096)/B(1|8)/d64|sliding_window/L(512|4096)/B1/d64|bigbird/L4096/B8/d128'
for round in 1 2; do for v in b0 b b1; do
  PYTHONUNBUFFERED=1 timeout 45 python3 mha_compare.py --stof /tmp/$v/app/stof --lib /tmp/$v/kernels/libstof_capi.so \
    --filter "$F" --ours auto --methods ours --cuda-graph --time-budget 35 \
    --out /tmp/ab_${v}_$round.json > /tmp/ab_${v}_$round.log 2>&1; echo "$v round $round rc=$?"
done; done
echo "ab done at $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] && for sp in 1 2 3; do
  STOF_HOPPER_SPLIT=$sp PYTHONUNBUFFERED=1 timeout 40 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
    --filter '/L(256|512|1024)/B1/d64|longformer/L4096/B1/d64|/L256/B8/d128' --ours auto --methods ours --cuda-graph --time-budget 28 \
    --out /tmp/split$sp.json > /tmp/split$sp.log 2>&1; echo "split $sp rc=$? $(grep -c illegal /tmp/split$sp.log)"
done
python3 - > $OUT/results.txt <<PY
import json
def load(p):
  try: return {r['name']:r for r in json.load(open(p))['results'] if 'methods' in r}
  except Exception as e: return {}
def g(r, n): return r.get(n,{}).get('methods',{}).get('ours',{}).get('graph_latency',{}).get('median_us',0)
runs={f'{v}_{k}':load(f'/tmp/ab_{v}_{k}.json') for v in ('b0','b','b1') for k in (1,2)}
print('A/B, ours auto, graph replay median us: main r1 r2 | tree r1 r2 | tree without bitmap prefetch r1 r2')
for n in runs['b0_1']:
  row=[g(runs[r],n) for r in ('b0_1','b0_2','b_1','b_2','b1_1','b1_2')]
  print(f"  {n:28s} main {row[0]:7.2f} {row[1]:7.2f} | tree {row[2]:7.2f} {row[3]:7.2f} | noprefetch {row[4]:7.2f} {row[5]:7.2f} | main/tree {min(row[0:2])/max(min(row[2:4]),1e-9):.3f} main/noprefetch {min(row[0:2])/max(min(row[4:6]),1e-9):.3f}")
sp={s:load(f'/tmp/split{s}.json') for s in (1,2,3)}
print('STOF_HOPPER_SPLIT 1 / 2 / 3, ours auto, graph replay median us')
for n in sp[1]:
  print(f"  {n:28s} " + "  ".join(f"S{s} {g(sp[s],n):7.2f}" for s in (1,2,3)) + "  choice " + sp[1][n]['methods']['ours']['choice']['text'][:40])
PY
cat $OUT/results.txt
cd /tmp && tar -cf $OUT/raw.tar ab_*.json split*.json split*.log ab_b_1.log
echo "total $(( $(date +%s) - t0 )) s"
