#!/usr/bin/env bash
# Device run 12 (session 3): the paper grid (96 configurations) with the 64-row Hopper tile in
# the automatic choice, beside the portable 64x64x4 and the fixed Hopper tiles, against Flex
# 128/64 and SDPA; CUDA graphs.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
cd tests/compare && PYTHONUNBUFFERED=1 timeout 480 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto,64x64x4,64x64x5,128x128x12 --methods ours,flex,sdpa --cuda-graph --time-budget 450 \
  --out $OUT/compare_paper.json > $OUT/compare_paper.log 2>&1; echo "compare rc=$?"; tail -40 $OUT/compare_paper.log
