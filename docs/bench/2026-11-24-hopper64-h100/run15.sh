#!/usr/bin/env bash
# Device run 15 (session 3): dense masks side by side, the 64-row tile against 128x128x12 (and
# SDPA's dense kernels), then whole models with the new automatic choice.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
S=/tmp/b/app/stof
cd tests/compare
PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --filter 'full/' --ours 64x64x5,128x128x12 --methods ours,sdpa --cuda-graph --time-budget 120 \
  --out $OUT/compare_dense_tiles.json > $OUT/compare_dense_tiles.log 2>&1; echo "dense rc=$?"; grep -A4 "summary" $OUT/compare_dense_tiles.log | head -20
PYTHONUNBUFFERED=1 timeout 380 python3 model_compare.py --stof $S --models bert-base,bert-large --shapes 8x512,16x2048 \
  --masks bigbird,full --variants compile_sdpa,compile_flex --time-budget 330 --out $OUT/models.json --md $OUT/models.md > $OUT/models.log 2>&1; echo "models rc=$?"; tail -25 $OUT/models.log
