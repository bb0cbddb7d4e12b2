#!/usr/bin/env bash
# Device run 78 (after runs 76-77, on build /tmp/b, the staged-bitmap tree; machine warm):
# (1) dense L4096 B4 H12 profiles (`stof profile mha`, CUPTI: TFLOP/s, tensor pipe) at d 64
# and 128; (2) the extended grid against FlexAttention (128, 64) and SDPA, CUDA-graph replay;
# (3) the paper grid against Flex and SDPA a second time (run 77 was the first), all 96 rows.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
[ -x /tmp/b/app/stof ] || { echo "no build: run run76.sh first"; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for d in 64 128; do timeout 60 /tmp/b/app/stof profile mha --pattern full --seq 4096 --batch 4 --heads 12 --dim $d \
  > $OUT/profile_full_d$d.txt 2>&1; grep -iE "tflop|tensor" $OUT/profile_full_d$d.txt | head -4; done
cd tests/compare
PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 120 --out $OUT/compare_extended.json > $OUT/compare_extended.log 2>&1
echo "extended rc=$? at $(( $(date +%s) - t0 )) s"; tail -12 $OUT/compare_extended.log
PYTHONUNBUFFERED=1 timeout 300 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 270 --out $OUT/compare_paper_2.json > $OUT/compare_paper_2.log 2>&1
echo "paper rc=$? at $(( $(date +%s) - t0 )) s"; tail -8 $OUT/compare_paper_2.log
