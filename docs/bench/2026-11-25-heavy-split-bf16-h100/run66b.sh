#!/usr/bin/env bash
# Device run 66b (session 9): the split rule. (1) STOF_HOPPER_SPLIT=0 / 1 / default on rows
# near the rule's threshold (stof bench mha, CUDA events, min of 2 x 200 runs); (2) the paper
# grid against Flex and SDPA with the defaults.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
for row in "longformer 1024 4" "bigbird 1024 4" "longformer 2048 4" "bigbird 2048 4" "longformer 4096 2" "bigbird 4096 2" "longformer 1024 8"; do
  set -- $row
  line="$1 L$2 B$3:"
  for sp in 0 1 d; do
    best=""
    for r in 1 2; do
      if [ $sp = d ]; then t=$($S bench mha --pattern $1 --seq $2 --batch $3 --heads 12 --dim 64 --runs 200 --no-counters | grep -E '^latency' | awk '{print $2}')
      else t=$(STOF_HOPPER_SPLIT=$sp $S bench mha --pattern $1 --seq $2 --batch $3 --heads 12 --dim 64 --runs 200 --no-counters | grep -E '^latency' | awk '{print $2}'); fi
      best="$best $t"
    done
    line="$line split=$sp$best"
  done
  echo "$line"
done | tee $OUT/split_rule_ab.txt
echo "at $(( $(date +%s) - t0 )) s"
cd tests/compare
PYTHONUNBUFFERED=1 timeout 200 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 185 --out $OUT/paper.json > $OUT/paper.log 2>&1; echo "paper rc=$?"; tail -9 $OUT/paper.log
echo "total $(( $(date +%s) - t0 )) s"
