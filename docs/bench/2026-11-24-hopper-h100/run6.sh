#!/usr/bin/env bash
# Device run 6: the automatic choice (pingpong default, refitted tile model) on the extended
# and the paper grids, against Flex 128/64 and SDPA (mask and dense kernels).
set -uo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
cd tests/compare
PYTHONUNBUFFERED=1 timeout 200 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 180 \
  --out $OUT/compare_extended.json > $OUT/compare_extended.log 2>&1; echo "extended rc=$?"; tail -12 $OUT/compare_extended.log
PYTHONUNBUFFERED=1 timeout 300 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto,64x64x4 --methods ours,flex,sdpa --cuda-graph --time-budget 280 \
  --out $OUT/compare_paper.json > $OUT/compare_paper.log 2>&1; echo "paper rc=$?"; tail -16 $OUT/compare_paper.log
