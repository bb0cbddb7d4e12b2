#!/usr/bin/env bash
# Device run 67 (session 9): issue 18's eager path (no dispatcher), thread-local error buffer,
# cached C API version. Python attention GPU tests, the in-process A/B (bridge_ab.py), and
# hf_compare's bridge part (python against stof bench mha).
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 60 python3 -m unittest discover -s python/tests -p "test_gpu_attention.py" > $OUT/python_gpu_attention.log 2>&1; echo "python attention tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_attention.log | head
PYTHONUNBUFFERED=1 timeout 60 python3 .devdeps/bridge_ab.py $OUT/bridge_ab.json; echo "ab rc=$?"
PYTHONUNBUFFERED=1 timeout 70 python3 python/bench/hf_compare.py --parts bridge --out $OUT/bridge.json --md $OUT/bridge.md --time-budget 60 > $OUT/bridge.log 2>&1; echo "bridge rc=$?"; tail -12 $OUT/bridge.md
echo "total $(( $(date +%s) - t0 )) s"
