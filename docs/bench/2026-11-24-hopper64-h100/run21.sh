#!/usr/bin/env bash
# Device run 21 (session 3): the paper and extended grids with the 64x128 tile in the tile model
# (the figures of record for the final tree), CUDA graphs.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
cd tests/compare
PYTHONUNBUFFERED=1 timeout 200 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 180 \
  --out $OUT/compare_paper_64x128.json > $OUT/compare_paper_64x128.log 2>&1; echo "paper rc=$?"; tail -5 $OUT/compare_paper_64x128.log
PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 130 \
  --out $OUT/compare_extended_64x128.json > $OUT/compare_extended_64x128.log 2>&1; echo "extended rc=$?"; tail -5 $OUT/compare_extended_64x128.log
