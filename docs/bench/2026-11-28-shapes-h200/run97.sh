#!/usr/bin/env bash
# Device run 97: run 96 again after its fixes (the KV-cache matrix's square case, the Python
# test helpers) and the decode changes (the split kernels' own traits: two CTAs per SM and a
# two-stage ring at d 128; partials only from warps with query rows; a two-pass merge). Builds
# the CLI, the C API and the GPU tests; the shape tests and the Hopper / choice / prepared /
# split suites, memcheck on a packed split case, the HGMMA count, every Python GPU test (the
# new shapes and HF models, stof.attention, the HF backend), then tests/compare/shapes_compare.py.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
T=/tmp/b/tests/gpu/stof_gpu_tests
timeout 240 $T --gtest_filter='*Shapes*:*Hopper*:MhaChoice*:*PreparedMha*:*Split*' > $OUT/run97_gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/run97_gpu_tests.log | head -20
grep "\[ shapes \]" $OUT/run97_gpu_tests.log | sort -t: -k2 -g | tail -3
echo "HGMMA in the test binary: $(cuobjdump -sass $T | grep -c HGMMA)"
timeout 150 compute-sanitizer --tool memcheck $T --gtest_filter='GpuHopperShapes.StridedViewsOfGroupedHeads' > $OUT/run97_memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" $OUT/run97_memcheck.log
PYTHONUNBUFFERED=1 timeout 240 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' -v > $OUT/run97_python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|Error:|skipped" $OUT/run97_python_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout $(( 560 - ($(date +%s) - t0) )) python3 tests/compare/shapes_compare.py --json $OUT/run97_shapes.json > $OUT/run97_shapes.log 2>&1; echo "bench rc=$?"
tail -11 $OUT/run97_shapes.log
echo "total $(( $(date +%s) - t0 )) s"
