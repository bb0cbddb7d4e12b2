#!/usr/bin/env bash
# Device run 44 (session 6): the committed tree (64-row kernels at 3-4 CTAs per SM, serial;
# tile estimate's tail as the busiest SM's items): Hopper suite, paper grid, extended grid.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "hopper tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" $OUT/tests.log | head -8
cd tests/compare
PYTHONUNBUFFERED=1 timeout 215 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 195 \
  --out $OUT/compare_paper.json > $OUT/compare_paper.log 2>&1; echo "paper rc=$?"; tail -4 $OUT/compare_paper.log
PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 125 \
  --out $OUT/compare_extended.json > $OUT/compare_extended.log 2>&1; echo "extended rc=$?"; tail -8 $OUT/compare_extended.log
