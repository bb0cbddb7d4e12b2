#!/usr/bin/env bash
# Device run 132 (session 20): the Hopper GEMM chain past h = 256 (E tiles) and with split
# groups (an FFN over few tokens; issue 32): the chain GPU tests (old and new), memcheck on the
# split groups through the backend, `stof bench chain --ffn --json` (the FFN of every model
# preset at 1-32768 tokens: cuBLAS pair, the mhnk kernel, the Hopper chain) and G1-G12 again
# (the default launches must not move), the `stof` binary's HGMMA count; what the image holds
# for the studio's device run.
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
bash scripts/gpu-build /tmp/b2 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
el "built"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 200 /tmp/b2/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain*:GemmChain*' > $OUT/run132_gpu_tests.log 2>&1
echo "chain gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|^\[       OK|Failure|error" $OUT/run132_gpu_tests.log | head -40
el "tests done"
timeout 120 compute-sanitizer --tool memcheck /tmp/b2/tests/gpu/stof_gpu_tests \
  --gtest_filter='HopperChain.SplitGroupsThroughTheBackendAndMissingWorkspace' > /tmp/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" /tmp/memcheck.log | head -5
echo "HGMMA in stof: $(cuobjdump -sass /tmp/b2/app/stof | grep -c HGMMA)"
el "memcheck done"
timeout 200 /tmp/b2/app/stof bench chain --ffn --json > $OUT/run132_chain_ffn.json 2> /tmp/ffn.err; echo "bench ffn rc=$?"; tail -3 /tmp/ffn.err
el "ffn bench done"
timeout 120 /tmp/b2/app/stof bench chain > $OUT/run132_chain_g.txt 2>&1; echo "bench G rc=$?"; cat $OUT/run132_chain_g.txt
el "all done"
{ cat /tmp/image.txt; grep -E "ERROR SUMMARY" /tmp/memcheck.log; echo "HGMMA in stof: $(cuobjdump -sass /tmp/b2/app/stof | grep -c HGMMA)"; } > $OUT/run132_notes.txt
