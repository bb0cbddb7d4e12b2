#!/usr/bin/env bash
# Device run 43 (session 6): the tree with run 42's change (64-row d 64 kernels at 4 / 3 CTAs
# per SM, serial): Hopper suite, paper grid. Meanwhile a variant build b2 (traits patched here
# only): the 64 x 64 d 128 kernel at 3 CTAs per SM with 1 stage (125 registers serial, no
# spill by ptxas -v), A/B against the tree's 2 CTAs, 2 stages, overlap.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$PWD
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
rm -rf /tmp/v && mkdir /tmp/v && cp -r $R/. /tmp/v/
H=/tmp/v/kernels/attention_hopper/hopper_attention_params.h
sed -i 's/kWideProducer ? 1 : (kHeadDim == 64 ? (kBlockN == 64 ? 4 : 3) : 2);/kWideProducer ? 1 : (kHeadDim == 64 ? (kBlockN == 64 ? 4 : 3) : 3);/; s/kWideProducer ? ((kHeadDim == 128 \&\& kBlockN == 128) ? 2 : 3) : 2;/kWideProducer ? ((kHeadDim == 128 \&\& kBlockN == 128) ? 2 : 3) : (kHeadDim == 128 ? 1 : 2);/' $H
grep -c "(kHeadDim == 128 ? 1 : 2)" $H
(cd /tmp/v && STOF_BUILD_TARGETS=stof scripts/gpu-build /tmp/b2 > $OUT/build2.log 2>&1) &
bpid=$!
timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "hopper tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" $OUT/tests.log | head -8
wait $bpid; tail -1 $OUT/build2.log
bench() {  # label args...
  local label=$1; shift
  for v in "b 3" "b 0" "b2 0"; do set -- $v "$@"; b=$1; s=$2; shift 2
    t=$(STOF_HOPPER_SCHEDULE=$s /tmp/$b/app/stof bench mha "$@" --runs 100 --no-counters --json 2>&1)
    echo "$t" | python3 -c "import json,sys
t=sys.stdin.read()
try:
  j=json.loads(t); print('%-34s %-3s sched %s  %8.2f us  check %s' % ('$label','$b','$s',j['latency']['median_us'],j['check']['passed']))
except Exception as e: print('$label $b $s FAILED', t[:300])"
  done
}
{
bench "bigbird L4096 B8 H12 d128" --pattern bigbird --seq 4096 --batch 8 --heads 12 --dim 128 --block 64x64 --warps 5
bench "full L4096 B4 H12 d128" --pattern full --seq 4096 --batch 4 --heads 12 --dim 128 --block 64x64 --warps 5
bench "slwin L2048 B8 H12 d128" --pattern sliding_window --seq 2048 --batch 8 --heads 12 --dim 128 --block 64x64 --warps 5
bench "longformer L1024 B8 H12 d128" --pattern longformer --seq 1024 --batch 8 --heads 12 --dim 128 --block 64x64 --warps 5
bench "dilated L512 B8 H12 d128" --pattern dilated --seq 512 --batch 8 --heads 12 --dim 128 --block 64x64 --warps 5
} 2>&1 | tee $OUT/ab_d128.txt
cd tests/compare
PYTHONUNBUFFERED=1 timeout 230 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 200 \
  --out $OUT/compare_paper.json > $OUT/compare_paper.log 2>&1; echo "paper rc=$?"; tail -4 $OUT/compare_paper.log
