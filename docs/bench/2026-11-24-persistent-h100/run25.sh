#!/usr/bin/env bash
# Device run 25 (session 4): the persistent grid by default, the producer handing each work
# item (tile, head, block lists) to the consumers through shared memory; no end handshake on a
# full grid. Hopper tests in both modes, `stof bench mha` per item / persistent, the paper grid.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" $OUT/tests.log | head -8
STOF_HOPPER_PERSISTENT=0 timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/tests_per_item.log 2>&1; echo "per-item tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/tests_per_item.log | head -8
timeout 60 compute-sanitizer --tool synccheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Persistent*' 2>&1 | tail -1
b() { timeout 30 /tmp/b/app/stof bench mha "$@" --runs 50 --no-counters 2>&1 | grep -E "^latency|^stof" | sed -E 's/ +/ /g' | cut -c9-24; }
for c in "bigbird 128 1 12 64 64x128x5" "bigbird 256 1 12 64 64x64x5" "bigbird 512 1 12 64 64x64x5" "sliding_window 1024 16 12 64 64x64x5" "sliding_window 4096 16 12 64 64x64x5" "bigbird 4096 16 12 64 64x64x5" "bigbird 2048 16 12 64 64x64x5" "longformer 4096 1 12 64 64x64x5" "causal 2048 8 32 64 64x64x5" "full 4096 4 12 64 64x128x5" "full 4096 4 12 128 128x128x12" "bigbird 4096 8 12 128 64x64x5"; do
  set -- $c
  blk=${6%x*}; w=${6##*x}
  a=$(STOF_HOPPER_PERSISTENT=0 b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block $blk --warps $w)
  p=$(b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block $blk --warps $w)
  echo "$c | per-item $a | persistent $p"
done | tee $OUT/bench_persistent.txt
cd tests/compare
PYTHONUNBUFFERED=1 timeout 230 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 210 \
  --out $OUT/compare_paper_persistent.json > $OUT/compare_paper_persistent.log 2>&1; echo "paper rc=$?"; tail -4 $OUT/compare_paper_persistent.log
