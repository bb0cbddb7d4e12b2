#!/usr/bin/env bash
# Device run 34 (session 5): 64 x 128 d 64 (no O tile) stores O from registers and releases Q
# after its last GEMM, not after the store; A/B against e588b0d (O staged in Q) with
# `stof bench mha`, the Hopper suite, the extended grid.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
mkdir -p /tmp/old && tar -xf .devdeps/step3b.tar -C /tmp/old && cp -r .devdeps /tmp/old/
(export STOF_BUILD_TARGETS="stof"; /tmp/old/scripts/gpu-build /tmp/b_old > /tmp/build_old.log 2>&1; echo "old build rc=$?") &
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests.log | head -8
wait
b() { timeout 30 $1 bench mha "${@:2}" --runs 50 --no-counters 2>&1 | grep -E "^latency" | sed -E 's/ +/ /g' | cut -d' ' -f2; }
for c in "full 2048 8 32 64" "full 4096 4 32 64" "causal 2048 8 32 64" "causal 4096 4 32 64" "bigbird 4096 1 12 64" "longformer 4096 1 12 64" "full 1024 16 32 64"; do
  set -- $c
  a=$(b /tmp/b_old/app/stof --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 64x128 --warps 5)
  n=$(b /tmp/b/app/stof --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 64x128 --warps 5)
  a2=$(b /tmp/b_old/app/stof --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 64x128 --warps 5)
  echo "$c 64x128x5 | O in Q $a $a2 | direct $n"
done | tee $OUT/bench_direct_o.txt
cd tests/compare
PYTHONUNBUFFERED=1 timeout 200 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 130 \
  --out $OUT/compare_extended.json > $OUT/compare_extended.log 2>&1; echo "extended rc=$?"; tail -5 $OUT/compare_extended.log
