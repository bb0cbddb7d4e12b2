#!/usr/bin/env bash
# Device run 52 (session 7): run 51's extended grid had ours 3-15 % slower than run 44 on
# multi-wave grids while the peers stayed within 2-3 %. Now the consumers sleep in
# griddepcontrol.wait (no polling of q_full) and PDL is automatic only for one-wave grids.
# A/B in CUDA-graph replay: STOF_HOPPER_PDL=0 (off), 1 (always) and unset (auto) on the
# regressed multi-wave configurations and on B1 one-wave ones; the Hopper shape tests.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 60 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='GpuHopperAttentionShapes.*' > $OUT/tests.log 2>&1; echo "hopper shape tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests.log | head -6
cd tests/compare
for pdl in 0 1 auto; do
  if [ $pdl = auto ]; then unset STOF_HOPPER_PDL; else export STOF_HOPPER_PDL=$pdl; fi
  PYTHONUNBUFFERED=1 timeout 60 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
    --grid extended --filter '^(full/L1000/B16/d128|causal/L3000/B5/d64|causal/L4096/B4/d64|full/L2048/B8/d64|full/L1000/B16/d64|full/L4096/B4/d128)' \
    --ours auto --methods ours --cuda-graph --time-budget 40 --out $OUT/ab_ext_pdl$pdl.json > $OUT/ab_ext_pdl$pdl.log 2>&1; echo "ext pdl=$pdl rc=$?"
  PYTHONUNBUFFERED=1 timeout 40 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
    --filter '(bigbird|sliding_window)/L(128|512|4096)/B1/d64' \
    --ours auto --methods ours --cuda-graph --time-budget 25 --out $OUT/ab_b1_pdl$pdl.json > $OUT/ab_b1_pdl$pdl.log 2>&1; echo "b1 pdl=$pdl rc=$?"
done
python3 - <<PY
import json
for grid in ('ext','b1'):
  runs={k:{r['name']:r['methods']['ours']['graph_latency']['median_us'] for r in json.load(open(f'$OUT/ab_{grid}_pdl{k}.json'))['results'] if 'methods' in r} for k in ('0','1','auto')}
  for n in runs['0']:
    print(f"{n:34s} off {runs['0'][n]:8.2f} on {runs['1'].get(n,0):8.2f} auto {runs['auto'].get(n,0):8.2f}")
PY
