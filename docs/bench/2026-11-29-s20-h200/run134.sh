#!/usr/bin/env bash
# Device run 134 (session 20): after run 133, the last CTA of a split tile loads its sums eight
# vectors a thread at a time before it zeroes them (run 133's loop waited one L2 round trip per
# vector: FFN over 128 tokens was slower with split groups than without); the chain GPU tests
# and `stof bench chain --ffn --json` again. Same snapshot method as run 132.
set -uo pipefail
cd "$(dirname "$0")/../../.."
rm -rf /tmp/src && mkdir -p /tmp/src && tar -xzf s20tmp/tree.tgz -C /tmp/src && cp -r .devdeps /tmp/src/
cd /tmp/src
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
export STOF_BUILD_TARGETS="stof stof_gpu_tests"
bash scripts/gpu-build /tmp/b4 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
el "built"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 100 /tmp/b4/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain*:GemmChain*' > $OUT/run134_gpu_tests.log 2>&1
echo "chain gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/run134_gpu_tests.log | head
timeout 150 /tmp/b4/app/stof bench chain --ffn --json > $OUT/run134_chain_ffn.json 2> /tmp/ffn.err; echo "bench ffn rc=$?"; tail -3 /tmp/ffn.err
el "all done"
