#!/usr/bin/env bash
# Device run 38 (session 5): the final tree: python GPU tests (the HF forward captured in a
# CUDA graph), hf_compare with graphs on the stof side, every GPU test.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
R=$PWD
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 120 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" -v > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_tests.log | head -10
(cd $OUT && PYTHONUNBUFFERED=1 timeout 190 python3 $R/python/bench/hf_compare.py --out hf.json --md hf.md --time-budget 150 --layers 12 > hf.log 2>&1; echo "hf rc=$?"; grep -c "cuda_graph\|graph)" hf.log)
timeout 280 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/gpu_tests.log | head -8
