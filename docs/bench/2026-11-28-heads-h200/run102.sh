#!/usr/bin/env bash
# Device run 102 (H200, 2026-11-28): head sizes other than 64 and 128 on the Hopper kernel (issue
# 31). Builds the CLI, the C APIs and the GPU tests; the shape / Hopper / choice / prepared /
# split suites (GpuHopperShapes.HeadSizesMatchReference: d 8, 32, 80, 96, 192, 256; the decode
# parts forced at d 96 and 256), memcheck on the head-size test, every Python GPU test (head
# sizes through stof.attention; Phi-3-style d 96 and Gemma-style d 256 models under the HF
# backend), then tests/compare/shapes_compare.py on the head-size rows (--match head).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
T=/tmp/b/tests/gpu/stof_gpu_tests
timeout 240 $T --gtest_filter='*Shapes*:*Hopper*:MhaChoice*:*PreparedMha*:*Split*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | head -20
grep "\[ shapes \].* d\(8\|32\|80\|96\|192\|256\) " $OUT/gpu_tests.log | sort -t: -k2 -g | tail -3
echo "at $(( $(date +%s) - t0 )) s"
timeout 100 compute-sanitizer --tool memcheck $T --gtest_filter='GpuHopperShapes.HeadSizesMatchReference' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" $OUT/memcheck.log
PYTHONUNBUFFERED=1 timeout 200 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' -v > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|Error:" $OUT/python_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout $(( 560 - ($(date +%s) - t0) )) python3 tests/compare/shapes_compare.py --match head --json $OUT/shapes.json > $OUT/shapes.log 2>&1; echo "bench rc=$?"
tail -6 $OUT/shapes.log
echo "total $(( $(date +%s) - t0 )) s"
