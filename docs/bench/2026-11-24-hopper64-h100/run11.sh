#!/usr/bin/env bash
# Device run 11 (session 3): the 64-row Hopper variant (64x64, 5 warps). Builds, runs the Hopper
# and dispatch GPU tests, then `stof bench mha` side by side: portable 64x64x4, Hopper 64x64x5,
# Hopper 128x64x12, 128x128x12 on fine-grained and dense masks.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 300 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*:GpuPreparedMha.*:GpuMhaBackend.*:*MhaChoice*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests.log | head -12
grep -E "HGMMA instructions" $OUT/tests.log
b() { timeout 60 /tmp/b/app/stof bench mha "$@" --runs 50 --no-counters 2>&1 | grep -E "^latency|error|rror:" | sed -E 's/ +/ /g' | cut -c1-40; }
for c in "bigbird 4096 8 12 64" "bigbird 2048 1 12 64" "longformer 4096 1 12 64" "sliding_window 4096 16 12 64" "bigbird 4096 8 12 128" "full 4096 4 12 64" "full 4096 4 12 128" "causal 2048 8 32 64" "dilated 2048 8 12 64"; do
  set -- $c
  a=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 64x64 --warps 4)
  h5=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 64x64 --warps 5)
  h5s=$(STOF_HOPPER_SCHEDULE=0 b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 64x64 --warps 5)
  h64=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 128x64 --warps 12)
  h128=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 128x128 --warps 12)
  echo "$c | 64x64x4 $a | 64x64x5 $h5 | 64x64x5 serial $h5s | 128x64x12 $h64 | 128x128x12 $h128"
done | tee $OUT/bench64.txt
