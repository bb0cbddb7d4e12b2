#!/usr/bin/env bash
# Device run 13 (session 3): every GPU test at the tree with the 64-row Hopper tile (and the
# merged option checks of issue 16), then compute-sanitizer memcheck and synccheck on the
# 64-row variant.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 400 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/all_gpu_tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|SKIPPED" $OUT/all_gpu_tests.log | head -20
for tool in memcheck synccheck; do
  timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool $tool /tmp/b/app/stof bench mha --pattern bigbird --seq 1000 --batch 2 --heads 3 --dim 64 --block 64x64 --warps 5 --runs 2 --no-counters > $OUT/sanitizer_$tool.log 2>&1
  timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool $tool /tmp/b/app/stof bench mha --pattern causal --seq 1000 --batch 2 --heads 3 --dim 128 --block 64x64 --warps 5 --runs 2 --no-counters >> $OUT/sanitizer_$tool.log 2>&1
  echo "$tool: $(grep -E 'ERROR SUMMARY' $OUT/sanitizer_$tool.log | tr '\n' ' ')"
done
