#!/usr/bin/env bash
# Device run 27 (session 4): the final tree: the layer-profile test three times (it failed once
# in run 26 on a CUPTI kernel count), the paper grid, then the Hugging Face comparison
# (issue 18) within a time budget.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
for i in 1 2 3; do timeout 30 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='LayerProfileGpu.BertSmallSegmentsAndLayer' 2>&1 | grep -E "^\[ +(OK|FAILED) +\]" | head -1; done | tee $OUT/layer_profile_retry.txt
(cd tests/compare && PYTHONUNBUFFERED=1 timeout 230 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 200 \
  --out $OUT/compare_paper_persistent.json > $OUT/compare_paper_persistent.log 2>&1; echo "paper rc=$?"; tail -4 $OUT/compare_paper_persistent.log)
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu
STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1 \
  timeout 180 python3 python/bench/hf_compare.py --out $OUT/hf.json --md $OUT/hf.md --time-budget 150 --layers 12 > $OUT/hf.log 2>&1; echo "hf rc=$?"; tail -6 $OUT/hf.log
