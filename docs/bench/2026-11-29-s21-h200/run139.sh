#!/usr/bin/env bash
# Device run 139 (H200, 2026-11-29, session 21): where a split decode launch's time goes with
# the compact merge ("new") and with HEAD's merge by warps ("old"), stamped alike
# (stamp_tree.py; never landed): B 1 L_k 32768 32 over 8 heads d 128 (128 CTAs), MQA 8 over 1
# d 64 (16 CTAs; 4 % slower in run 138), 4 new rows B 8 L_k 8192 (16 rows a tile).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
d=docs/bench/2026-11-29-s21-h200
for v in old new; do
  mkdir -p /tmp/st_$v && tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C /tmp/st_$v
done
cp s21tmp/old_hopper_split.cuh /tmp/st_old/kernels/attention_hopper/hopper_split.cuh
cp s21tmp/old_hopper_attention_kernel.cuh /tmp/st_old/kernels/attention_hopper/hopper_attention_kernel.cuh
for v in old new; do python3 $d/stamp_tree.py /tmp/st_$v || exit 1; done
for v in old new; do
  (STOF_BUILD_TARGETS="stof" /tmp/st_$v/scripts/gpu-build /tmp/bs_$v > /tmp/bs_$v.log 2>&1; echo "rc=$?" >> /tmp/bs_$v.log) &
done
wait; tail -2 /tmp/bs_old.log /tmp/bs_new.log
el "built"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
shapes=(
  "a|--pattern causal --seq 32768 --q-len 1 --batch 1 --heads 32 --kv-heads 8 --head-dim 128|1048576"
  "b|--pattern causal --seq 32768 --q-len 1 --batch 1 --heads 8 --kv-heads 1 --head-dim 64|524288"
  "c|--pattern causal --seq 8192 --q-len 4 --batch 8 --heads 32 --kv-heads 8 --head-dim 128|1048576"
)
for s in "${shapes[@]}"; do IFS='|' read -r tag args bytes <<< "$s"
  for v in old new; do
    STOF_STAMPS=$OUT/stamps_${tag}_$v.txt timeout 60 /tmp/bs_$v/app/stof bench mha $args --dtype bf16 --no-counters 2>&1 | grep -E "^latency"
    echo "== $tag $v: $args"
    python3 $d/stamps11.py $OUT/stamps_${tag}_$v.txt $bytes
  done
done 2>&1 | tee $OUT/run139_stamps.txt
el "total"
