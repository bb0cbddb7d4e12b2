#!/usr/bin/env bash
# Device run 116 (H200, 2026-11-28, session 17): per batch row kept keys in the Hopper kernel
# (HopperAttentionParams::key_bits, stof_run_bound_keys, stof.attention(key_mask=...)), which
# stof.hf now uses for padding with holes (no host work): the Hopper shape / pattern GPU tests,
# the Python GPU shape and HF tests, then python/bench/hf_padding_bench.py --holes --fresh
# (stof.hf's mask caches cleared before every stof forward, as for padding never seen before).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python:$PWD/python/bench
timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='GpuHopperShapes.*:*Patterns*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -p 'test_gpu_[hs]*.py' > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU hf + shape tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
timeout 150 python3 python/bench/hf_padding_bench.py --holes --fresh --reps 10 --out $OUT/run116_holes_fresh.json > $OUT/holes_fresh.log 2>&1; echo "holes fresh rc=$?"
grep -E "^\{" $OUT/holes_fresh.log | tail -8
echo "total $(( $(date +%s) - t0 )) s"
