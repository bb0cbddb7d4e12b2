#!/usr/bin/env bash
# Runs 100 and 101 (H200, 2026-11-28): the validation of per batch row key ranges (a padded batch
# in one launch): builds the C API and the GPU tests, runs the shape,
# Hopper and prepared suites (KeyRangesMatchPerRowReference among them), memcheck on the
# key-range test, every Python GPU test (test_key_ranges_one_launch; the HF padded forward now
# asserts one launch per layer), then python/bench/hf_padding_bench.py (the issue's BERT-base
# 16 x 512 padded case, and a left-padded Llama-style batch) against sdpa and Flex.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
T=/tmp/b/tests/gpu/stof_gpu_tests
timeout 200 $T --gtest_filter='GpuHopperShapes.*:HopperShapes.*:GpuHopperAttentionShapes.*:*PreparedMha*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" $OUT/gpu_tests.log | head -8
timeout 120 compute-sanitizer --tool memcheck $T --gtest_filter='GpuHopperShapes.KeyRangesMatchPerRowReference' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep "ERROR SUMMARY" $OUT/memcheck.log
PYTHONUNBUFFERED=1 timeout 200 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' -v > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_tests.log | head -10
PYTHONUNBUFFERED=1 timeout 150 python3 python/bench/hf_padding_bench.py --out $OUT/padding.json > $OUT/padding.log 2>&1; echo "padding bench rc=$?"
tail -6 $OUT/padding.log
echo "total $(( $(date +%s) - t0 )) s"
