#!/usr/bin/env bash
# Device run 99: the host-side fixes after run 98 (no kernel change since run 97): a KV cache's
# plan prepared for its capacity and launched with fewer keys (C API stof_bind_views_keys; the
# HF backend's decode steps), the mask registry that lost an equal Mask (generate() with a
# sliding window), the HF backend recognising transformers' unpadded sliding-window mask on the
# device. Runs the shape / Hopper / prepared GPU tests, every Python GPU test, then the whole
# Hugging Face models again (python/bench/hf_llama_bench.py).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so PYTHONPATH=$PWD/python
timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Shapes*:*PreparedMha*:GpuHopperAttentionShapes.*' > $OUT/run99_gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" $OUT/run99_gpu_tests.log | head -8
PYTHONUNBUFFERED=1 timeout 120 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' -v > $OUT/run99_python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run99_python_tests.log | head -10
PYTHONUNBUFFERED=1 timeout 150 python3 python/bench/hf_llama_bench.py --out $OUT/run99_hf_llama.json > $OUT/run99_hf_llama.log 2>&1; echo "hf bench rc=$?"
tail -8 $OUT/run99_hf_llama.log
echo "total $(( $(date +%s) - t0 )) s"
