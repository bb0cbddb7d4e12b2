#!/usr/bin/env bash
# Device run 16 (session 3): the final tile model (64-row rate 1.85 at d 128): the paper grid
# (auto beside 64x64x4) and the extended grid, CUDA graphs; these are the figures of record.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
cd tests/compare
PYTHONUNBUFFERED=1 timeout 300 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto,64x64x4 --methods ours,flex,sdpa --cuda-graph --time-budget 280 \
  --out $OUT/compare_paper_final.json > $OUT/compare_paper_final.log 2>&1; echo "paper rc=$?"; tail -12 $OUT/compare_paper_final.log
PYTHONUNBUFFERED=1 timeout 200 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 180 \
  --out $OUT/compare_extended_final.json > $OUT/compare_extended_final.log 2>&1; echo "extended rc=$?"; tail -8 $OUT/compare_extended_final.log
