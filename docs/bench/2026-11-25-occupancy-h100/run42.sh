#!/usr/bin/env bash
# Device run 42 (session 6): more warps per SM for the one-consumer (BLOCK_M 64) d 64 kernels.
# ncu (run 33) of 64 x 128 d 64 dense: 2.46 warps active / 0.72 eligible per scheduler, issue
# 49 %, MUFU ~40 % busy: latency-bound, not pipe-bound. Variant build b2 (traits patched here
# only): 64 x 128 at 3 CTAs/SM (2 stages, O staged in Q) and 64 x 64 at 4 CTAs/SM (2 stages).
# Same-process A/B by `stof bench mha` (CUDA events, reference check first), both schedules.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$PWD
export STOF_BUILD_TARGETS="stof"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
rm -rf /tmp/v && mkdir /tmp/v && cp -r $R/. /tmp/v/ && cd /tmp/v
H=kernels/attention_hopper/hopper_attention_params.h
sed -i 's/kWideProducer ? 1 : (kHeadDim == 64 \&\& kBlockN == 64 ? 3 : 2);/kWideProducer ? 1 : (kHeadDim == 64 ? (kBlockN == 64 ? 4 : 3) : 2);/' $H
sed -i 's/kWideProducer ? ((kHeadDim == 128 \&\& kBlockN == 128) ? 2 : 3) : (kHeadDim == 64 ? 3 : 2);/kWideProducer ? ((kHeadDim == 128 \&\& kBlockN == 128) ? 2 : 3) : 2;/' $H
grep -n "kCtasPerSm =\|kStages =" -A1 $H
export STOF_BUILD_TARGETS="stof stof_gpu_tests"
scripts/gpu-build /tmp/b2 > $OUT/build2.log 2>&1 || { tail -30 $OUT/build2.log; exit 1; }
tail -1 $OUT/build2.log
cd $R
for b in b b2; do
  o=$(find /tmp/$b -name 'hopper_attention_d64.cu.o' | head -1)
  cuobjdump -res-usage "$o" 2>&1 | grep -A1 "ILi64ELi.*ELi64E" | grep -E "REG|STACK" | sed "s/^/$b /"
done
bench() {  # label args...
  local label=$1; shift
  for b in b b2; do for s in 0 1; do
    r=$(STOF_HOPPER_SCHEDULE=$s /tmp/$b/app/stof bench mha "$@" --runs 100 --no-counters --json 2>&1)
    echo "$r" | python3 -c "import json,sys
t=sys.stdin.read()
try:
  j=json.loads(t); print('%-34s %-3s sched %d  %8.2f us  check %s' % ('$label','$b',$s,j['latency']['median_us'],j['check']['passed']))
except Exception as e: print('$label $b $s FAILED', t[:300])"
  done; done
}
{
bench "full L4096 B4 H12 64x128" --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block 64x128 --warps 5
bench "full L4096 B4 H12 64x64" --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block 64x64 --warps 5
bench "causal L4096 B4 H12 64x128" --pattern causal --seq 4096 --batch 4 --heads 12 --dim 64 --block 64x128 --warps 5
bench "full L1024 B8 H12 64x128" --pattern full --seq 1024 --batch 8 --heads 12 --dim 64 --block 64x128 --warps 5
bench "bigbird L4096 B8 H12 64x64" --pattern bigbird --seq 4096 --batch 8 --heads 12 --dim 64 --block 64x64 --warps 5
bench "slwin L1024 B16 H12 64x64" --pattern sliding_window --seq 1024 --batch 16 --heads 12 --dim 64 --block 64x64 --warps 5
bench "bigbird L512 B1 H12 64x64" --pattern bigbird --seq 512 --batch 1 --heads 12 --dim 64 --block 64x64 --warps 5
} 2>&1 | tee $OUT/ab.txt
timeout 150 /tmp/b2/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests_b2.log 2>&1; echo "b2 hopper tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests_b2.log | head -8
