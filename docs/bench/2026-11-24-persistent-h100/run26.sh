#!/usr/bin/env bash
# Device run 26 (session 4): the final tree of the persistent scheduler: every GPU test, then
# the extended grid (CUDA graphs).
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 330 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/all_gpu_tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" $OUT/all_gpu_tests.log | head -12
cd tests/compare
PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 130 \
  --out $OUT/compare_extended_persistent.json > $OUT/compare_extended_persistent.log 2>&1; echo "extended rc=$?"; tail -4 $OUT/compare_extended_persistent.log
