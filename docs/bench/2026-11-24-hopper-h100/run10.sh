#!/usr/bin/env bash
# Device run 10: launch order (tile-major vs heavy first), with the Hopper tests.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*:GpuPreparedMha.*:GpuMhaBackend.*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED" $OUT/tests.log | head -5
b() { timeout 60 /tmp/b/app/stof bench mha "$@" --runs 100 --no-counters 2>&1 | grep -E "^latency" | sed -E 's/ +/ /g' | cut -c9-30; }
for c in "causal 2048 8 32 64" "causal 3000 5 32 64" "causal 4096 4 12 64" "causal 4096 4 12 128" "full 4096 4 12 64" "longformer 4096 1 12 64" "bigbird 4096 8 12 128" "document 4096 4 32 64"; do
  set -- $c
  extra=""; [ "$1" = document ] && extra="--docs 512 1024 256 768 1536"
  o0=$(STOF_HOPPER_ORDER=0 b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 128x128 --warps 12 $extra)
  o1=$(STOF_HOPPER_ORDER=1 b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 128x128 --warps 12 $extra)
  o0b=$(STOF_HOPPER_ORDER=0 b --pattern $1 --seq $2 --batch $3 --heads $4 --dim $5 --block 128x128 --warps 12 $extra)
  echo "$c: tile-major $o0 / heavy-first $o1 / tile-major again $o0b"
done | tee $OUT/order.txt
