#!/usr/bin/env bash
# Device run 37 (session 5): stof.hf builds the combined mask once per forward, on the host
# when there is no padding mask, so forwards capture in CUDA graphs: the python GPU tests,
# hf_compare again (now with graphs on the stof side), the paper grid of the final kernel.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 200 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" -v > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|skipped '" $OUT/python_gpu_tests.log | head -20
R=$PWD; (cd $OUT && PYTHONUNBUFFERED=1 timeout 200 python3 $R/python/bench/hf_compare.py --out hf.json --md hf.md --time-budget 150 --layers 12 > hf.log 2>&1; echo "hf rc=$?"; tail -3 hf.log)
cd tests/compare
PYTHONUNBUFFERED=1 timeout 200 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 150 \
  --out $OUT/compare_paper.json > $OUT/compare_paper.log 2>&1; echo "paper rc=$?"; tail -4 $OUT/compare_paper.log
