#!/usr/bin/env bash
# Device run 138 (H200, 2026-11-29, session 21): a decode tile's chunks leave compact partials
# (their rows' O, row-major fp32, and per row (max, sum)) and the whole warpgroup merges them:
# staged by cp.async in the free K/V ring on a full grid ("new"), or kBatch chunks in flight
# in registers ("reg": the same code with the ring never offered, what a persistent grid runs),
# against the fragment-order merge by warps of session 19 ("old", HEAD's two kernel files,
# which travel as s21tmp/old_*.cuh). 1) the shape / pattern / split GPU tests on the new code,
# compute-sanitizer memcheck on the decode split test; 2) `stof bench mha` (CUDA graphs) of
# the three builds side by side, twice, old/reg/new interleaved; 3) shapes_compare's decode rows
# (SDPA cuDNN / flash, Flex) on the new library; HGMMA counts.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
for v in old reg; do
  mkdir -p /tmp/src_$v && tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C /tmp/src_$v
done
cp s21tmp/old_hopper_split.cuh /tmp/src_old/kernels/attention_hopper/hopper_split.cuh
cp s21tmp/old_hopper_attention_kernel.cuh /tmp/src_old/kernels/attention_hopper/hopper_attention_kernel.cuh
sed -i 's|unsigned char\* const ring = p.dynamic == 0 ? sm.K(0) : nullptr;|unsigned char* const ring = nullptr;|' \
  /tmp/src_reg/kernels/attention_hopper/hopper_attention_kernel.cuh
grep -c "ring = nullptr;" /tmp/src_reg/kernels/attention_hopper/hopper_attention_kernel.cuh
for v in old reg; do
  (STOF_BUILD_TARGETS="stof stof_capi" /tmp/src_$v/scripts/gpu-build /tmp/b_$v > /tmp/build_$v.log 2>&1; echo "rc=$?" >> /tmp/build_$v.log) &
done
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log; wait; tail -2 /tmp/build_old.log /tmp/build_reg.log
el "built"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*HopperShapes*:*HopperPatterns*:*Split*:*Decode*' > $OUT/run138_gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" $OUT/run138_gpu_tests.log | head -20
el "tests"
timeout 150 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='GpuHopperShapes.DecodeSplitAndPackingMatchReference' > $OUT/run138_memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/run138_memcheck.log | tail -3
el "memcheck"
for f in /tmp/b_old/kernels/libstof_capi.so /tmp/b/kernels/libstof_capi.so; do echo "HGMMA $f: $(cuobjdump -sass $f | grep -c HGMMA)"; done
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
)
for round in 1 2; do for v in old reg new; do
  bin=/tmp/b/app/stof; [ $v != new ] && bin=/tmp/b_$v/app/stof
  for s in "${shapes[@]}"; do
    r=$(timeout 60 $bin bench mha $s --dtype bf16 --no-counters 2>&1 | grep -E "^latency" | head -1)
    echo "$v$round | $s | $r"
  done
done; done | tee $OUT/run138_ab.txt
el "ab"
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 240 python3 tests/compare/shapes_compare.py --only decode --json $OUT/run138_decode.json 2>&1 | grep -E "^row|decode" | tail -14
el "total"
