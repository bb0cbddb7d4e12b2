#!/usr/bin/env bash
# Device run 24 (session 4): the paper and extended grids with the persistent grid as the
# default (the tree's tile model, re-verified), CUDA graphs; the sliding-window floor.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
for p in 1 0; do
  echo "sliding_window L4096 B16 d64 auto STOF_HOPPER_PERSISTENT=$p:"; STOF_HOPPER_PERSISTENT=$p timeout 60 /tmp/b/app/stof bench mha --pattern sliding_window --seq 4096 --batch 16 --heads 12 --dim 64 --runs 100 2>&1 | grep -E "^(kernel|latency|floor|DRAM|counters)" | cut -c1-170
done | tee $OUT/sliding_floor.txt
cd tests/compare
PYTHONUNBUFFERED=1 timeout 250 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 230 \
  --out $OUT/compare_paper_persistent.json > $OUT/compare_paper_persistent.log 2>&1; echo "paper rc=$?"; tail -5 $OUT/compare_paper_persistent.log
PYTHONUNBUFFERED=1 timeout 160 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 140 \
  --out $OUT/compare_extended_persistent.json > $OUT/compare_extended_persistent.log 2>&1; echo "extended rc=$?"; tail -5 $OUT/compare_extended_persistent.log
