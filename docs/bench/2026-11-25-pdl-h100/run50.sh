#!/usr/bin/env bash
# Device run 50 (session 7): programmatic dependent launch in the Hopper kernel (the CTAs of a
# launch set up while the previous kernel drains) and the block columns loaded one block ahead.
# Hopper suite (with the new chained-launch test), SASS check, an A/B of PDL off/on on the
# B1 rows and a few large cases, then the paper grid against Flex and SDPA.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 130 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "hopper tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA|Dependent" $OUT/tests.log | head -10
cuobjdump -sass /tmp/b/kernels/libstof_capi.so 2>/dev/null | grep -c "ACQBULK\|griddepcontrol\|PREEXIT" | sed 's/^/sass griddep lines: /'
S=/tmp/b/app/stof
for c in "sliding_window 512 1 12 64" "bigbird 512 1 12 64" "bigbird 256 1 12 64" "bigbird 1024 8 12 64" "full 4096 4 12 64" "bigbird 512 8 12 128"; do
  set -- $c
  for pdl in 0 1 0 1; do
    r=$(STOF_HOPPER_PDL=$pdl $S bench mha --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --runs 200 --no-counters 2>&1 | grep -E "^latency" | awk '{print $2}')
    echo "$1 L$2 B$3 H$4 d$5 pdl=$pdl median_us=$r"
  done
done | tee $OUT/ab_bench.txt
cd tests/compare
for pdl in 0 1; do
STOF_HOPPER_PDL=$pdl PYTHONUNBUFFERED=1 timeout 60 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --filter '/B1/d64' --ours auto --methods ours --cuda-graph --time-budget 50 \
  --out $OUT/ab_b1_pdl$pdl.json > $OUT/ab_b1_pdl$pdl.log 2>&1; echo "ab b1 pdl=$pdl rc=$?"
done
python3 - <<PY
import json
a=json.load(open('$OUT/ab_b1_pdl0.json'))['results']; b={r['name']:r for r in json.load(open('$OUT/ab_b1_pdl1.json'))['results']}
for r in a:
  if r['name'] in b:
    x=r['methods']['ours']['graph_latency']['median_us']; y=b[r['name']]['methods']['ours']['graph_latency']['median_us']
    print(f"{r['name']:30s} pdl0 {x:7.2f} pdl1 {y:7.2f} ratio {x/y:5.2f}")
PY
PYTHONUNBUFFERED=1 timeout 215 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 195 \
  --out $OUT/compare_paper.json > $OUT/compare_paper.log 2>&1; echo "paper rc=$?"; tail -4 $OUT/compare_paper.log
