#!/usr/bin/env bash
# Device run 19 (session 3): 64x128 tiles in the 64-row variant (d 64): the Hopper tests, then
# `stof bench mha` side by side with 64x64x5 and 128x128x12.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" $OUT/tests.log | head -8
b() { timeout 60 /tmp/b/app/stof bench mha "$@" --runs 50 --no-counters 2>&1 | grep -E "^latency|rror" | sed -E 's/ +/ /g' | cut -c9-22; }
for c in "full 4096 4 12" "full 2048 8 32" "full 1024 16 32" "causal 2048 8 32" "causal 4096 4 32" "bigbird 4096 8 12" "bigbird 2048 1 12" "longformer 4096 1 12" "sliding_window 4096 16 12" "dilated 2048 8 12" "bigbird 512 8 12"; do
  set -- $c
  a=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim 64 --block 64x64 --warps 5)
  n=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim 64 --block 64x128 --warps 5)
  w=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim 64 --block 128x128 --warps 12)
  echo "$c d64 | 64x64x5 $a | 64x128x5 $n | 128x128x12 $w"
done | tee $OUT/bench64x128.txt
