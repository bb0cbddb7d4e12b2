#!/usr/bin/env bash
# Device run 96: the first step of grouped heads / KV cache on the Hopper kernel. Builds the
# CLI, the C API and the GPU tests; runs the new shape tests and the whole Hopper / choice /
# prepared suite (regressions), memcheck on a packed, split decode case, the SASS HGMMA count
# and registers, the Python GPU tests of the new shapes and of stof.attention, then
# tests/compare/shapes_compare.py (CUDA graphs, against SDPA cuDNN / flash and Flex).
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
grep "\[ shapes \]" $OUT/gpu_tests.log | sort -t: -k2 -g | tail -3
{ cuobjdump -sass $T | grep -c HGMMA; cuobjdump -res-usage /tmp/b/kernels/CMakeFiles/stof_kernels_sm90a.dir/attention_hopper/hopper_attention_d128.cu.o | grep -E "Function|REG" | paste - - | grep -E "Split|_64ELi64ELi64E" | head -8; } > $OUT/sass.txt 2>&1
head -3 $OUT/sass.txt
timeout 100 compute-sanitizer --tool memcheck $T --gtest_filter='GpuHopperShapes.StridedViewsOfGroupedHeads' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" $OUT/memcheck.log
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -p 'test_gpu_shapes.py' -v > $OUT/python_tests.log 2>&1 < /dev/null; echo "python shape tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|Error|assert" $OUT/python_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout $(( 560 - ($(date +%s) - t0) )) python3 tests/compare/shapes_compare.py --json $OUT/shapes.json > $OUT/shapes.log 2>&1; echo "bench rc=$?"
tail -14 $OUT/shapes.log
echo "total $(( $(date +%s) - t0 )) s"
