#!/usr/bin/env bash
# Device run 36 (session 5): the block's mask words (column, bitmap rows) loaded before the
# wait for S, A/B against 1141d63: B1 d64 rows and a few larger workloads; the Hopper suite.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
mkdir -p /tmp/old && tar -xf .devdeps/step3b.tar -C /tmp/old && cp -r .devdeps /tmp/old/
(export STOF_BUILD_TARGETS="stof stof_capi"; /tmp/old/scripts/gpu-build /tmp/b_old > /tmp/build_old.log 2>&1; echo "old build rc=$?") &
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests.log | head -8
wait
cd tests/compare
for v in b_old b b_old b; do
  PYTHONUNBUFFERED=1 timeout 60 python3 mha_compare.py --stof /tmp/$v/app/stof --lib /tmp/$v/kernels/libstof_capi.so \
    --filter '/B1/d64' --ours auto --methods ours --cuda-graph --time-budget 30 \
    --out /tmp/c_$v.json > /tmp/c_$v.log 2>&1; echo "$v rc=$?"; cp /tmp/c_$v.json $OUT/compare_b1_$v.json 2>/dev/null
  [ $v = b ] && cp /tmp/c_b.json $OUT/compare_b1_b_2.json
done
cd ../..
b() { timeout 30 $1 bench mha "${@:2}" --runs 50 --no-counters 2>&1 | grep -E "^latency" | sed -E 's/ +/ /g' | cut -d' ' -f2; }
for c in "bigbird 4096 8 12 64 64x64 5" "sliding_window 4096 16 12 64 64x64 5" "longformer 4096 1 12 64 64x128 5" "full 4096 4 12 64 64x128 5" "causal 2048 8 32 64 64x128 5" "bigbird 4096 8 12 128 64x64 5" "full 4096 4 16 128 128x128 12"; do
  set -- $c
  a=$(b /tmp/b_old/app/stof --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block $6 --warps $7)
  n=$(b /tmp/b/app/stof --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block $6 --warps $7)
  a2=$(b /tmp/b_old/app/stof --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block $6 --warps $7)
  n2=$(b /tmp/b/app/stof --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block $6 --warps $7)
  echo "$c | old $a $a2 | prefetch $n $n2"
done | tee $OUT/bench_prefetch.txt
