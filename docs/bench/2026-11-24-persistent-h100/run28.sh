#!/usr/bin/env bash
# Device run 28 (session 4): is the step-3 loss at B1 L <= 512 the O staging tile? The tree as
# committed (/tmp/b) against the same tree with the output staged in Q's rows everywhere
# (/tmp/b2: kSeparateO false), the paper grid's B1 d64 rows, CUDA graphs, one run each.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cp -r . /tmp/src2 && sed -i 's/static constexpr bool kSeparateO = /static constexpr bool kSeparateO = false \&\& /' /tmp/src2/kernels/attention_hopper/hopper_attention_params.h
grep -n "kSeparateO = false" /tmp/src2/kernels/attention_hopper/hopper_attention_params.h | head -1
/tmp/src2/scripts/gpu-build /tmp/b2 >> $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd tests/compare
for v in b b2; do
  PYTHONUNBUFFERED=1 timeout 100 python3 mha_compare.py --stof /tmp/$v/app/stof --lib /tmp/$v/kernels/libstof_capi.so \
    --filter '/B1/d64' --ours auto --methods ours,flex --cuda-graph --time-budget 90 \
    --out $OUT/compare_b1_$v.json > $OUT/compare_b1_$v.log 2>&1; echo "$v rc=$?"; grep -E "geomean speedup over the faster" $OUT/compare_b1_$v.log | tail -1
done
