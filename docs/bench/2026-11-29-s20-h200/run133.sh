#!/usr/bin/env bash
# Device run 133 (session 20): run 132 again after two fixes (without a workspace the launcher
# takes one split group, as G1-G12's tests and callers expect; `stof bench chain` checks the
# Hopper chain's shape rules only, so its column is measured), then the whole GPU test binary
# as one process. Same snapshot method as run 132.
set -uo pipefail
cd "$(dirname "$0")/../../.."
# Session 20's device runs build a snapshot (s20tmp/tree.tgz: HEAD's tracked sources and the
# change under test) in /tmp/src, so work in progress elsewhere in the checkout stays out.
rm -rf /tmp/src && mkdir -p /tmp/src && tar -xzf s20tmp/tree.tgz -C /tmp/src && cp -r .devdeps /tmp/src/
D=$PWD/docs/bench/2026-11-29-s20-h200
cd /tmp/src
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ head -2 /etc/os-release; ldd --version | head -1; ldconfig -p | grep -E -c "libX11|libGL|libglfw|libxcb"; which Xvfb xvfb-run; } > /tmp/image.txt 2>&1
export STOF_BUILD_TARGETS="stof stof_gpu_tests"
bash scripts/gpu-build /tmp/b3 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
el "built"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 200 /tmp/b3/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain*:GemmChain*' > $OUT/run133_gpu_tests.log 2>&1
echo "chain gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[       OK|Failure|error" $OUT/run133_gpu_tests.log | head -40
el "tests done"
echo "HGMMA in stof: $(cuobjdump -sass /tmp/b3/app/stof | grep -c HGMMA)"
timeout 150 /tmp/b3/app/stof bench chain --ffn --json > $OUT/run133_chain_ffn.json 2> /tmp/ffn.err; echo "bench ffn rc=$?"; tail -3 /tmp/ffn.err
el "ffn bench done"
timeout 120 /tmp/b3/app/stof bench chain > $OUT/run133_chain_g.txt 2>&1; echo "bench G rc=$?"; cat $OUT/run133_chain_g.txt
el "benches done"
timeout $(( 585 - ($(date +%s) - t0) )) /tmp/b3/tests/gpu/stof_gpu_tests > /tmp/one.log 2>&1; echo "one process rc=$?"; tail -3 /tmp/one.log; grep -E "^\[  FAILED" /tmp/one.log | head
gzip -c /tmp/one.log > $OUT/run133_one_process.log.gz
el "all done"
{ cat /tmp/image.txt; echo "HGMMA in stof: $(cuobjdump -sass /tmp/b3/app/stof | grep -c HGMMA)"; } > $OUT/run133_notes.txt
