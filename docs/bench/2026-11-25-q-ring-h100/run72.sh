#!/usr/bin/env bash
# Device run 72 (session 10): the Q-ring kernel on the paper grid (all 96 rows: --time-budget
# 270) and the extended grid, ours (auto) against FlexAttention (128, 64) and SDPA, CUDA-graph
# replay, one process per grid.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cd tests/compare
PYTHONUNBUFFERED=1 timeout 300 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 270 --out $OUT/run72_compare_paper.json > $OUT/run72_compare_paper.log 2>&1
echo "paper rc=$? at $(( $(date +%s) - t0 )) s"; tail -12 $OUT/run72_compare_paper.log
PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 120 --out $OUT/run72_compare_extended.json > $OUT/run72_compare_extended.log 2>&1
echo "extended rc=$? at $(( $(date +%s) - t0 )) s"; tail -12 $OUT/run72_compare_extended.log
