#!/usr/bin/env bash
# Device run 140 (H200, 2026-11-29, session 21): run 139's stamps put ~4 us between a tile's
# last chunk seeing its arrival and the end of its merge, the same with the compact merge as
# with the merge by warps, so the merge's loads are not what costs. This run swaps the
# __threadfence (fence.sc.gpu) pair around the arrival count for one acquire-release atomic
# between two barriers (kernels/common/last_arrival.cuh, also in the GEMM chain's split
# groups). Builds: "base" (HEAD: merge by warps, fences), "light" (merge by warps, the
# atomic), "new" (compact merge, the atomic; the working tree). 1) GPU tests on new: shapes,
# patterns, splits, decode, the chain; memcheck on the decode split and a split-group chain
# test; 2) `stof bench mha` side by side, base / light / new per shape, twice; 3) `stof bench
# chain` on FFN shapes with split groups, base and new.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
for v in base light; do
  mkdir -p /tmp/src_$v && tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C /tmp/src_$v
  cp s21tmp/old_hopper_attention_kernel.cuh /tmp/src_$v/kernels/attention_hopper/hopper_attention_kernel.cuh
done
cp s21tmp/old_hopper_split.cuh /tmp/src_base/kernels/attention_hopper/hopper_split.cuh
cp s21tmp/old_hopper_chain_kernel.cuh /tmp/src_base/kernels/gemm_chain_hopper/hopper_chain_kernel.cuh
cp s21tmp/oldlight_hopper_split.cuh /tmp/src_light/kernels/attention_hopper/hopper_split.cuh
for v in base light; do
  (STOF_BUILD_TARGETS="stof" /tmp/src_$v/scripts/gpu-build /tmp/b_$v > /tmp/build_$v.log 2>&1; echo "rc=$?" >> /tmp/build_$v.log) &
done
STOF_BUILD_TARGETS="stof stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log; wait; tail -2 /tmp/build_base.log /tmp/build_light.log
el "built"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 240 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*HopperShapes*:*HopperPatterns*:*Split*:*Decode*:*HopperChain*' > $OUT/run140_gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" $OUT/run140_gpu_tests.log | head -20
el "tests"
timeout 100 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='GpuHopperShapes.DecodeSplitAndPackingMatchReference' > $OUT/run140_memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/run140_memcheck.log | tail -2
el "memcheck"
shapes=(
  "--pattern causal --seq 32768 --q-len 1 --batch 1 --heads 32 --kv-heads 8 --head-dim 128"
  "--pattern causal --seq 131072 --q-len 1 --batch 1 --heads 32 --kv-heads 8 --head-dim 128"
  "--pattern causal --seq 8192 --q-len 1 --batch 8 --heads 32 --kv-heads 8 --head-dim 128"
  "--pattern causal --seq 32768 --q-len 1 --batch 4 --heads 32 --kv-heads 8 --head-dim 128"
  "--pattern sliding_window --width 2048 --seq 32768 --q-len 1 --batch 4 --heads 32 --kv-heads 8 --head-dim 128"
  "--pattern causal --seq 8192 --q-len 4 --batch 8 --heads 32 --kv-heads 8 --head-dim 128"
  "--pattern causal --seq 2048 --q-len 1 --batch 8 --heads 12 --head-dim 64"
  "--pattern causal --seq 8192 --q-len 1 --batch 8 --heads 16 --kv-heads 8 --head-dim 256"
  "--pattern causal --seq 32768 --q-len 1 --batch 1 --heads 8 --kv-heads 1 --head-dim 64"
  "--pattern bigbird --seq 4096 --batch 1 --heads 12 --head-dim 64"
)
for round in 1 2; do for s in "${shapes[@]}"; do for v in base light new; do
  bin=/tmp/b/app/stof; [ $v != new ] && bin=/tmp/b_$v/app/stof
  r=$(timeout 60 $bin bench mha $s --dtype bf16 --no-counters 2>&1 | grep -E "^latency" | head -1)
  echo "$v$round | $s | $r"
done; done; done | tee $OUT/run140_ab.txt | awk -F'|' '{print $1 $3}' | cut -c1-60
el "ab"
for v in base new; do
  bin=/tmp/b/app/stof; [ $v != new ] && bin=/tmp/b_$v/app/stof
  timeout 100 $bin bench chain --shape ffn:bert-small:1 --shape ffn:bert-base:1 --shape ffn:bert-base:16 --shape ffn:bert-large:16 --json > $OUT/run140_chain_$v.json 2>/tmp/chain_$v.err; echo "chain $v rc=$?"; tail -2 /tmp/chain_$v.err
done
el "total"
