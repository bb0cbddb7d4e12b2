#!/usr/bin/env bash
# Device run 14 (session 3): the extended grid with the 64-row tile in the automatic choice;
# the sliding window floor; dense profiles; the layer-profile test three times (it failed once
# in run 13: a segment with no CUPTI kernel record); sanitizers on the 64-row variant.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
S=/tmp/b/app/stof
for i in 1 2 3; do timeout 60 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='LayerProfileGpu.*' 2>&1 | grep -E "Failure|OK|FAILED  \]|\[#" | head -4; done | tee $OUT/layer_profile_retry.txt
for tool in memcheck synccheck; do
  timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool $tool $S bench mha --pattern bigbird --seq 1000 --batch 2 --heads 3 --dim 64 --block 64x64 --warps 5 --runs 50 --no-counters > $OUT/sanitizer_$tool.log 2>&1
  timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool $tool $S bench mha --pattern causal --seq 1000 --batch 2 --heads 3 --dim 128 --block 64x64 --warps 5 --runs 50 --no-counters >> $OUT/sanitizer_$tool.log 2>&1
  echo "$tool: $(grep -E 'ERROR SUMMARY' $OUT/sanitizer_$tool.log | tr '\n' ' ')"
done
for cfg in "" "--block 64x64 --warps 5" "--block 64x64 --warps 4"; do
  echo "sliding_window L4096 B16 d64 ${cfg:-auto}:"; timeout 60 $S bench mha --pattern sliding_window --seq 4096 --batch 16 --heads 12 --dim 64 $cfg --runs 100 2>&1 | grep -E "^(kernel|latency|floor|DRAM|counters)" | cut -c1-170
done | tee $OUT/sliding_floor.txt
for d in 64 128; do for cfg in "--block 64x64 --warps 5" "--block 128x128 --warps 12"; do
  n=$(echo $cfg | tr -d ' -' ); timeout 60 $S profile mha --pattern full --seq 4096 --batch 4 --heads 12 --dim $d $cfg > $OUT/profile_full_d${d}_$n.txt 2>&1; echo "d$d $cfg: $(grep -E "^compute|tensor_op|latency" $OUT/profile_full_d${d}_$n.txt | tr '\n' ' ' | sed -E 's/ +/ /g' | cut -c1-300)"; done; done | tee $OUT/profile_dense.txt
cd tests/compare && PYTHONUNBUFFERED=1 timeout 260 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 230 \
  --out $OUT/compare_extended.json > $OUT/compare_extended.log 2>&1; echo "compare rc=$?"; tail -12 $OUT/compare_extended.log
