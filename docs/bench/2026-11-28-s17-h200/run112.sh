#!/usr/bin/env bash
# Device run 112 (H200, 2026-11-28, session 17): masks per batch row / head in one launch
# (engine::MaskSet, DeviceBlockLayout::CreatePatterns, stof_prepare_patterns, stof.MaskSet):
# the GPU tests of the Hopper kernel's patterns, shapes and attention suites, every Python GPU
# shape test (stof.attention with [B, L, L] / [B, H, L, L] masks, the HF backend with a padding
# hole), the HGMMA count, then tests/compare/shapes_compare.py on the two new rows (varlen
# documents B8, local / global heads) and the causal L4096 row as a check against run 97.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "HGMMA: $(cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA)"
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Patterns*:*HopperShapes*:*HopperAttention*:MaskSet*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran|\[ patterns \]" $OUT/gpu_tests.log | head -30
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 200 python3 -m unittest discover -s python/tests -p 'test_gpu_shapes.py' > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU shape tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|Error|assert" $OUT/python_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
timeout 240 python3 tests/compare/shapes_compare.py --match "docs" --json $OUT/run112_varlen.json > $OUT/compare.log 2>&1; echo "compare rc=$?"
timeout 200 python3 tests/compare/shapes_compare.py --match "heads causal" --json $OUT/run112_heads.json >> $OUT/compare.log 2>&1; echo "compare rc=$?"
grep -vE "^\s*$" $OUT/compare.log | tail -14
echo "total $(( $(date +%s) - t0 )) s"
