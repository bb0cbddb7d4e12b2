#!/usr/bin/env bash
# Device run 79 (after runs 76-78, on build /tmp/b, the staged-bitmap tree; machine warm):
# (1) every GPU test but the Hopper suite (run 76 ran that one); (2) whole models against
# torch.compile + Flex and + SDPA, as run 15 (1 layer each side).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
[ -x /tmp/b/app/stof ] || { echo "no build: run run76.sh first"; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 170 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='-*Hopper*' > /tmp/gpu_rest.log 2>&1
echo "other gpu tests rc=$? at $(( $(date +%s) - t0 )) s"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" /tmp/gpu_rest.log | head -12 | tee $OUT/gpu_tests_rest_summary.txt
PYTHONUNBUFFERED=1 timeout 380 python3 tests/compare/model_compare.py --stof /tmp/b/app/stof --models bert-base,bert-large \
  --shapes 8x512,16x2048 --masks bigbird,full --variants compile_sdpa,compile_flex --time-budget 300 \
  --out $OUT/models.json --md $OUT/models.md > $OUT/models.log 2>&1
echo "models rc=$? at $(( $(date +%s) - t0 )) s"; tail -20 $OUT/models.log
