#!/usr/bin/env bash
# Device run 135 (session 20): the Hopper chain's kH 256 kernel with an 8-stage ring instead of
# 4 (one CTA per SM: twice the bytes in flight for a chunk's k steps), side by side with the
# 4-stage build in one run: the chain GPU tests on the new build, then `stof bench chain` on a
# few FFN shapes over few tokens and G3 / G4 / G6 (the kH 256 shapes of Table II), old, new.
# Snapshots (HEAD, HEAD + the change) built in /tmp/old and /tmp/new.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
for v in old new; do
  rm -rf /tmp/$v && mkdir -p /tmp/$v && tar -xzf s20tmp/tree_$v.tgz -C /tmp/$v && cp -r .devdeps /tmp/$v/
done
(cd /tmp/old && STOF_BUILD_TARGETS=stof bash scripts/gpu-build /tmp/bo > /tmp/bo.log 2>&1; echo "old rc=$?" >> /tmp/bo.log) &
(cd /tmp/new && STOF_BUILD_TARGETS="stof stof_gpu_tests" bash scripts/gpu-build /tmp/bn > /tmp/bn.log 2>&1; echo "new rc=$?" >> /tmp/bn.log)
wait; tail -1 /tmp/bo.log; tail -1 /tmp/bn.log
el "built"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 60 /tmp/bn/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain*' > $OUT/run135_gpu_tests.log 2>&1
echo "chain gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/run135_gpu_tests.log | head
S=ffn:bert-small:1,ffn:bert-base:1,ffn:bert-base:16,ffn:bert-base:128,ffn:bert-large:1,ffn:bert-large:128,G3,G4,G6
for v in old new; do
  b=/tmp/bo; [ $v = new ] && b=/tmp/bn
  timeout 70 $b/app/stof bench chain --shape $S --json > $OUT/run135_chain_$v.json 2>/tmp/$v.err; echo "$v bench rc=$?"; tail -2 /tmp/$v.err
  el "$v bench done"
done
