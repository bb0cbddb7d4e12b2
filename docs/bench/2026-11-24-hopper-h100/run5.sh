#!/usr/bin/env bash
# Device run 5: the paper grid (96 configurations), auto (now with the Hopper tile model) vs
# the portable 64x64x4 and the Hopper 128x128x12, against Flex 128/64 and SDPA.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
cd tests/compare && PYTHONUNBUFFERED=1 timeout 500 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto,64x64x4,128x128x12 --methods ours,flex,sdpa --cuda-graph --time-budget 470 \
  --out $OUT/compare_paper.json > $OUT/compare_paper.log 2>&1; echo "compare rc=$?"; tail -32 $OUT/compare_paper.log
