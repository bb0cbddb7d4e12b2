#!/usr/bin/env bash
# Device run 23 (session 4): the persistent grid with the dynamic scheduler (atomic counter). Hopper tests with one CTA per item (default)
# and with STOF_HOPPER_PERSISTENT=1, then `stof bench mha` side by side (0 / 1), then
# synccheck on the persistent-grid test.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" $OUT/tests.log | head -8
STOF_HOPPER_PERSISTENT=1 timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests_persistent.log 2>&1; echo "persistent tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests_persistent.log | head -8
b() { timeout 30 /tmp/b/app/stof bench mha "$@" --runs 50 --no-counters 2>&1 | grep -E "^latency|^stof" | sed -E 's/ +/ /g' | cut -c9-24; }
for c in "sliding_window 128 16 12 64 64x64x5" "sliding_window 512 16 12 64 64x64x5" "bigbird 512 16 12 64 64x64x5" "sliding_window 1024 16 12 64 64x64x5" "longformer 1024 16 12 64 64x64x5" "sliding_window 4096 16 12 64 64x64x5" "bigbird 4096 8 12 64 64x64x5" "longformer 4096 1 12 64 64x64x5" "causal 2048 8 32 64 64x64x5" "full 4096 4 12 64 64x128x5" "full 2048 8 32 64 64x128x5" "full 4096 4 12 128 128x128x12" "causal 4096 4 12 128 128x128x12" "bigbird 1024 8 12 128 64x64x5" "bigbird 4096 8 12 128 64x64x5" "bigbird 2048 1 12 64 64x64x5" "sliding_window 2048 8 12 64 64x64x5"; do
  set -- $c
  blk=${6%x*}; w=${6##*x}
  a=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block $blk --warps $w)
  p=$(STOF_HOPPER_PERSISTENT=1 b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block $blk --warps $w)
  echo "$c | per-item $a | persistent $p"
done | tee $OUT/bench_persistent.txt
timeout 100 compute-sanitizer --tool synccheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Persistent*' > $OUT/synccheck.log 2>&1; echo "synccheck rc=$?"; tail -3 $OUT/synccheck.log
timeout 60 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter="*Persistent*" > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
