#!/usr/bin/env bash
# Device run 7: sliding window floor, dense profiles with the final default, whole models.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
S=/tmp/b/app/stof
for cfg in "" "--block 64x64 --warps 4" "--block 128x128 --warps 12"; do
  echo "sliding_window L4096 B16 d64 ${cfg:-auto}:"; timeout 60 $S bench mha --pattern sliding_window --seq 4096 --batch 16 --heads 12 --dim 64 $cfg --runs 100 2>&1 | grep -E "^(kernel|latency|floor|DRAM|counters)" | cut -c1-170
done | tee $OUT/sliding_floor.txt
for d in 64 128; do timeout 60 $S profile mha --pattern full --seq 4096 --batch 4 --heads 12 --dim $d > $OUT/profile_full_d$d.txt 2>&1; grep -E "^compute|tensor_op" $OUT/profile_full_d$d.txt; done
cd tests/compare && PYTHONUNBUFFERED=1 timeout 380 python3 model_compare.py --stof $S --models bert-base,bert-large --shapes 8x512,16x2048 \
  --masks bigbird,full --variants compile_sdpa,compile_flex --time-budget 330 --out $OUT/models.json --md $OUT/models.md > $OUT/models.log 2>&1; echo "models rc=$?"; tail -30 $OUT/models.log
