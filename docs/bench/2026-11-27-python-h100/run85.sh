#!/usr/bin/env bash
# Device run 85: hf_compare's model part (BERT-base and GPT-2, 12 layers, stof / sdpa /
# flex_attention, CUDA graphs and CUDA events) with the step-9 kernel and the bound eager
# launches. Builds the CLI and the C API first.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 400 python3 python/bench/hf_compare.py --parts models --layers 12 --time-budget 330 \
  --out $OUT/run85_hf.json --md $OUT/run85_hf.md > $OUT/run85_hf.log 2>&1; echo "models rc=$?"; tail -20 $OUT/run85_hf.md
echo "total $(( $(date +%s) - t0 )) s"
